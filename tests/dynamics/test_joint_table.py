"""The joint-type table (:data:`dynamics.joints.JOINTS`) against independent references, and the rule
that keeps it the one home of the facts of a joint type.

* Pinocchio's joint models (one per type, as the table has one record per type): nq, nv, the neutral
  configuration (Pinocchio's quaternions are [x, y, z, w], ours [w, x, y, z]; its continuous and
  planar joints carry an angle as (cos, sin), ours as the angle), q_dot = v, a constant motion subspace.
* MuJoCo's joints (hinge, slide, ball, free, and the compositions that make our cylindrical,
  universal and planar joints): nq, nv, ``qpos0``; which joints take a ``ref`` and an equality.
* The format modules' name maps (URDF, SDFormat, MJCF and their exporters) name types of the table,
  and the exporters' maps invert the readers'.
* No module but ``dynamics/joints.py`` lists two or more joint types (tuples, sets, lists, dict keys),
  except the format name maps named below (scanned with ``ast``).
"""

import ast
from pathlib import Path

import numpy as np
import pytest

from mbcompose.dynamics.joints import JOINTS, JointType, joint_types, neutral

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("composer", "parsers", "graph", "dynamics")


# ---- Pinocchio --------------------------------------------------------------------------------

def _pin_joint(pin, jtype):
    """Pinocchio's joint model for our type (axes x, and y for universal's second)."""
    x, y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    if jtype == "cylindrical":
        composite = pin.JointModelComposite()
        composite.addJoint(pin.JointModelRX())
        composite.addJoint(pin.JointModelPX())
        return composite
    return {"revolute": pin.JointModelRX, "continuous": pin.JointModelRUBX, "prismatic": pin.JointModelPX,
            "universal": lambda: pin.JointModelUniversal(x, y), "spherical": pin.JointModelSpherical,
            "planar": pin.JointModelPlanar, "free": pin.JointModelFreeFlyer}[jtype]()


def _angle(c, s):
    return np.array([np.arctan2(s, c)])


def _from_pin(jtype, q):
    """Pinocchio's coordinates of our joint type -> ours."""
    if jtype == "continuous":
        return _angle(q[0], q[1])
    if jtype == "planar":
        return np.concatenate([q[:2], _angle(q[2], q[3])])
    if jtype == "spherical":
        return q[[3, 0, 1, 2]]
    if jtype == "free":
        return np.concatenate([q[:3], q[[6, 3, 4, 5]]])
    return np.asarray(q, dtype=float)


def _pin_model(pin, jtype):
    model = pin.Model()
    model.addJoint(0, _pin_joint(pin, jtype), pin.SE3.Identity(), "j")
    return model


MOVING = [t for t in JOINTS if t != "fixed"]
#: Pinocchio holds an angle as (cos, sin): one coordinate more than ours
PIN_EXTRA_NQ = {"continuous": 1, "planar": 1}


@pytest.mark.parametrize("jtype", MOVING)
def test_nq_nv_and_neutral_are_pinocchios_joint_models(jtype):
    pin = pytest.importorskip("pinocchio")
    model = _pin_model(pin, jtype)
    facts = JOINTS[jtype]
    assert (model.nq - PIN_EXTRA_NQ.get(jtype, 0), model.nv) == (facts.nq, facts.nv)
    np.testing.assert_array_equal(_from_pin(jtype, pin.neutral(model)), facts.neutral)
    np.testing.assert_array_equal(neutral(jtype), facts.neutral)


def test_a_fixed_joint_has_no_coordinate_in_pinocchio():
    pin = pytest.importorskip("pinocchio")
    urdf = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>')
    model = pin.buildModelFromXML(urdf)
    assert (model.nq, model.nv, JOINTS["fixed"].neutral) == (JOINTS["fixed"].nq, JOINTS["fixed"].nv, ())


