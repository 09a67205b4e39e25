"""The MJCF loader's contact filter (``mjcf._pair_filter``: geom mask, link mask, MuJoCo's
default-disabled link pairs and weld-parent pairs) against the plain G x G loop it replaced:
the same arrays and lists on the generated models (contype/conaffinity masks, ``<exclude>``,
an explicit ``<pair>``, with and without the parent filter), the Shadow hand and a
``<replicate>`` of many bodies with excludes. (The loop spent a minute on a 145-byte
``<replicate>`` of 6,000 bodies.)"""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from cdcore.articulated import load_mjcf  # noqa: E402
from mjcfgen import write_crossarms  # noqa: E402

SHADOW = "/work/shared/robots/mjcf/shadow_hand/hand/reach.xml"


def reference_filter(robot, m):
    """(geom_mask, link_mask, default_disabled, weld_parent_pairs) by the plain loops."""
    dsbl = mujoco.mjtDisableBit
    gid = np.array([g.id for g in robot.geoms], dtype=np.int64)
    G = len(gid)
    body = m.geom_bodyid[gid].astype(np.int64)
    weld = m.body_weldid[body].astype(np.int64)
    weld_parent = m.body_weldid[m.body_parentid[weld]].astype(np.int64)
    ct, ca = m.geom_contype[gid].astype(np.int64), m.geom_conaffinity[gid].astype(np.int64)
    filterparent = not (m.opt.disableflags & int(dsbl.mjDSBL_FILTERPARENT))
    sig = set(m.exclude_signature.tolist())
    explicit = set()
    pos = {int(g): n for n, g in enumerate(gid)}
    for g1, g2 in zip(m.pair_geom1.tolist(), m.pair_geom2.tolist()):
        if g1 in pos and g2 in pos:
            explicit |= {(pos[g1], pos[g2]), (pos[g2], pos[g1])}
    gl = robot._geom_link
    mask = np.zeros((G, G), dtype=bool)
    pf = np.zeros((G, G), dtype=bool)
    for i in range(G):
        for k in range(G):
            same = weld[i] == weld[k]
            parent = weld[i] != 0 and weld[k] != 0 and (weld[i] == weld_parent[k] or weld[k] == weld_parent[i])
            bits = ((ct[i] & ca[k]) | (ct[k] & ca[i])) != 0
            excl = ((int(min(body[i], body[k])) << 16) + int(max(body[i], body[k]))) in sig
            dynamic = not same and bits and not excl and not (parent and filterparent)
            mask[i, k] = (dynamic or (i, k) in explicit) and gl[i] != gl[k] and i != k
            pf[i, k] = filterparent and parent and not same and (i, k) not in explicit
    if m.opt.disableflags & int(dsbl.mjDSBL_CONTACT):
        mask[:] = False
    L = robot.n_links
    link_ok = np.zeros((L, L), dtype=bool)
    link_parent = np.zeros((L, L), dtype=bool)
    for i in range(G):
        for k in range(G):
            if gl[i] != gl[k]:
                link_ok[gl[i], gl[k]] |= mask[i, k]
                link_parent[gl[i], gl[k]] |= pf[i, k]
    wp = {(a, b) for a in range(L) for b in range(a + 1, L) if link_parent[a, b] and not link_ok[a, b]}
    names, geo = robot.link_names, robot.has_geometry
    dd = [(names[a], names[b]) for a in range(L) for b in range(a + 1, L)
          if geo[a] and geo[b] and not link_ok[a, b] and (a, b) not in wp]
    return mask, link_ok, dd, wp


def _replicate(path, n):
    with open(path, "w") as fh:
        fh.write(f'<mujoco><worldbody><body name="base"><geom type="box" size=".2 .2 .2"/>'
                 f'<body name="p" pos="0 0 .3"><joint/><geom type="sphere" size=".1"/></body></body>'
                 f'<body name="q" pos="0 .3 0"><joint/><geom type="sphere" size=".1" contype="2" conaffinity="2"/></body>'
                 f'<replicate count="{n}" offset="0.15 0 0"><body name="b"><joint/><geom type="sphere" size=".1"/>'
                 f'<body name="c" pos="0 0 .2"><joint/><geom type="capsule" size=".03 .1" contype="2" '
                 f'conaffinity="3"/></body></body></replicate></worldbody>'
                 f'<contact><exclude body1="base" body2="q"/><exclude body1="p" body2="q"/></contact></mujoco>')
    return path


def _models(tmp_path):
    out = [write_crossarms(str(tmp_path)), write_crossarms(str(tmp_path), False, "nofp.xml"),
           _replicate(str(tmp_path / "rep.xml"), 40)]
    if os.path.isfile(SHADOW):
        out.append(SHADOW)
    return out


def test_the_pair_filter_equals_the_plain_loops(tmp_path):
    for path in _models(tmp_path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = load_mjcf(path)
        m = mujoco.MjModel.from_xml_path(path)
        mask, link_ok, dd, wp = reference_filter(robot, m)
        assert np.array_equal(robot.geom_mask, mask), path
        assert np.array_equal(robot.link_mask, link_ok), path
        assert robot.default_disabled == dd, path
        assert robot._weld_parent_pairs == wp, path
        assert mask.any(), path
