"""The Assembly classes check what they are built from: every constructor, ``dataclasses.replace``
and the batch constructors (``Pose.many``, ``MassProperties.many``) alike."""

import dataclasses

import numpy as np
import pytest

from mbcompose.parsers.assembly import (GROUND, JOINT_TYPES, Assembly, Body, Coupling, Frame, Geometry, Joint, Limits,
                                        MassProperties, Motor, Pose, SpringDamper, frozen)


def _joint(**changes):
    fields = dict(name="j", type="revolute", reference=GROUND, secondary="b")
    fields.update(changes)
    return Joint(**fields)


def test_a_misspelt_field_is_a_type_error():
    with pytest.raises(TypeError, match="axsi"):
        _joint(axsi=[1.0, 0.0, 0.0])
    with pytest.raises(TypeError):
        MassProperties(mass=1.0, com=np.zeros(3), inertia=np.eye(3), density=3.0)


def test_an_unknown_joint_type_is_a_value_error_naming_the_known_ones():
    with pytest.raises(ValueError) as err:
        _joint(type="hinge")
    assert "'hinge'" in str(err.value) and all(t in str(err.value) for t in JOINT_TYPES)


@pytest.mark.parametrize("make", [
    lambda: Pose(np.eye(3), [1.0, 2.0]),                     # translation of 2
    lambda: Pose(np.eye(3).ravel(), np.zeros(3)),            # a rotation given flat
    lambda: Pose(np.eye(3), [0.0, np.nan, 0.0]),
    lambda: Pose(np.diag([1.0, np.inf, 1.0]), np.zeros(3)),
    lambda: MassProperties(1.0, [0.0, 0.0, np.inf], np.eye(3)),
    lambda: MassProperties(1.0, np.zeros(3), np.eye(2)),
    lambda: MassProperties(-1.0, np.zeros(3), np.eye(3)),
    lambda: MassProperties(np.nan, np.zeros(3), np.eye(3)),
    lambda: _joint(origin=[0.0, 0.0]),
    lambda: _joint(axis=[0.0, 0.0, np.nan]),
    lambda: _joint(axis2=np.zeros((3, 1))),
    lambda: _joint(damping=np.inf),
    lambda: _joint(armature=[0.1, np.nan]),
    lambda: Limits(lower=np.nan),
    lambda: Limits(upper="high"),
    lambda: SpringDamper("s", "a", [0.0, 0.0], "b", np.zeros(3)),
    lambda: Coupling("j", "k", multiplier=np.inf),
    lambda: Motor("m", gear_ratio=np.nan),
    lambda: Body(GROUND, Pose(), MassProperties.zero()),
    lambda: Geometry("box", {"size": np.ones(3)}, role="decorative"),
    lambda: Assembly("a", (), (), gravity=[0.0, 0.0]),
])
def test_bad_values_are_value_errors(make):
    with pytest.raises(ValueError):
        make()


def test_objects_of_the_wrong_class_are_type_errors():
    with pytest.raises(TypeError):
        Body("b", np.eye(4), MassProperties.zero())
    with pytest.raises(TypeError):
        _joint(limits=(0.0, 1.0))
    with pytest.raises(TypeError, match="Joint"):
        Assembly("a", (Body("b", Pose(), MassProperties.zero()),), ("not a joint",))
    with pytest.raises(TypeError):
        Frame("f", "b", np.eye(4))


def test_arrays_are_kept_read_only_and_writable_inputs_are_copied():
    t = np.array([1.0, 2.0, 3.0])
    pose = Pose(np.eye(3), t)
    t[0] = 99.0
    assert pose.translation.tolist() == [1.0, 2.0, 3.0] and not pose.translation.flags.writeable
    with pytest.raises(ValueError):
        pose.translation[0] = 5.0
    # a read-only view of a writable array could change under the object: copied too
    base = np.zeros(6)
    view = base[:3]
    view.setflags(write=False)
    j = _joint(origin=view)
    base[0] = 7.0
    assert j.origin[0] == 0.0 and j.origin is not view


def test_read_only_arrays_are_shared_between_objects():
    pose = Pose(frozen(np.diag([1.0, -1.0, -1.0])), frozen(np.array([0.1, 0.2, 0.3])))
    j = _joint(origin=pose.translation)
    mp = MassProperties(2.0, pose.translation, frozen(np.eye(3)))
    assert j.origin is pose.translation and mp.com is pose.translation
    assert Pose(pose.rotation, pose.translation).rotation is pose.rotation


