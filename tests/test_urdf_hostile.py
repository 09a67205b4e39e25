"""load_urdf against hostile URDFs: mesh amplification (one file named by many elements),
non-finite mimic parameters, primitives below the kernels' range, and mimic chains.

Every URDF and mesh is written into tmp_path here."""
import numpy as np
import pytest
import trimesh

import cdcore.mesh
from cdcore import shapes
from cdcore.articulated import URDFError, load_urdf
from cdcore.articulated import urdf as urdf_mod

BOX = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'


def _write(tmp_path, xml, name="r.urdf"):
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n{xml}')
    return str(p)


# ---- 1. one mesh file named by many elements -----------------------------------------

def _box_stl(tmp_path):
    """A 12-triangle box mesh file."""
    trimesh.creation.box(extents=[0.1, 0.2, 0.3]).export(str(tmp_path / "m.stl"))
    return "m.stl"


def _amplified(tmp_path, n, links=1):
    """``links`` links holding ``n`` <collision> elements each, all naming m.stl (with
    scales and spellings that differ; the file is the same)."""
    f = _box_stl(tmp_path)
    spell = [f, f"./{f}", str(tmp_path / f)]
    col = "".join(f'<collision><origin xyz="{0.01 * k} 0 0"/><geometry><mesh filename="{spell[k % 3]}" '
                  f'scale="{1 + k % 2} 1 1"/></geometry></collision>' for k in range(n))
    names = [f"l{i}" for i in range(links)]
    joints = "".join(f'<joint name="j{i}" type="fixed"><parent link="l0"/><child link="{names[i]}"/></joint>'
                     for i in range(1, links))
    return _write(tmp_path, '<robot name="amp">' + "".join(f'<link name="{ln}">{col}</link>' for ln in names)
                  + joints + "</robot>")


def _count_calls(monkeypatch, module, attr):
    calls = []
    real = getattr(module, attr)

    def counting(*a, **kw):
        calls.append(a)
        return real(*a, **kw)

    monkeypatch.setattr(module, attr, counting)
    return calls


def test_a_mesh_named_by_many_elements_is_read_once(tmp_path, monkeypatch):
    p = _amplified(tmp_path, 40)
    reads = _count_calls(monkeypatch, urdf_mod, "load_mesh")
    b = load_urdf(p)
    assert len(reads) == 1  # the old code read m.stl 40 times
    mesh = b.bvhs[0].mesh
    assert mesh.n_faces == 40 * 12
    # each copy keeps its own origin and scale (odd k: 2x in x); x reaches 0.39 + 0.1 (k = 39)
    # (STL stores float32)
    assert mesh.vertices[:, 0].max() == pytest.approx(0.39 + 0.1, abs=1e-7)
    assert mesh.vertices[:, 0].min() == pytest.approx(0.01 - 0.1, abs=1e-7)  # k = 1, scaled 2x


@pytest.mark.parametrize("n, links", [(50, 1), (5, 10)])
def test_robot_over_the_triangle_limit_is_refused_before_any_copy(tmp_path, monkeypatch, n, links):
    """600 triangles against a limit of 100: in one link (old code: a plain ValueError from
    the merge, after every copy was made) or spread over 10 links of 60 (old code: loaded)."""
    p = _amplified(tmp_path, n, links)
    monkeypatch.setattr(cdcore.mesh, "MAX_TRIANGLES", 100)
    placed = _count_calls(monkeypatch, shapes, "transformed")
    with pytest.raises(URDFError, match=r"m\.stl brings the robot to 108 triangles; at most 100") as e:
        load_urdf(p)
    # the element that crosses the limit: the 9th of the one link, or the 4th of the second
    assert ("<link name='l0'> <collision> #8" if links == 1 else "<link name='l1'> <collision> #3") in str(e.value)
    assert placed == []  # refused before any element was placed (nor merged)


def test_primitive_triangles_count_towards_the_limit(tmp_path, monkeypatch):
    sph = '<collision><geometry><sphere radius="0.1"/></geometry></collision>'
    p = _write(tmp_path, f'<robot name="s"><link name="a">{sph * 3}</link></robot>')
    monkeypatch.setattr(cdcore.mesh, "MAX_TRIANGLES", 3000)  # 3 icospheres of 1,280
    with pytest.raises(URDFError, match=r"<link name='a'> <collision> #2: its primitive brings the robot to 3,840"):
        load_urdf(p, primitives="tessellate")


