"""The arrays a body hands the kernels have the same numba types whatever the body: a
one-link body used to pass its hierarchy's read-only public views, which numba types apart
from writeable arrays, so the traversal core (``_core.traverse``, ~2-5 minutes to compile)
was compiled once more per read-only combination (issue 15: the warm-up compiled it three
times). These checks fail on that code."""
import numba
import numpy as np
import pytest

from cdcore import shapes
from cdcore.articulated.body import ArticulatedBody, Link


def _types(body):
    return [numba.typeof(a) for a in (body.nodes_f, body.nodes_i, body.prim_order, body.vertices, body.faces)]


@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere", "obb_sphere"])
def test_one_link_body_passes_the_types_of_a_chain(bv):
    mesh = shapes.icosphere(0.3, 1)
    one = ArticulatedBody([Link("a", mesh, -1, np.eye(4))], mesh_bv=bv)
    two = ArticulatedBody([Link("a", mesh, -1, np.eye(4)), Link("b", mesh, 0, np.eye(4))], mesh_bv=bv)
    assert _types(one) == _types(two)
    one.set_link_vertices(0, mesh.vertices * 1.1)  # a deforming link: refit, arrays fetched again
    assert _types(one) == _types(two)
    np.testing.assert_array_equal(one.nodes_f, one.bvhs[0].nodes_f)  # and they follow the refit
