"""Every example-robot-data URDF against Pinocchio's own URDF parser.

Reference: ``pinocchio.buildModelFromUrdf`` (fixed base, as our default) at the
neutral configuration.  Compared independently of our dynamics code: total mass,
each link's world pose (``updateFramePlacements``), each moving joint's world
origin and axis, and per-joint body inertias (Pinocchio lumps the links welded
by fixed joints into the body of the moving joint that carries them; we merge
our per-link mass properties the same way with :func:`parsers.massprops.combine`).
"""

import glob
import os
import sysconfig

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from mbcompose.parsers import InputError, Pose  # noqa: E402
from mbcompose.parsers.massprops import combine, transform_mass_properties  # noqa: E402
from mbcompose.parsers.urdf.reader import read_urdf  # noqa: E402

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ROBOTS = sorted(glob.glob(os.path.join(SHARE, "example-robot-data", "robots", "*", "urdf", "*.urdf")))
PACKAGE_DIRS = [SHARE]


def robot_id(path):
    return os.path.basename(path)[:-5]


def test_example_robot_data_is_found():
    assert len(ROBOTS) >= 40


def urdf_name(body):
    """The link name in the URDF (the reader renames a link called 'ground')."""
    src = body.sources.get("name")
    return src.note.split("'")[1] if src is not None else body.name


def _local_axis(jm):
    short = jm.shortname()
    for suffix, ax in (("X", [1.0, 0, 0]), ("Y", [0, 1.0, 0]), ("Z", [0, 0, 1.0])):
        if short.endswith(suffix) and ("RX" in short or "RY" in short or "RZ" in short or "RUB" in short
                                       or "PX" in short or "PY" in short or "PZ" in short):
            return np.array(ax)
    if "Unaligned" in short:
        return np.array(jm.extract().axis, dtype=float)
    if "Planar" in short:
        return np.array([0, 0, 1.0])
    return None


def _pin_model(path):
    try:
        return pin.buildModelFromUrdf(path), None
    except (RuntimeError, ValueError) as exc:
        return None, exc


@pytest.mark.parametrize("path", ROBOTS, ids=robot_id)
def test_urdf_matches_pinocchio_at_the_reference_configuration(path):
    model, pin_error = _pin_model(path)
    if model is None:
        with pytest.raises(InputError) as exc:
            read_urdf(path, package_dirs=PACKAGE_DIRS)
        msg = str(exc.value)
        assert "\n" not in msg and exc.value.file == path and exc.value.line is not None
        return
    a = read_urdf(path, package_dirs=PACKAGE_DIRS)
    data = model.createData()
    q0 = pin.neutral(model)
    pin.forwardKinematics(model, data, q0)
    pin.updateFramePlacements(model, data)

    pin_mass = sum(model.inertias[i].mass for i in range(model.njoints))
    assert a.total_mass == pytest.approx(pin_mass, rel=1e-12, abs=1e-12)

    # link poses
    for body in a.bodies:
        fid = model.getFrameId(urdf_name(body), pin.FrameType.BODY)
        assert fid < model.nframes, body.name
        oMf = data.oMf[fid]
        np.testing.assert_allclose(body.pose.rotation, oMf.rotation, atol=1e-10, err_msg=body.name)
        np.testing.assert_allclose(body.pose.translation, oMf.translation, atol=1e-10, err_msg=body.name)

    # moving joints: origin, axis, type
    moving = [j for j in a.joints if j.type != "fixed"]
    assert sorted(j.name for j in moving) == sorted(model.names[1:])
    for i in range(1, model.njoints):
        j = a.joint(model.names[i])
        oMi = data.oMi[i]
        np.testing.assert_allclose(j.origin, oMi.translation, atol=1e-10, err_msg=j.name)
        local = _local_axis(model.joints[i])
        assert local is not None, model.joints[i].shortname()
        np.testing.assert_allclose(j.axis, oMi.rotation @ local, atol=1e-10, err_msg=j.name)
        assert j.nv == model.joints[i].nv

    # per-body mass properties, lumped over fixed joints as Pinocchio does
    urdf_names = {urdf_name(b): b.name for b in a.bodies}
    members = {i: [] for i in range(model.njoints)}
    for fr in model.frames:
        if fr.type == pin.FrameType.BODY and fr.name in urdf_names:
            members[fr.parentJoint].append(urdf_names[fr.name])
    assert sum(len(v) for v in members.values()) == len(a.bodies)
    for i, names in members.items():
        oMi = data.oMi[i]
        X_joint_world = Pose(oMi.rotation, oMi.translation).inverse()
        lumped = combine(transform_mass_properties(a.body(n).mass, X_joint_world.compose(a.body(n).pose))
                         for n in names)
        ref = model.inertias[i]
        scale = max(ref.mass, 1e-300)
        assert lumped.mass == pytest.approx(ref.mass, rel=1e-12, abs=1e-12), model.names[i]
        if ref.mass > 0:
            np.testing.assert_allclose(lumped.com, ref.lever, atol=1e-10, err_msg=model.names[i])
        np.testing.assert_allclose(lumped.inertia, ref.inertia, atol=1e-10 * max(1.0, scale),
                                   err_msg=model.names[i])


def test_pinocchio_rejected_robot_gives_a_one_line_error():
    bad = [p for p in ROBOTS if _pin_model(p)[0] is None]
    assert bad, "expected at least one URDF Pinocchio refuses (ur3.urdf has no robot name)"
    for p in bad:
        with pytest.raises(InputError) as exc:
            read_urdf(p, package_dirs=PACKAGE_DIRS)
        assert "\n" not in str(exc.value)