def test_numbers_are_kept_as_floats():
    lim = Limits(lower=-1, upper=2)
    assert type(lim.lower) is float and type(lim.upper) is float and lim.velocity is None
    assert Limits(lower=-np.inf).lower == -np.inf  # no bound
    mp = MassProperties(3, np.zeros(3), np.eye(3))
    assert type(mp.mass) is float
    assert _joint(armature=(0.1, 0.2)).armature == (0.1, 0.2)


def test_replace_checks_the_new_values_too():
    j = _joint(axis=[1.0, 0.0, 0.0])
    moved = dataclasses.replace(j, origin=[1.0, 2.0, 3.0])
    assert moved.origin.tolist() == [1.0, 2.0, 3.0] and moved.axis is j.axis and not moved.origin.flags.writeable
    with pytest.raises(ValueError):
        dataclasses.replace(j, type="screw")
    with pytest.raises(ValueError):
        dataclasses.replace(j, origin=[np.nan, 0.0, 0.0])


def test_pose_many_checks_every_row_and_shares_them():
    R = np.stack([np.eye(3), np.diag([1.0, -1.0, -1.0])])
    t = np.array([[0.0, 0.0, 1.0], [1.0, 2.0, 3.0]])
    poses = Pose.many(R, t)
    assert [p.translation.tolist() for p in poses] == t.tolist()
    assert all(not p.rotation.flags.writeable for p in poses)
    assert poses[0].rotation.base is poses[1].rotation.base  # rows of one read-only stack
    # a list of rows keeps each read-only row itself (the shared identity of Pose() among them)
    identity = Pose().rotation
    listed = Pose.many([identity, frozen(np.diag([1.0, -1.0, -1.0]))], t)
    assert listed[0].rotation is identity
    bad = t.copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError):
        Pose.many(R, bad)
    with pytest.raises(ValueError):
        Pose.many(R[:1], t)
    with pytest.raises(ValueError):
        Pose.many(np.zeros((2, 3, 2)), t)


def test_mass_properties_many_checks_every_row():
    m = np.array([1.0, 2.0])
    c = np.zeros((2, 3))
    J = np.stack([np.eye(3), 2 * np.eye(3)])
    mps = MassProperties.many(m, c, J)
    assert [mp.mass for mp in mps] == [1.0, 2.0] and mps[1].inertia[0, 0] == 2.0
    assert type(mps[0].mass) is float and not mps[1].com.flags.writeable
    for masses, coms, inertias in (([1.0, -2.0], c, J), ([1.0, np.nan], c, J), (m, c[:, :2], J),
                                   (m, c, J[:, :2]), (m, np.full((2, 3), np.inf), J), (m[:1], c, J)):
        with pytest.raises(ValueError):
            MassProperties.many(masses, coms, inertias)


def test_joint_many_checks_each_joint_as_the_constructor_does():
    rows = [dict(name="a", type="revolute", reference=GROUND, secondary="b", origin=[0.0, 0.0, 1.0],
                 axis=[1.0, 0.0, 0.0], damping=1),
            dict(name="b", type="fixed", reference="b", secondary="c")]
    joints = Joint.many(rows)
    assert [j.name for j in joints] == ["a", "b"] and joints[0].damping == 1.0 and type(joints[0].damping) is float
    assert joints[1].axis.tolist() == [0.0, 0.0, 1.0] and joints[1].limits.lower is None
    one = _joint(name="a", origin=[0.0, 0.0, 1.0], axis=[1.0, 0.0, 0.0], damping=1.0)
    assert all(np.array_equal(getattr(joints[0], f.name), getattr(one, f.name)) for f in dataclasses.fields(Joint)
               if isinstance(getattr(one, f.name), np.ndarray))
    assert not joints[0].origin.flags.writeable and joints[0].origin.base is joints[1].origin.base
    for bad, error in ((dict(rows[1], type="hinge"), ValueError), (dict(rows[1], axis=[0.0, np.nan, 0.0]), ValueError),
                       (dict(rows[1], orign=[0.0, 0.0, 0.0]), TypeError), ({"name": "c", "type": "fixed"}, TypeError),
                       (dict(rows[1], limits=None), TypeError)):
        with pytest.raises(error):
            Joint.many([rows[0], bad])
