"""SDFormat screw, gearbox and ``<mimic>`` joints as couplings; revolute2; the exporter's ``<mimic>``.

Reference: tests/data/sdf/couplings_tree.urdf (the spanning tree of
tests/data/sdf/couplings.sdf written by hand, the screw as prismatic + revolute) in
Pinocchio, reduced to the two free coordinates u = (screw angle, gear1 angle) by the
map q = G u + c derived by hand from the SDFormat spec (joint.sdf):

* screw, 0.02 m per revolution: q[lead_translation] = 0.02 / (2 pi) q[lead];
* gearbox, ratio 3, theta_2 = -3 theta_1, gear2's joint axis pointing down (-z): q[gear2] = 3 q[gear1];
* mimic: q[pointer] = 0.5 (q[gear1] - 0.2) + 0.1.

Linear couplings with a constant G: M_u = G^T M G and tau_u = G^T rnea(q, G du, G ddu).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.dynamics import embedding
from mbcompose.parsers import InputError
from mbcompose.parsers.exporters.sdf import write_sdf
from mbcompose.parsers.sdf.reader import read_sdf

SDF = Path(__file__).resolve().parents[1] / "data" / "sdf"
COUPLINGS = SDF / "couplings.sdf"
K = 0.02 / (2 * math.pi)
PIN_ORDER = ("lead_translation", "lead", "gear1_joint", "gear2_joint", "pointer_joint")
G = np.array([[K, 0], [1, 0], [0, 1], [0, 3], [0, 0.5]])      # rows: PIN_ORDER; columns: lead, gear1_joint
C = np.array([0, 0, 0, 0, 0.1 - 0.5 * 0.2])


def assert_matches_reduced_pinocchio(ours):
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(SDF / "couplings_tree.urdf"))
    pd = pm.createData()
    assert sorted(pm.names[1:]) == sorted(PIN_ORDER)
    at = [pm.joints[pm.getJointId(n)].idx_q for n in PIN_ORDER]      # Pinocchio's coordinate of each joint
    P = np.zeros((5, 5))
    P[at, range(5)] = 1                                               # PIN_ORDER -> Pinocchio's order
    assert sorted(ours.independent) == ["gear1_joint", "lead"]
    iu = [ours.v_slice(n).start for n in ("lead", "gear1_joint")]
    order = [list(ours.independent).index(n) for n in ("lead", "gear1_joint")]
    rng = np.random.default_rng(5)
    for _ in range(3):
        u, du, tau_u = rng.uniform(-2, 2, 2), rng.normal(size=2), rng.normal(size=2)
        q = embedding.complete_configuration(ours, q_ind={"lead": u[0], "gear1_joint": u[1]})
        qn = G @ u + C
        np.testing.assert_allclose([q[ours.q_slice(n)][0] for n in PIN_ORDER], qn, atol=1e-14)
        qp, Gp = P @ qn, P @ G
        v = embedding.complete_velocity(ours, q, du[np.argsort(order)])
        np.testing.assert_allclose([v[ours.v_slice(n)][0] for n in PIN_ORDER], G @ du, atol=1e-14)
        Mu = Gp.T @ _sym(pin.crba(pm, pd, qp)) @ Gp
        M = dynamics.mass_matrix(ours, q)[np.ix_(order, order)]
        np.testing.assert_allclose(M, Mu, atol=1e-13)
        bias = Gp.T @ pin.rnea(pm, pd, qp, Gp @ du, np.zeros(5))
        tau = np.zeros(ours.nv)
        tau[iu] = tau_u
        a = dynamics.forward_dynamics(ours, q, v, tau)
        np.testing.assert_allclose(a[iu], np.linalg.solve(Mu, tau_u - bias), atol=1e-9)
        np.testing.assert_allclose(dynamics.inverse_dynamics(ours, q, v, a)[iu], tau_u, atol=1e-10)


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def test_screw_gearbox_and_mimic_match_the_reduced_tree_in_pinocchio():
    assert_matches_reduced_pinocchio(compose(COUPLINGS).model)


def test_couplings_read_from_the_spec_parameters():
    a = read_sdf(COUPLINGS)
    c = {x.joint: x for x in a.couplings}
    assert (c["lead_translation"].leader, c["lead_translation"].multiplier) == ("lead", pytest.approx(K, rel=1e-15))
    assert (c["gear2_joint"].leader, c["gear2_joint"].multiplier) == ("gear1_joint", 3.0)
    assert (c["pointer_joint"].multiplier, c["pointer_joint"].offset) == (0.5, pytest.approx(0.0, abs=1e-15))
    assert a.body("lead_carriage").mass.mass == 0 and "gears" not in a.joint_names
    # SDFormat 1.9's thread_pitch (rad/m, left-handed when positive) is -2 pi / screw_thread_pitch
    old = COUPLINGS.read_text().replace("<screw_thread_pitch>0.02</screw_thread_pitch>",
                                        f"<thread_pitch>{-2 * math.pi / 0.02!r}</thread_pitch>")
    b = read_sdf(COUPLINGS, text=old)
    assert {x.joint: x for x in b.couplings}["lead_translation"].multiplier == pytest.approx(K, rel=1e-14)


def test_sdf_export_writes_couplings_as_mimic_and_reads_back_the_same_dynamics(tmp_path):
    a = read_sdf(COUPLINGS)
    out = write_sdf(a, tmp_path / "back.sdf")
    text = out.read_text()
    assert 'version="1.11"' in text and text.count("<mimic ") == 2 and text.count('type="screw"') == 1
    assert "lead_carriage" not in text                     # the screw is written back whole
    b = read_sdf(out)
    key = sorted((c.joint, c.leader, c.multiplier, c.offset) for c in a.couplings)
    assert sorted((c.joint, c.leader, c.multiplier, c.offset) for c in b.couplings) == key
    assert_matches_reduced_pinocchio(compose(out).model)


REVOLUTE2 = """<sdf version="1.8"><model name="r2"><link name="a"/><link name="b"><pose>0 0 1 0 0 0</pose></link>
<joint name="j" type="revolute2"><parent>world</parent><child>a</child>
<axis><xyz>1 0 0</xyz></axis><axis2><xyz>AXIS2</xyz></axis2></joint>
<joint name="k" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz>MIMIC</axis></joint>
</model></sdf>"""


def test_revolute2_with_orthogonal_axes_is_a_universal_joint():
    a = read_sdf("r2.sdf", text=REVOLUTE2.replace("AXIS2", "0 1 0").replace("MIMIC", ""))
    j = a.joint("j")
    assert j.type == "universal" and j.axis @ j.axis2 == 0


@pytest.mark.parametrize("axis2, mimic, line, message", [
    ("1 1 0", "", 3, "revolute2 joint 'j': revolute2 joints with axes that are not orthogonal"),
    ("0 1 0", '<mimic joint="jj"/>', 4, "unknown frame 'jj' in the model (did you mean 'j'?)"),
    ("0 1 0", '<mimic joint="a"/>', 4, "does not name a joint"),
    ("0 1 0", '<mimic joint="j" axis="axis2"/>', 4, "only one-coordinate joints can be coupled"),
])
def test_coupling_refusals_name_the_feature_and_the_line(axis2, mimic, line, message):
    with pytest.raises(InputError) as exc:
        read_sdf("r2.sdf", text=REVOLUTE2.replace("AXIS2", axis2).replace("MIMIC", mimic))
    assert message in exc.value.message and exc.value.line == line and exc.value.file == "r2.sdf"


def test_mimic_of_a_two_axis_joint_fails_where_the_couplings_are_embedded(tmp_path):
    path = tmp_path / "r2.sdf"
    path.write_text(REVOLUTE2.replace("AXIS2", "0 1 0").replace("MIMIC", '<mimic joint="j"/>'))
    with pytest.raises(InputError, match="only revolute, continuous, prismatic joints can be coupled") as exc:
        compose(path)
    assert exc.value.line == 4


def test_gearbox_without_its_revolute_joints_is_refused():
    text = COUPLINGS.read_text().replace("<gearbox_reference_body>base</gearbox_reference_body>",
                                         "<gearbox_reference_body>pointer</gearbox_reference_body>")
    with pytest.raises(InputError) as exc:
        read_sdf(COUPLINGS, text=text)
    assert "no revolute joint joins gearbox_reference_body 'pointer' and the parent 'gear1'" in exc.value.message
    assert exc.value.line == 51
