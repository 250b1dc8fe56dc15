"""Seeded random trees for the dynamics tests, and their Pinocchio twins.

``random_bodies(rng, n, types)`` draws a branching tree (parent[k] < k, a few
roots) with random placements, axes and mass properties.  ``to_pinocchio``
builds the same mechanism through Pinocchio's Python API; the conventions are
mapped explicitly:

* free flyer: ours q = [p, w, x, y, z], v = [omega; v]; Pinocchio q = [p, x, y, z, w],
  v = [v; omega] (both in the body frame);
* spherical: quaternion order [w, x, y, z] vs [x, y, z, w];
* planar: ours (x, y, theta) with a general normal; Pinocchio's JointModelPlanar
  is in the xy plane of its joint frame with q = (x, y, cos, sin): the joint
  placement is rotated by [e1 e2 n] and the body frame offset by its transpose;
* cylindrical: a Pinocchio composite (RevoluteUnaligned, PrismaticUnaligned);
* universal: a composite of two RevoluteUnaligned joints;
* fixed: the body is appended to its parent's joint (Pinocchio has no fixed joint).
"""

from __future__ import annotations

import numpy as np

from mbcompose import dynamics as dyn
from mbcompose.dynamics.joints import plane_basis
from mbcompose.dynamics.spatial import quat_to_matrix

ALL_TYPES = ("fixed", "revolute", "continuous", "prismatic", "cylindrical", "universal", "spherical",
             "planar", "free")


def random_rotation(rng):
    return quat_to_matrix(rng.normal(size=4))


def random_unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def random_inertia(rng):
    A = rng.normal(size=(3, 3))
    return A @ A.T * 0.1 + np.eye(3) * 0.05


def random_bodies(rng, n, types=ALL_TYPES, p_root=0.08, gravity=True):
    bodies = []
    for k in range(n):
        parent = -1 if (k == 0 or rng.random() < p_root) else int(rng.integers(0, k))
        t = str(rng.choice(types))
        if k == 0 and t == "fixed":
            t = "revolute"
        axis = random_unit(rng)
        axis2 = None
        if t == "universal":
            axis2 = random_unit(rng)
        bodies.append(dyn.BodySpec(
            name=f"b{k}", parent=parent, joint_type=t, joint_name=f"j{k}",
            placement_rotation=random_rotation(rng), placement_translation=rng.normal(size=3) * 0.5,
            mass=float(rng.uniform(0.5, 3.0)), com=rng.normal(size=3) * 0.2, inertia=random_inertia(rng),
            axis=tuple(axis), axis2=None if axis2 is None else tuple(axis2)))
    return bodies


def random_model(seed, n=None, types=ALL_TYPES, n_max=40):
    rng = np.random.default_rng(seed)
    if n is None:
        n = int(rng.integers(2, n_max + 1))
    bodies = random_bodies(rng, n, types)
    return dyn.build_model(bodies), rng


def random_q(model, rng):
    """A random configuration (unit quaternions), as the model's coordinates."""
    q = model.neutral()
    v = rng.normal(size=model.nv)
    from mbcompose.dynamics.kinematics import integrate
    return integrate(model, q, v, 1.0)


# ---------------------------------------------------------------------------
# Pinocchio twin
# ---------------------------------------------------------------------------

def to_pinocchio(model):
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    jid = {}      # our body -> pin joint id
    off = {}      # our body -> pose of our body frame in pin joint frame
    for k in dfs_order(model):
        t = model.joint_types[k]
        p = model.parent[k]
        pj = 0 if p < 0 else jid[p]
        poff = pin.SE3.Identity() if p < 0 else off[p]
        place = poff * pin.SE3(model.placement_R[k], model.placement_p[k])
        a, a2 = model.axis[k], model.axis2[k]
        body_off = pin.SE3.Identity()
        if t == "fixed":
            jid[k] = pj
            off[k] = place
            pm.appendBodyToJoint(pj, pin.Inertia(model.mass[k], model.com[k], model.inertia_com[k]), place)
            continue
        if t in ("revolute", "continuous"):
            jm = pin.JointModelRevoluteUnaligned(a)
        elif t == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(a)
        elif t == "cylindrical":
            jm = pin.JointModelComposite()
            jm.addJoint(pin.JointModelRevoluteUnaligned(a))
            jm.addJoint(pin.JointModelPrismaticUnaligned(a))
        elif t == "universal":
            jm = pin.JointModelComposite()
            jm.addJoint(pin.JointModelRevoluteUnaligned(a))
            jm.addJoint(pin.JointModelRevoluteUnaligned(a2))
        elif t == "spherical":
            jm = pin.JointModelSpherical()
        elif t == "planar":
            e1, e2 = plane_basis(a)
            Rb = np.column_stack([e1, e2, a])
            place = place * pin.SE3(Rb, np.zeros(3))
            body_off = pin.SE3(Rb.T, np.zeros(3))
            jm = pin.JointModelPlanar()
        elif t == "free":
            jm = pin.JointModelFreeFlyer()
        else:
            raise ValueError(t)
        j = pm.addJoint(pj, jm, place, model.joint_names[k])
        jid[k] = j
        off[k] = body_off
        pm.appendBodyToJoint(j, pin.Inertia(model.mass[k], model.com[k], model.inertia_com[k]), body_off)
    return pm, jid, off


def dfs_order(model):
    """Depth-first body order: Pinocchio needs every joint's subtree to be contiguous."""
    from mbcompose.dynamics.sko import topological_order

    return [int(k) for k in topological_order(model.parent)]


def q_to_pin(model, q):
    out = []
    for k in dfs_order(model):
        t = model.joint_types[k]
        qk = q[model.q_slice(k)]
        if t == "spherical":
            out.append(np.r_[qk[1:], qk[0]])
        elif t == "free":
            out.append(np.r_[qk[:3], qk[4:7], qk[3]])
        elif t == "planar":
            out.append(np.r_[qk[0], qk[1], np.cos(qk[2]), np.sin(qk[2])])
        else:
            out.append(qk)
    return np.concatenate(out + [np.zeros(0)])


def v_perm(model):
    """perm with v_pin = v_ours[perm] (free flyer: linear part first in Pinocchio)."""
    perm = []
    for k in dfs_order(model):
        t = model.joint_types[k]
        s = model.v_slice(k)
        idx = list(range(s.start, s.stop))
        if t == "free":
            idx = idx[3:] + idx[:3]
        perm.extend(idx)
    return np.array(perm, dtype=int)


def fext_to_pin(model, jid, off, f_ext):
    import pinocchio as pin

    pm_nj = max(jid.values()) + 1 if jid else 1
    fs = [pin.Force.Zero() for _ in range(pm_nj)]
    for k in range(model.n_bodies):
        f = pin.Force(f_ext[k, 3:], f_ext[k, :3])   # pinocchio: linear first
        fs[jid[k]] = fs[jid[k]] + off[k].act(f)
    return fs