@pytest.mark.parametrize("jtype", MOVING)
def test_q_dot_is_v_exactly_for_the_euclidean_types_in_pinocchio(jtype):
    pin = pytest.importorskip("pinocchio")
    model = _pin_model(pin, jtype)
    rng = np.random.default_rng(7)
    q0 = pin.integrate(model, pin.neutral(model), rng.uniform(-1, 1, model.nv))
    v = rng.uniform(-1, 1, model.nv)
    moved = _from_pin(jtype, pin.integrate(model, q0, v))
    additive = moved.shape == (JOINTS[jtype].nv,) and np.allclose(moved, _from_pin(jtype, q0) + v, atol=1e-12)
    assert additive == JOINTS[jtype].euclidean


@pytest.mark.parametrize("jtype", MOVING)
def test_the_motion_subspace_is_constant_exactly_where_pinocchios_is(jtype):
    pin = pytest.importorskip("pinocchio")
    model = _pin_model(pin, jtype)
    data = model.createData()
    joint, jdata = model.joints[1], data.joints[1]
    S = []
    for q in (pin.neutral(model),
              pin.integrate(model, pin.neutral(model), np.random.default_rng(3).uniform(-1, 1, model.nv))):
        joint.calc(jdata, q)
        S.append(np.array(jdata.S))
    assert np.allclose(S[0], S[1], atol=1e-12) == JOINTS[jtype].constant_H


# ---- MuJoCo -----------------------------------------------------------------------------------

#: our joint type as MuJoCo joints of one body (the exporter's compositions)
MUJOCO_JOINTS = {
    "revolute": ["hinge"], "continuous": ["hinge"], "prismatic": ["slide"], "spherical": ["ball"],
    "free": ["free"], "cylindrical": ["slide", "hinge"], "universal": ["hinge", "hinge"],
    "planar": ["slide", "slide", "hinge"],
}


def _mujoco_model(mujoco, kinds, extra=""):
    axes = ["1 0 0", "0 1 0", "0 0 1"]
    joints = "".join(f'<joint name="j{k}" type="{kind}" axis="{axes[k]}" {extra}/>' if kind != "free"
                     else '<freejoint name="j0"/>' for k, kind in enumerate(kinds))
    return mujoco.MjModel.from_xml_string(
        f'<mujoco><worldbody><body>{joints}<geom size="0.1"/></body></worldbody></mujoco>')


@pytest.mark.parametrize("jtype", MOVING)
def test_nq_nv_and_qpos0_are_mujocos(jtype):
    mujoco = pytest.importorskip("mujoco")
    m = _mujoco_model(mujoco, MUJOCO_JOINTS[jtype])
    assert (m.nq, m.nv) == (JOINTS[jtype].nq, JOINTS[jtype].nv)
    np.testing.assert_array_equal(m.qpos0, JOINTS[jtype].neutral)       # MuJoCo's quaternions are [w, x, y, z]


@pytest.mark.parametrize("kind", ["hinge", "slide", "ball"])
def test_a_ref_and_an_equality_are_for_mujocos_one_coordinate_joints(kind):
    mujoco = pytest.importorskip("mujoco")
    from mbcompose.parsers.mjcf.reader import JOINT_MAP

    facts = JOINTS[JOINT_MAP[kind]]
    m = _mujoco_model(mujoco, [kind], extra='ref="30"')
    assert (not np.array_equal(m.qpos0, facts.neutral)) == facts.takes_ref
    xml = (f'<mujoco><worldbody><body><joint name="a" type="{kind}"/><geom size="0.1"/><body><joint name="b" '
           'type="hinge"/><geom size="0.1"/></body></body></worldbody><equality><joint joint1="b" joint2="a"/>'
           '</equality></mujoco>')
    try:
        mujoco.MjModel.from_xml_string(xml)
        coupled = True
    except ValueError:
        coupled = False
    assert coupled == facts.couplable


# ---- the table's own shape --------------------------------------------------------------------

def test_types_that_move_alike_share_one_kernel_code_and_nothing_else_does():
    for a in JOINTS.values():
        assert a.moves_as in JOINTS and JOINTS[a.moves_as].moves_as == a.moves_as
        for b in JOINTS.values():
            assert (a.kernel == b.kernel) == (a.moves_as == b.moves_as), (a.name, b.name)


def test_records_are_keyed_by_their_names_and_frozen():
    assert all(t == j.name and len(j.neutral) == j.nq for t, j in JOINTS.items())
    with pytest.raises(TypeError):
        JOINTS["new"] = JOINTS["revolute"]
    with pytest.raises(AttributeError):
        JOINTS["revolute"].takes_limits = False


