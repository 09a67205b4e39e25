"""The flat node layout of cdcore's hierarchies, for readers of ``BVH.nodes_f`` / ``nodes_i``
and of traces (the app, notebooks): the public names of ``cdcore._layout``.

``nodes_i`` (n, 4) int32: LEFT, RIGHT (-1: a leaf), START, COUNT into ``prim_order``.
``nodes_f`` (n, N_FCOLS) float64: box centre at C0..C0+2, half-extents at E0..E0+2, axes
(3x3 row-major, axes are columns) at R0..R0+8, sphere centre at S0..S0+2, radius at SR,
the descend volume at SIZE. Children always come after their parent.
"""
from ._layout import (AXIS_NONE, AXIS_SPHERE, C0, COUNT, E0, KDOP_KINDS, KIND_AABB, KIND_KDOP6, KIND_KDOP14,
                      KIND_KDOP18, KIND_KDOP26, KIND_OBB, KIND_OBB_SPHERE, KIND_SPHERE, LEFT, N_AXES, N_FCOLS,
                      N_ICOLS, OUT_LEAF_HIT, OUT_LEAF_MISS, OUT_OVERLAP, OUT_SEPARATED, R0, RIGHT, S0, SIZE,
                      SPLIT_A, SPLIT_B, SPLIT_NONE, SR, START, TEST_SAT6, TEST_SAT15, TEST_SLAB, TEST_SPHERE,
                      TEST_SPHERE5, TEST_SPHERE15)

__all__ = ["AXIS_NONE", "AXIS_SPHERE", "C0", "COUNT", "E0", "KDOP_KINDS", "KIND_AABB", "KIND_KDOP6", "KIND_KDOP14",
           "KIND_KDOP18", "KIND_KDOP26", "KIND_OBB", "KIND_OBB_SPHERE", "KIND_SPHERE", "LEFT", "N_AXES", "N_FCOLS",
           "N_ICOLS", "OUT_LEAF_HIT", "OUT_LEAF_MISS", "OUT_OVERLAP", "OUT_SEPARATED", "R0", "RIGHT", "S0", "SIZE",
           "SPLIT_A", "SPLIT_B", "SPLIT_NONE", "SR", "START", "TEST_SAT6", "TEST_SAT15", "TEST_SLAB", "TEST_SPHERE",
           "TEST_SPHERE5", "TEST_SPHERE15"]
