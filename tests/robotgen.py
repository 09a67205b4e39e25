"""A small robot of our own for tests that must run without the shared robots: a URDF
written to a temporary directory with procedurally generated STL / OBJ / PLY meshes.

twoarm: a base plate; a left arm (revolute, an STL authored at twice its size and scaled
by 0.5) and a right arm (continuous, behind a geometry-less fixed mount; a cylinder and a
sphere merged) turning in the same plane so they cross; a slider on each arm (prismatic,
the right one a mimic of the left: -1 * left + 0.05) with OBJ / PLY meshes; a fixed box
on the base. Every joint type, a mimic, link merging, origins, scales and package://.
"""
import os
import textwrap

import numpy as np

from cdcore import shapes

PACKAGE = "twoarm_description"


def _export(mesh, path):
    import trimesh
    trimesh.Trimesh(mesh.vertices, mesh.faces, process=False).export(path)


def write_twoarm(root, package_uri=True) -> str:
    """Write the package under ``root`` (``root/twoarm_description/...``); returns the
    URDF path. ``package_uri``: mesh filenames as package:// URIs (else relative)."""
    pkg = os.path.join(root, PACKAGE)
    os.makedirs(os.path.join(pkg, "meshes"), exist_ok=True)
    os.makedirs(os.path.join(pkg, "urdf"), exist_ok=True)
    arm = shapes.transformed(shapes.capsule_link(length=0.6, thickness=0.08, n_around=12, n_len=4),
                             np.diag([1.0, 1.0, 1.0, 1.0]))
    # authored at twice the size, along +x from the joint
    v = arm.vertices.copy()
    v[:, 0] -= v[:, 0].min()
    _export(type(arm)(v, arm.faces), os.path.join(pkg, "meshes", "arm_x2.stl"))
    _export(shapes.box((0.05, 0.05, 0.08)), os.path.join(pkg, "meshes", "slider.obj"))
    _export(shapes.icosphere(0.03, 2), os.path.join(pkg, "meshes", "knob.ply"))

    def uri(name):
        return f"package://{PACKAGE}/meshes/{name}" if package_uri else f"../meshes/{name}"

    urdf = textwrap.dedent(f"""\
        <?xml version="1.0"?>
        <robot name="twoarm">
          <link name="base">
            <collision><origin xyz="0 0 0.025"/><geometry><box size="0.5 0.3 0.05"/></geometry></collision>
          </link>
          <link name="left_arm">
            <collision><geometry><mesh filename="{uri('arm_x2.stl')}" scale="0.5 0.5 0.5"/></geometry></collision>
          </link>
          <link name="mount"/>
          <link name="right_arm">
            <collision><origin xyz="0.15 0 0" rpy="0 1.5707963267948966 0"/>
              <geometry><cylinder radius="0.02" length="0.3"/></geometry></collision>
            <collision><origin xyz="0.3 0 0"/><geometry><sphere radius="0.035"/></geometry></collision>
          </link>
          <link name="left_slider">
            <collision><geometry><mesh filename="{uri('slider.obj')}"/></geometry></collision>
          </link>
          <link name="right_slider">
            <collision><origin xyz="0 0 0.02" rpy="0.3 0 0"/>
              <geometry><mesh filename="{uri('knob.ply')}" scale="1 1 1.5"/></geometry></collision>
          </link>
          <link name="post">
            <collision><origin xyz="0 0 0.1"/><geometry><box size="0.04 0.04 0.2"/></geometry></collision>
          </link>
          <joint name="left_turn" type="revolute">
            <parent link="base"/><child link="left_arm"/>
            <origin xyz="0.12 0 0.08" rpy="0 0 0.2"/><axis xyz="0 0 1"/>
            <limit lower="-2.5" upper="2.5" effort="1" velocity="1"/>
          </joint>
          <joint name="mount_fixed" type="fixed">
            <parent link="base"/><child link="mount"/><origin xyz="-0.12 0 0.06"/>
          </joint>
          <joint name="right_turn" type="continuous">
            <parent link="mount"/><child link="right_arm"/>
            <origin xyz="0 0 0.02" rpy="0.05 0 0"/><axis xyz="0 0.1 1"/>
          </joint>
          <joint name="left_slide" type="prismatic">
            <parent link="left_arm"/><child link="left_slider"/>
            <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
            <limit lower="0" upper="0.1" effort="1" velocity="1"/>
          </joint>
          <joint name="right_slide" type="prismatic">
            <parent link="right_arm"/><child link="right_slider"/>
            <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
            <limit lower="-0.05" upper="0.1" effort="1" velocity="1"/>
            <mimic joint="left_slide" multiplier="-1" offset="0.05"/>
          </joint>
          <joint name="post_fixed" type="fixed">
            <parent link="base"/><child link="post"/><origin xyz="0 0.1 0.05"/>
          </joint>
        </robot>
        """)
    path = os.path.join(pkg, "urdf", "twoarm.urdf")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(urdf)
    return path