# ---- 2. non-finite mimic parameters, primitives below the kernels' range ---------------

def _three_links(c_geometry=BOX, mimic=""):
    return (f'<robot name="r"><link name="a">{BOX}</link><link name="b">{BOX}</link><link name="c">{c_geometry}</link>'
            '<joint name="j1" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0"/>'
            '<limit lower="0" upper="1"/></joint>'
            '<joint name="j2" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0.3 0 0"/>'
            f'<limit lower="0" upper="1"/>{mimic}</joint></robot>')


@pytest.mark.parametrize("attrs", ['multiplier="nan"', 'offset="nan"', 'multiplier="inf"', 'offset="-inf"'])
def test_nonfinite_mimic_parameters_name_the_joint(tmp_path, attrs):
    p = _write(tmp_path, _three_links(mimic=f'<mimic joint="j1" {attrs}/>'))
    with pytest.raises(URDFError, match=r"<joint name='j2'>: <mimic> multiplier and offset must be finite"):
        load_urdf(p)


def test_overflowing_mimic_chain_names_the_joint(tmp_path):
    xml = _three_links(mimic='<mimic joint="j1" multiplier="1e200"/>').replace(
        "</robot>", '<link name="d"/><joint name="j3" type="prismatic"><parent link="c"/><child link="d"/>'
        '<limit lower="0" upper="1"/><mimic joint="j2" multiplier="1e200"/></joint></robot>')
    with pytest.raises(URDFError, match=r"<joint name='j3'>: its <mimic> chain's multiplier inf"):
        load_urdf(_write(tmp_path, xml))


@pytest.mark.parametrize("geometry", ['<box size="1e-80 1e-80 1e-80"/>', '<sphere radius="1e-90"/>',
                                      '<cylinder radius="1e-80" length="1e-80"/>'])
@pytest.mark.parametrize("primitives", ["exact", "tessellate"])
def test_primitives_below_the_kernels_range_name_the_link(tmp_path, geometry, primitives):
    p = _write(tmp_path, _three_links(c_geometry=f"<collision><geometry>{geometry}</geometry></collision>"))
    with pytest.raises(URDFError, match=r"<link name='c'> <collision> #0: .*below 1e-72"):
        load_urdf(p, primitives=primitives)


# ---- 3. joint_values of a mimic of a mimic -----------------------------------------------

def test_joint_values_follow_mimic_chains(tmp_path):
    def joint(name, parent, child, extra=""):
        return (f'<joint name="{name}" type="prismatic"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="0.3 0 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1"/>{extra}</joint>')
    xml = ('<robot name="r">' + "".join(f'<link name="{n}">{BOX}</link>' for n in "rabcz")
           + joint("ja", "r", "a") + joint("jb", "a", "b", '<mimic joint="ja" multiplier="2" offset="0.05"/>')
           + joint("jc", "b", "c", '<mimic joint="jb" multiplier="3" offset="-0.2"/>') + joint("jz", "c", "z")
           + "</robot>")
    b = load_urdf(_write(tmp_path, xml))
    assert b.joint_names == ["ja", "jz"]
    q = np.array([0.1, 0.5])
    v = b.joint_values(q)
    jb = 2 * 0.1 + 0.05
    jc = 3 * jb - 0.2  # 0.55 (the old code: 3 * q[-1] - 0.2 = 1.3, from jz)
    assert v == pytest.approx({"ja": 0.1, "jb": jb, "jc": jc, "jz": 0.5}, abs=1e-12)
    # and the values are the ones FK uses: prismatic joints along x, 0.3 apart
    poses = b.fk_all(q)
    assert poses["c"][0, 3] == pytest.approx(0.9 + 0.1 + jb + jc, abs=1e-12)
    assert poses["z"][0, 3] == pytest.approx(1.2 + 0.1 + jb + jc + 0.5, abs=1e-12)