def _dynamics_bridge():
    try:
        from mbcompose import composer
        from mbcompose import dynamics
    except ImportError:
        return None
    if not (hasattr(composer, "compose") and all(hasattr(dynamics, f) for f in
                                                  ("mass_matrix", "inverse_dynamics", "forward_dynamics"))):
        return None
    return composer, dynamics


def _to_pin_q(model, ours, q_ours):
    """Our coordinates (revolute/prismatic/continuous angle) to Pinocchio's q (cos, sin for continuous)."""
    q = pin.neutral(model)
    for i in range(1, model.njoints):
        sl = ours.q_slice(model.names[i])
        val = q_ours[sl]
        jm = model.joints[i]
        if jm.nq == 0:                           # a mimic joint: no coordinate of its own
            continue
        if jm.nq == 2 and jm.nv == 1:
            q[jm.idx_q:jm.idx_q + 2] = [np.cos(val[0]), np.sin(val[0])]
        else:
            q[jm.idx_q:jm.idx_q + jm.nq] = val
    return q


def _to_pin_v(model, ours, v_ours):
    v = np.zeros(model.nv)
    for i in range(1, model.njoints):
        jm = model.joints[i]
        v[jm.idx_v:jm.idx_v + jm.nv] = v_ours[ours.v_slice(model.names[i])]
    return v


@pytest.mark.slow
@pytest.mark.skipif(_dynamics_bridge() is None,
                    reason="needs composer.compose and dynamics.mass_matrix/inverse_dynamics/forward_dynamics")
@pytest.mark.parametrize("path", ROBOTS, ids=robot_id)
def test_urdf_dynamics_match_pinocchio_at_random_configurations(path):
    composer, dynamics = _dynamics_bridge()
    model, _ = _pin_model(path)
    if model is None:
        pytest.skip("Pinocchio refuses this file")
    ours = composer.compose(path, package_dirs=PACKAGE_DIRS).model
    if hasattr(ours, "independent_v"):
        return _mimic_dynamics_match_pinocchio(path, ours, dynamics)
    data = model.createData()
    rng = np.random.default_rng(20260121)
    for _ in range(5):
        q = rng.uniform(-1.0, 1.0, ours.nq)
        v = rng.normal(size=ours.nv)
        a = rng.normal(size=ours.nv)
        qp, vp, ap = _to_pin_q(model, ours, q), _to_pin_v(model, ours, v), _to_pin_v(model, ours, a)
        M = dynamics.mass_matrix(ours, q)
        Mp = pin.crba(model, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        perm = np.concatenate([np.arange(ours.nv)[ours.v_slice(model.names[i])] for i in range(1, model.njoints)])
        scale = max(1.0, np.abs(Mp).max())
        np.testing.assert_allclose(M[np.ix_(perm, perm)], Mp, atol=1e-9 * scale)
        tau = dynamics.inverse_dynamics(ours, q, v, a)
        taup = pin.rnea(model, data, qp, vp, ap)
        np.testing.assert_allclose(tau[perm], taup, atol=1e-9 * max(1.0, np.abs(taup).max()))
        cond = np.linalg.cond(Mp)
        if cond > 1e10:      # massless moving leaves (romeo): M is singular, no forward dynamics
            continue
        qdd = dynamics.forward_dynamics(ours, q, v, tau)
        np.testing.assert_allclose(qdd, a, atol=max(1e-9, 1e-12 * cond) * max(1.0, np.abs(a).max()))
        qdd_pin = pin.aba(model, data, qp, vp, taup)
        np.testing.assert_allclose(qdd[perm], qdd_pin, atol=max(1e-9, 1e-12 * cond) * max(1.0, np.abs(qdd_pin).max()))


def _mimic_dynamics_match_pinocchio(path, ours, dynamics):
    """Robots with mimic joints: our minimal-coordinate M and joint forces against Pinocchio's
    mimic model (``mimic=True``; M from its rnea, see tests/robots/test_couplings.py)."""
    from mbcompose.dynamics import embedding

    try:
        pm = pin.buildModelFromUrdf(path, mimic=True)
    except ValueError as exc:                # e.g. a mimic of a mimic, which Pinocchio refuses
        pytest.skip(f"Pinocchio's mimic model: {exc}".splitlines()[0])
    pd = pm.createData()
    names = [pm.names[i] for i in range(1, pm.njoints) if pm.joints[i].nv]
    assert sorted(names) == sorted(ours.independent)
    cols = [ours.independent.index(n) for n in names]
    vidx = [ours.v_slice(n).start for n in names]
    rng = np.random.default_rng(20260121)
    for _ in range(3):
        q = embedding.complete_configuration(ours, q_ind=dict(zip(ours.independent, rng.uniform(-1, 1, ours.n_independent))))
        v = embedding.complete_velocity(ours, q, rng.normal(size=ours.n_independent))
        qp = _to_pin_q(pm, ours, q)
        zero = np.zeros(pm.nv)
        g = pin.rnea(pm, pd, qp, zero, zero)
        Mp = np.column_stack([pin.rnea(pm, pd, qp, zero, e) - g for e in np.eye(pm.nv)])
        M = dynamics.mass_matrix(ours, q)[np.ix_(cols, cols)]
        np.testing.assert_allclose(M, Mp, atol=1e-9 * max(1.0, np.abs(Mp).max()))
        tau = np.zeros(ours.nv)
        tau[vidx] = rng.normal(size=len(vidx))
        a = dynamics.forward_dynamics(ours, q, v, tau)
        taup = pin.rnea(pm, pd, qp, v[vidx], a[vidx])
        np.testing.assert_allclose(taup, tau[vidx], atol=1e-8 * max(1.0, np.abs(taup).max()))
