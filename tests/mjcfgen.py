"""MJCF robots of our own for tests (no shared files needed): written to a temporary
directory with procedurally generated meshes.

``write_crossarms``: a base (box + plane floor) carrying two arms that swing in crossing
planes so their geoms meet often. Every joint type (hinge with ``ref`` and an off-origin
anchor, slide, ball, free, two joints in one body, an unlimited hinge and slide), every
collision geom type (sphere, capsule by ``fromto``, box, cylinder, ellipsoid, an STL mesh
authored off-centre that MuJoCo re-centres, an inline ``<mesh vertex=..>``), a plane,
``<default>`` classes with ``childclass``, ``euler`` angles in degrees, a body welded to
its parent (no joint), a body without geoms inside a chain, ``contype``/``conaffinity``
masks, ``<exclude>`` and an explicit ``<pair>``; ``filterparent=False`` writes
``<flag filterparent="disable"/>``.
"""
import os
import textwrap

import numpy as np

from cdcore import shapes


def _export(mesh, path):
    import trimesh
    trimesh.Trimesh(mesh.vertices, mesh.faces, process=False).export(path)


def write_crossarms(root, filterparent: bool = True, name: str = "crossarms.xml") -> str:
    """Write the model (and its mesh) under ``root``; returns the XML path."""
    os.makedirs(os.path.join(root, "meshes"), exist_ok=True)
    # a lumpy convex-ish mesh authored away from its own centre of mass
    knob = shapes.transformed(shapes.jittered_icosphere(0.04, 0.004, 2, seed=3),
                              np.array([[1, 0, 0, 0.3], [0, 1, 0, -0.2], [0, 0, 1, 0.5], [0, 0, 0, 1.0]]))
    _export(knob, os.path.join(root, "meshes", "knob.stl"))
    # a non-convex mesh (an L): its hull differs from it
    ell = shapes.merge([shapes.box((0.12, 0.03, 0.03), center=(0.06, 0, 0)),
                        shapes.box((0.03, 0.03, 0.12), center=(0.0, 0, 0.06))])
    _export(ell, os.path.join(root, "meshes", "ell.stl"))
    flag = "" if filterparent else '<flag filterparent="disable"/>'
    xml = textwrap.dedent(f"""\
        <mujoco model="crossarms">
          <compiler angle="degree" meshdir="meshes" autolimits="true"/>
          <option>{flag}</option>
          <default>
            <geom contype="1" conaffinity="1"/>
            <default class="arm">
              <joint axis="0 1 0" range="-80 80"/>
              <geom type="capsule" size="0.025"/>
            </default>
            <default class="visual"><geom contype="0" conaffinity="0"/></default>
          </default>
          <asset>
            <mesh name="knob" file="knob.stl"/>
            <mesh name="ell" file="ell.stl"/>
            <mesh name="tet" vertex="0 0 0  0.06 0 0  0 0.06 0  0 0 0.06"/>
          </asset>
          <worldbody>
            <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.5"/>
            <body name="base" pos="0 0 0.05">
              <geom name="base_box" type="box" size="0.15 0.15 0.05"/>
              <geom name="base_vis" class="visual" type="sphere" size="0.3"/>
              <body name="mount" pos="0 0 0.05"/>
              <body name="left_upper" pos="-0.1 0 0.05" childclass="arm">
                <joint name="left_shoulder" pos="0 0 0.02" ref="10"/>
                <joint name="left_twist" type="hinge" axis="0 0 1" range="-30 30"/>
                <geom name="left_upper_geom" fromto="0 0 0 0.05 0 0.3"/>
                <body name="left_elbow_link" pos="0.05 0 0.3">
                  <body name="left_fore" euler="0 30 0">
                    <joint name="left_elbow" pos="0 0 0" axis="0 1 0.2" range="-120 120"/>
                    <joint name="left_slide" type="slide" axis="0 0 1" range="0 0.05"/>
                    <geom name="left_fore_cyl" type="cylinder" size="0.03 0.08" pos="0 0 0.08"/>
                    <geom name="left_tip" type="sphere" size="0.04" pos="0 0 0.2" contype="2" conaffinity="2"/>
                    <body name="left_hand" pos="0 0 0.22">
                      <joint name="left_wrist" type="ball" range="0 60" pos="0 0 0.01"/>
                      <geom name="left_hand_ell" type="ellipsoid" size="0.05 0.03 0.02"/>
                      <body name="left_welded" pos="0 0 0.05">
                        <geom name="left_welded_box" type="box" size="0.02 0.02 0.02"/>
                      </body>
                    </body>
                  </body>
                </body>
              </body>
              <body name="right_upper" pos="0.1 0 0.05" childclass="arm">
                <joint name="right_shoulder" axis="1 0 0" pos="0 0 0.01"/>
                <geom name="right_upper_geom" fromto="0 0 0 -0.05 0 0.3"/>
                <body name="right_fore" pos="-0.05 0 0.3">
                  <joint name="right_elbow" axis="1 0 0" range="-120 120" ref="-15"/>
                  <joint name="right_spin" axis="0 0 1" limited="false"/>
                  <geom name="right_knob" type="mesh" mesh="knob" pos="0 0 0.1"/>
                  <geom name="right_ell" type="mesh" mesh="ell" pos="0 0 0.15" euler="0 -90 0"/>
                  <geom name="right_fore_box" type="box" size="0.02 0.03 0.1" pos="0 0 0.1" contype="2"
                        conaffinity="0"/>
                  <body name="right_rail" pos="0 0 0.22">
                    <joint name="right_rail" type="slide" axis="1 0 0" limited="false"/>
                    <geom name="right_tet" type="mesh" mesh="tet"/>
                  </body>
                </body>
              </body>
            </body>
            <body name="puck" pos="0.0 0.1 0.45" euler="20 0 0">
              <freejoint name="puck_free"/>
              <geom name="puck_geom" type="cylinder" size="0.08 0.02"/>
            </body>
          </worldbody>
          <contact>
            <exclude body1="left_hand" body2="right_fore"/>
            <pair geom1="left_tip" geom2="right_fore_box"/>
          </contact>
        </mujoco>
        """)
    path = os.path.join(root, name)
    with open(path, "w") as fh:
        fh.write(xml)
    return path


def assert_poses_equal_mujoco(m, d, robot, q, atol=1e-12):
    """``robot``'s link and geom poses at ``q`` equal MuJoCo's ``mj_kinematics`` of ``d`` (whose
    ``qpos`` the caller has set for ``q``)."""
    import mujoco
    mujoco.mj_kinematics(m, d)
    P = robot.fk(q)
    np.testing.assert_allclose(P[:, :3, 3], d.xpos[robot.body_ids], atol=atol)
    np.testing.assert_allclose(P[:, :3, :3], d.xmat[robot.body_ids].reshape(-1, 3, 3), atol=atol)
    G = robot.geom_poses(q)
    ids = [g.id for g in robot.geoms]
    np.testing.assert_allclose(G[:, :3, 3], d.geom_xpos[ids], atol=atol)
    np.testing.assert_allclose(G[:, :3, :3], d.geom_xmat[ids].reshape(-1, 3, 3), atol=atol)
