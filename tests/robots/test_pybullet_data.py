"""pybullet's ``pybullet_data`` (the ``corpus`` extra): every URDF Pinocchio loads composes here,
with a fixed and a floating base, and M, RNEA and ABA agree with Pinocchio's to 1e-9 relative;
every MJCF file MuJoCo loads composes and M and the bias forces agree with MuJoCo's.

References: ``pinocchio.buildModelFromUrdf`` (with ``JointModelFreeFlyer`` for the floating
base), coordinates mapped by joint name (:mod:`robot_refs`); MuJoCo through
:func:`test_mujoco_corpora.check_against_mujoco`.  Where a reference refuses a file we
refuse it too, with a one-line :class:`InputError` at the offending line (the expected
phrase of each is listed below).  Two rules where the file and the reference part ways:

* a root link called ``world`` is the fixed world (Gazebo's convention): with
  ``base='floating'`` we keep the robot fixed and warn, so the reference is Pinocchio's
  fixed-base model (Pinocchio would float the massless ``world`` link);
* where Pinocchio's M is singular (a massless floating root; the random objects'
  inertia ``izz = 0``), forward dynamics has no answer and only M and RNEA are compared;
* a known difference of ours (:data:`KNOWN_DIFFERENCES`: armature on a free joint) must
  be logged, and the file without it must match.

The ~1000 near-identical ``random_urdfs`` objects run as one slow test each.
"""

import glob
import logging
import os

import numpy as np
import pytest

from mbcompose import compose, dynamics
from mbcompose.parsers import InputError
from robot_refs import assert_matches_pinocchio

pin = pytest.importorskip("pinocchio")
pybullet_data = pytest.importorskip("pybullet_data")

ROOT = pybullet_data.getDataPath()
URDFS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "**", "*.urdf"), recursive=True))
RANDOM = [p for p in URDFS if p.startswith("random_urdfs")]
NAMED = [p for p in URDFS if p not in RANDOM]
MJCFS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "mjcf", "*.xml")))

#: URDFs Pinocchio refuses (urdfdom), and the phrase of our one-line error
BOTH_REFUSE_URDF = {
    "bicycle/bike.urdf": "origin@xyz: expected numbers, got '-0.69, 0, -0.42'",
    "biped/biped2d_pybullet.urdf": "limit@lower: expected numbers, got '-1.57.'",
    "humanoid/humanoid.urdf": "XML syntax error",
    "husky/husky.urdf": "expected numbers, got '$(optenv",
    "quadruped/microtaur/microtaur.urdf": "origin@rpy: expected 3 numbers, got 4",
    "spherical_joint_limit.urdf": "unknown joint type 'spherical'",
    "torus_deform.urdf": "the robot has no <link>",
}

#: MJCF files MuJoCo refuses that we refuse too (the phrase of our error)
BOTH_REFUSE_MJCF = {
    "ground.xml": "<motor> names joint 'abdomen_y', which the model does not have",
    "half_cheetah.xml": "<inertial> needs attribute 'pos'",
    "hopper.xml": "compiler@coordinate='global' is not supported",
    "humanoid_fixed.xml": "unknown joint type 'fixed'",
    "walker2d.xml": "compiler@coordinate='global' is not supported",
}

#: MJCF files MuJoCo refuses for what does not enter the dynamics, which we read: MuJoCo's
#: error, and the edit after which MuJoCo loads the file (the reference for our reading)
ONLY_MUJOCO_REFUSES = {
    "ground_plane.xml": ("plane size(3) must be positive", ('type="plane"', 'type="plane" size="1 1 1"')),
    "humanoid_symmetric.xml": ("material 'geom' not found", (' material="geom"', "")),
    "swimmer.xml": ("unrecognized attribute: 'collision'", ('collision="predefined" ', "")),
}

#: MJCF files MuJoCo loads where our dynamics is known to differ: the warning we log, and the
#: edit that removes the difference (then the edited file must match MuJoCo to 1e-9)
KNOWN_DIFFERENCES = {
    # MuJoCo puts a free joint's armature on the world-frame translation, ours on the body frame
    "striker.xml": ("armature of free joint 'target_free'",
                    ('name="target_free" type="free"', 'name="target_free" type="free" armature="0"')),
}


def test_the_corpus_is_found():
    assert len(NAMED) >= 90 and len(RANDOM) >= 1000 and len(MJCFS) >= 26


def _pinocchio(path, base):
    try:
        if base == "fixed":
            return pin.buildModelFromUrdf(path)
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError):
        return None


def _assert_refused(path, phrase, read):
    with pytest.raises(InputError) as exc:
        read(path)
    assert phrase in str(exc.value) and exc.value.line is not None and "\n" not in str(exc.value)


def _is_singular(pm) -> bool:
    M = pin.crba(pm, pm.createData(), pin.neutral(pm))
    return pm.nv > 0 and np.linalg.cond(np.triu(M) + np.triu(M, 1).T) > 1e12


def check_urdf(rel, caplog):
    path = os.path.join(ROOT, rel)
    for base in ("fixed", "floating"):
        pm = _pinocchio(path, base)
        if pm is None:
            _assert_refused(path, BOTH_REFUSE_URDF[rel], lambda p: compose(p, base=base))
            continue
        assert rel not in BOTH_REFUSE_URDF
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mbcompose"):
            model = compose(path, base=base).model
        if base == "floating" and pm.names[1] == "root_joint" and "root_joint" not in model.joint_names:
            assert "base='floating' leaves the robot fixed" in caplog.text
            pm = pin.buildModelFromUrdf(path)
        assert_matches_pinocchio(pm, getattr(model, "tree_model", model), n=2, forward=not _is_singular(pm))


@pytest.mark.parametrize("rel", NAMED)
def test_urdf_matches_pinocchio_fixed_and_floating(rel, caplog):
    check_urdf(rel, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("rel", RANDOM)
def test_random_object_urdf_matches_pinocchio_fixed_and_floating(rel, caplog):
    check_urdf(rel, caplog)


@pytest.mark.parametrize("rel", MJCFS)
def test_mjcf_matches_mujoco(rel, tmp_path, caplog):
    from test_mujoco_corpora import check_against_mujoco, mujoco

    path = os.path.join(ROOT, rel)
    name = os.path.basename(rel)
    try:
        mujoco.MjModel.from_xml_path(path)
    except ValueError as exc:
        if name not in ONLY_MUJOCO_REFUSES:
            _assert_refused(path, BOTH_REFUSE_MJCF[name], compose)
            return
        error, (old, new) = ONLY_MUJOCO_REFUSES[name]
        assert error in str(exc)
        edited = _edited(path, old, new, tmp_path)
        check_against_mujoco(edited)
        ours, reference = compose(path).model, compose(edited).model
        q = np.random.default_rng(3).uniform(-0.5, 0.5, ours.nq) if ours.nv else ours.neutral()
        np.testing.assert_array_equal(dynamics.mass_matrix(ours, q), dynamics.mass_matrix(reference, q))
        return
    assert name not in BOTH_REFUSE_MJCF and name not in ONLY_MUJOCO_REFUSES
    if name in KNOWN_DIFFERENCES:
        warning, (old, new) = KNOWN_DIFFERENCES[name]
        with caplog.at_level(logging.WARNING, logger="mbcompose"):
            compose(path)
        assert warning in caplog.text
        path = _edited(path, old, new, tmp_path)
    check_against_mujoco(path)


def _edited(path, old, new, folder) -> str:
    text = open(path).read()
    assert text.count(old) == 1
    out = folder / os.path.basename(path)
    out.write_text(text.replace(old, new))
    return str(out)