def test_joint_types_selects_by_facts_and_refuses_unknown_ones():
    assert joint_types(takes_limits=True) == ("revolute", "prismatic")
    assert joint_types(one_coordinate=True) == joint_types(takes_ref=True) == ("revolute", "continuous", "prismatic")
    assert joint_types(has_axis2=True) == ("universal",)
    with pytest.raises(TypeError, match="limited"):
        joint_types(limited=True)
    assert set(JointType.__dataclass_fields__) >= {"nq", "nv", "takes_limits", "kernel"}


# ---- the format modules' name maps ------------------------------------------------------------

def test_format_name_maps_name_types_of_the_table_and_the_exporters_invert_the_readers():
    from mbcompose.parsers.exporters.mjcf import _JointWriter
    from mbcompose.parsers.exporters.sdf import SDF_TYPES
    from mbcompose.parsers.exporters.urdf import URDF_TYPES
    from mbcompose.parsers.mjcf.reader import JOINT_MAP as MJCF_JOINTS
    from mbcompose.parsers.sdf.joints import JOINT_MAP as SDF_JOINTS
    from mbcompose.parsers.urdf.joints import URDF_JOINT_TYPES

    for reader in (URDF_JOINT_TYPES, SDF_JOINTS, MJCF_JOINTS):
        assert {t for t in reader.values() if t is not None} <= set(JOINTS)
    assert all(URDF_JOINT_TYPES[name] == t for t, name in URDF_TYPES.items())
    assert all(SDF_JOINTS[name] == t for t, name in SDF_TYPES.items())
    assert all(MJCF_JOINTS[name] == JOINTS[t].moves_as for t, name in _JointWriter.TYPES.items())
    assert set(URDF_JOINT_TYPES.values()) == set(URDF_TYPES)          # every URDF type is written back


# ---- one home: no list of joint types outside the table ---------------------------------------

#: module -> names whose values may list joint types: a format's name map (checked above) or a policy
#: whose values are joint types.
ALLOWED_LISTS = {
    "parsers/urdf/joints.py": {"URDF_JOINT_TYPES"},
    "parsers/sdf/joints.py": {"JOINT_MAP"},
    "parsers/mjcf/reader.py": {"JOINT_MAP"},
    "parsers/exporters/urdf.py": {"URDF_TYPES"},
    "parsers/exporters/sdf.py": {"SDF_TYPES"},
    "parsers/exporters/mjcf.py": {"TYPES"},
    "parsers/step/mating.py": {"PLANAR_CONTACT_POLICIES"},
}


def joint_type_lists(source: str, allowed=frozenset()) -> list[tuple[int, list[str]]]:
    """(line, names) of every tuple, list, set or dict (its keys) in ``source`` that holds two or more
    joint-type string literals, outside the values of assignments to the names in ``allowed``."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in allowed for t in targets) and node.value is not None:
                skip.update(id(n) for n in ast.walk(node.value))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        names = [e.value for e in items if isinstance(e, ast.Constant) and e.value in JOINTS]
        if len(names) >= 2:
            found.append((node.lineno, names))
    return sorted(found)


def test_no_module_but_the_table_lists_joint_types():
    bad = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "dynamics/joints.py":
                continue
            found = joint_type_lists(path.read_text(), ALLOWED_LISTS.get(rel, frozenset()))
            if found:
                bad[rel] = found
    assert not bad, f"joint-type facts outside dynamics/joints.py (read them from JOINTS): {bad}"


def test_the_scan_sees_lists_sets_and_keys_and_skips_allowed_maps():
    src = ('A = ("revolute", "prismatic")\nif t in {"spherical", "free"}: pass\nB = {"fixed": 0, "planar": 1}\n'
           'C = ["hinge", "revolute"]\nMAP = {"hinge": "revolute", "slide": "prismatic", "free": "free",'
           ' "ball": "spherical"}\nD = x == "revolute"\n')
    assert [line for line, _ in joint_type_lists(src)] == [1, 2, 3]
    assert [line for line, _ in joint_type_lists(src, {"A", "B"})] == [2]
