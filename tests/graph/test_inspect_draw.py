"""composer.inspect renderers and graph.draw.systems pictures."""

import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from mbcompose import graph
from mbcompose.composer.inspect import exit_code, render_json, render_markdown, render_text
from mbcompose.graph.draw.systems import draw_system_graph, layout
from mbcompose.parsers import read_assembly

import graph_mechanisms as gm

SEEKER = Path(__file__).resolve().parents[2] / "samples" / "seeker" / "seeker.yaml"
CONTRACT = ("bodies", "joints", "composites", "reduced_joints", "removed_joints", "loops", "dof")


def test_json_has_the_contract_keys_and_is_serialisable():
    a = read_assembly(SEEKER)
    doc = json.loads(json.dumps(render_json(a, matrices=True)))
    assert all(k in doc for k in CONTRACT)
    assert doc["dof"] == 2
    assert sorted(map(sorted, doc["composites"])) == sorted(map(sorted, gm.SEEKER_TABLE2))
    assert {r["name"] for r in doc["removed_joints"]} == {"pitch_b", "yaw_b"}
    # Table 1 of seed 004 lists ten joints; the reader's implicit weld to ground is listed apart
    assert [j["name"] for j in doc["joints"]] == [j.name for j in a.joints if not j.implicit]
    assert len(doc["joints"]) == 10
    assert [j["name"] for j in doc["implicit_joints"]] == ["housing_to_ground"]
    assert doc["loops"] == [] and doc["errors"] == []
    m = doc["matrices"]
    A, B = np.array(m["incidence"]), np.array(m["circuit"])
    col = [int(c[1:]) - 1 for c in m["columns"]]
    assert not np.any(A[:, col] @ B.T)


def test_json_masses_are_assembly_frame_values():
    a = gm.seeker()
    doc = render_json(a)
    for row, b in zip(doc["bodies"], a.bodies):
        assert row["mass"] == pytest.approx(b.mass.mass)
        assert np.allclose(row["com"], b.pose.apply(b.mass.com))
    assert sum(c["mass"] for c in doc["composite_bodies"]) == pytest.approx(a.total_mass)


def test_text_report_has_tables_1_to_3_with_starred_actuated_joints():
    text = render_text(read_assembly(SEEKER), matrices=True,
                       composite_names={"shaft_b": "BODY_1", "housing": "BODY_2", "gimbal_ring": "BODY_3"})
    for needle in ("Table 1", "Table 2", "Table 3", "REVOLUTE*", "BODY_1", "Removed joints",
                   "same freedoms as pitch_a", "Degrees of freedom: 2", "Incidence matrix", "Circuit matrix"):
        assert needle in text
    table3 = text.split("Table 3")[1].split("Removed joints")[0]
    assert table3.count("REVOLUTE*") == 2 and table3.count("REVOLUTE ") == 2


def test_markdown_report_and_analysis_argument():
    an = graph.analyse(gm.fourbar())
    md = render_markdown(an)
    assert md.startswith("# Assembly fourbar") and "| L1 |" in md and "redundant constraints" in md
    assert render_text(an) == render_text(gm.fourbar())


def test_exit_code_is_2_only_for_errors():
    assert exit_code(gm.fourbar(tilt=0.3)) == 0
    a = gm.fourbar()
    from mbcompose.parsers.assembly import Assembly
    assert exit_code(Assembly("x", a.bodies + (gm._cube("loose", [2, 0, 0]),), a.joints)) == 2


@pytest.mark.parametrize("stage", ["extended", "reduced"])
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_pictures_are_written(tmp_path, stage, suffix):
    an = graph.analyse(read_assembly(SEEKER))
    out = tmp_path / f"seeker_{stage}{suffix}"
    with matplotlib.rc_context({"svg.fonttype": "none"}):   # keep labels as <text> to read them back
        draw_system_graph(an, stage, out)
    data = out.read_bytes()
    assert len(data) > 10_000
    if suffix == ".svg":
        labels = re.findall(r">([^<>]+)</text>", data.decode())
        sg = an.extended if stage == "extended" else an.reduced
        for e in sg.elements:
            assert any(lab == e.name or lab.startswith(f"{e.name} ") for lab in labels), e.name


def test_layout_gives_distinct_positions_to_all_nodes():
    for a in (gm.seeker(), gm.fourbar(), gm.bearing()):
        an = graph.analyse(a)
        for sg in (an.extended, an.reduced):
            pos = layout(sg)
            pts = np.array([pos[n] for n in sg.nodes])
            d = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(len(pts))
            assert d.min() > 1e-3


