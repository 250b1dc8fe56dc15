"""URDF files Pinocchio loads are read here too, with a warning where we are lenient (issue 13).

Reference: ``pinocchio.buildModelFromUrdf`` on the same text (mass matrix and
joint count), and the warning that names the file and line.
"""

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.parsers.urdf.reader import read_urdf
from robot_refs import assert_matches_pinocchio

pin = pytest.importorskip("pinocchio")

LINK = ('<link name="{n}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>{extra}</link>')


def robot(extra_link="", limit='lower="-1" upper="1"', transmission="", head=""):
    return (f'{head}<robot name="r">{LINK.format(n="base", extra="")}{LINK.format(n="arm", extra=extra_link)}'
            f'<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
            f'<limit {limit} effort="1" velocity="1"/></joint>{transmission}</robot>')


CASES = {
    "plane_collision": (robot('<collision><geometry><plane normal="0 0 1"/></geometry></collision>'), "plane"),
    "cdf_collision": (robot('<collision><geometry><cdf uri="x.cdf"/></geometry></collision>'), "cdf"),
    "missing_collision_mesh": (robot('<collision><geometry><mesh filename="package://nowhere/m.stl"/>'
                                     '</geometry></collision>'), "not found"),
    "mesh_scale_of_four": (robot('<visual><geometry><mesh filename="m.stl" scale="1 1 1 1"/></geometry></visual>'),
                           "4th"),
    "limit_lower_above_upper": (robot(limit='lower="1" upper="-1"'), "lower 1 > upper -1"),
    "text_reduction": (robot(transmission='<transmission name="t"><type>x</type><joint name="j"/>'
                                          '<actuator name="m"><mechanicalReduction>fast</mechanicalReduction>'
                                          '</actuator></transmission>'), "reduction 1 used"),
    "whitespace_before_declaration": (robot(head='\n  <?xml version="1.0"?>\n'), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pinocchio_loads_it_and_so_do_we(case, tmp_path, caplog):
    text, warning = CASES[case]
    # a visual mesh that exists (never loaded; a binary STL of no triangles, so that it is a mesh file)
    (tmp_path / "m.stl").write_bytes(b"m".ljust(80, b" ") + bytes(4))
    path = tmp_path / "r.urdf"
    path.write_text(text)
    pm = pin.buildModelFromUrdf(str(path))
    a = read_urdf(path)
    assert len([j for j in a.joints if j.type != "fixed"]) == pm.nv == 1
    if warning is not None:
        assert warning in caplog.text and f"{path}:" in caplog.text
    assert_matches_pinocchio(pm, compose(str(path)).model, n=2)


def test_reversed_limits_are_kept_as_written(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(robot(limit='lower="1" upper="-1"'))
    lim = read_urdf(path).joint("j").limits
    assert (lim.lower, lim.upper) == (1.0, -1.0)
    assert np.isfinite(lim.effort)
