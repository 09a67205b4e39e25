"""load_urdf against hostile URDFs: mesh amplification (one file named by many elements),
non-finite mimic parameters, primitives below the kernels' range, and mimic chains.

Every URDF and mesh is written into tmp_path here."""
import numpy as np
import pytest

from cdcore.articulated import load_urdf

BOX = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'


def _write(tmp_path, xml, name="r.urdf"):
    p = tmp_path / name
    p.write_text(f'<?xml version="1.0"?>\n{xml}')
    return str(p)


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