DISCONNECTED_YAML = """
name: loose
bodies:
  - name: arm
    inertial: {mass: 1.0, inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
  - name: stray
    pose: {xyz: [1, 0, 0]}
    inertial: {mass: 1.0, inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
joints:
  - {name: pivot, type: revolute, reference: ground, secondary: arm, axis: [0, 0, 1]}
"""


def test_cli_inspect_reports_a_disconnected_body_with_exit_code_2(tmp_path):
    from click.testing import CliRunner
    from mbcompose.composer.cli.commands import main
    f = tmp_path / "loose.yaml"
    f.write_text(DISCONNECTED_YAML)
    res = CliRunner().invoke(main, ["inspect", str(f), "--format", "json"])
    assert res.exit_code == 2
    assert "not connected to ground" in res.stderr and "stray" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["dof"] == 1 and doc["errors"][0]["code"] == "disconnected"


def test_cli_inspect_matrices_and_graph_pictures(tmp_path):
    from click.testing import CliRunner
    from mbcompose.composer.cli.commands import main
    res = CliRunner().invoke(main, ["inspect", str(SEEKER), "--matrices"])
    assert res.exit_code == 0 and "Cut-set matrix" in res.stdout and "Degrees of freedom: 2" in res.stdout
    res = CliRunner().invoke(main, ["graph", str(SEEKER), "-o", str(tmp_path / "g.png"), "--stage", "both"])
    assert res.exit_code == 0
    assert (tmp_path / "g_extended.png").stat().st_size > 10_000
    assert (tmp_path / "g_reduced.png").stat().st_size > 10_000
    assert str(tmp_path / "g_extended.png") in res.stdout and str(tmp_path / "g_reduced.png") in res.stdout


def test_cli_graph_writes_the_file_it_was_given(tmp_path):
    from click.testing import CliRunner
    from mbcompose.composer.cli.commands import main
    res = CliRunner().invoke(main, ["graph", str(SEEKER), "-o", str(tmp_path / "x.png")])
    assert res.exit_code == 0, res.output
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"]
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_inspect_reports_a_loop_that_cannot_close_with_exit_code_2(tmp_path):
    from click.testing import CliRunner
    from mbcompose.composer.cli.commands import main
    text = (Path(__file__).resolve().parents[2] / "samples" / "fourbar" / "fourbar.yaml").read_text()
    a = read_assembly(Path(__file__).resolve().parents[2] / "samples" / "fourbar" / "fourbar.yaml")
    chord = graph.analyse(a).loops[0].chord
    marker = f"name: {chord}"
    assert marker in text
    f = tmp_path / "open_fourbar.yaml"
    f.write_text(text.replace(marker, marker + "\n    secondary_origin: [0.5, 0.5, 0.5]", 1))
    if read_assembly(f).joint(chord).secondary_origin is None:
        pytest.fail("the YAML edit did not set secondary_origin")
    res = CliRunner().invoke(main, ["inspect", str(f)])
    assert res.exit_code == 2 and "cannot close" in res.stderr
    assert "NO (gap" in res.stdout



def test_a_large_robot_is_drawn_in_layers_from_ground_with_room_for_its_labels():
    from mbcompose.graph.draw.systems import LAYERED_ABOVE
    from mbcompose.parsers.assembly import GROUND, Assembly

    chains, links = 3, LAYERED_ABOVE              # three chains from ground: a tree of 36 bodies
    bodies, joints = [], []
    for c in range(chains):
        for k in range(links):
            name, parent = f"c{c}_{k}", GROUND if k == 0 else f"c{c}_{k - 1}"
            bodies.append(gm.body(name, [0.1 * k, c, 0], [gm.box([0.1, 0.02, 0.02], [0.05, 0, 0])]))
            joints.append(gm.joint(f"j{c}_{k}", "revolute", parent, name, [0.1 * k, c, 0], [0, 0, 1]))
    an = graph.analyse(Assembly("chains", tuple(bodies), tuple(joints)))
    pos = layout(an.extended)
    y = {b.name: pos[f"com:{b.name}"][1] for b in bodies}
    assert all(pos[GROUND][1] > y[f"c{c}_0"] for c in range(chains))
    assert all(y[f"c{c}_{k}"] > y[f"c{c}_{k + 1}"] for c in range(chains) for k in range(links - 1))
    xy = np.array([pos[f"com:{b.name}"] for b in bodies])
    gaps = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(len(xy)) * 1e9
    assert gaps.min() >= 0.5                       # no two centres of mass on top of each other
