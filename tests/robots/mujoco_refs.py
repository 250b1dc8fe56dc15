"""MuJoCo's dynamics of an MJCF file in our coordinates (written once for the robot tests).

Coordinates: hinge and slide ``qpos = q`` (our coordinates carry MuJoCo's ``ref``); a ball joint's quaternion acts in
MuJoCo's body frame, ours in a frame with the assembly's axes at the reference
configuration, so ``Q_mj = B^T Q B`` and ``omega_mj = B^T omega`` (``B``: the body's
world orientation at ``qpos0``); a free joint's ``qpos`` position is our position from the
joint's placement plus that placement (MuJoCo's is from the world origin), its quaternion
the body's world orientation ``Q B`` and its ``qvel = [R v; B^T omega]`` for our
``v = [omega; v]`` in our body frame (``R = Q``, world orientation of our frame).
``T`` maps our velocities to MuJoCo's (``qvel = T v``, ``qacc = T a + Tdot v`` with
``Tdot v = R (omega x v)`` in a free joint's linear rows), so ``M = T^T M_mj T`` and the
bias forces are ``T^T (qfrc_bias + M_mj Tdot v)`` in our coordinates.
"""

import functools

import numpy as np

from mbcompose.dynamics.spatial import matrix_to_quat, quat_to_matrix

mujoco = __import__("mujoco")
HINGE, SLIDE, BALL = (int(t) for t in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE,
                                        mujoco.mjtJoint.mjJNT_BALL))


def joint_name(m, k) -> str:
    """Our name of MuJoCo joint k (the reader's rule for unnamed joints)."""
    if m.joint(k).name:
        return m.joint(k).name
    body = m.jnt_bodyid[k]
    mine = [j for j in range(m.njnt) if m.jnt_bodyid[j] == body]
    bname = m.body(body).name or f"body{body}"
    return f"{bname}_joint" if len(mine) == 1 else f"{bname}_joint{mine.index(k)}"


def reference_orientations(m) -> np.ndarray:
    """(nbody, 3, 3) world orientations of the bodies at qpos0."""
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return d.xmat.reshape(-1, 3, 3).copy()


@functools.lru_cache(maxsize=16)
def joint_table(m, ours) -> tuple:
    """Per MuJoCo joint k: (type, qposadr, dofadr, body, our q slice, our v slice, our tree body index of a
    free joint or None), looked up by name once per pair of models (a right-hand side of a reference
    integrator calls :func:`to_mujoco` thousands of times)."""
    tree = getattr(ours, "tree_model", ours)
    rows = []
    for k in range(m.njnt):
        name = joint_name(m, k)
        jt = int(m.jnt_type[k])
        free = tree.joint_index(name) if jt == int(mujoco.mjtJoint.mjJNT_FREE) else None
        rows.append((jt, int(m.jnt_qposadr[k]), int(m.jnt_dofadr[k]), int(m.jnt_bodyid[k]), ours.q_slice(name),
                     ours.v_slice(name), free))
    return tuple(rows)


def to_mujoco(m, ours, q, v, B=None):
    """(qpos, T, Tdot v) for our state (q (nq,), v (nv,)): qvel = T v, qacc = T a + Tdot v."""
    B = reference_orientations(m) if B is None else B
    qpos = m.qpos0.copy()
    T = np.zeros((m.nv, ours.nv))
    tdot_v = np.zeros(m.nv)
    tree = getattr(ours, "tree_model", ours)
    for jt, qa, va, body, qs, vs, k_body in joint_table(m, ours):
        Bk = B[body]
        if jt in (HINGE, SLIDE):
            qpos[qa] = q[qs][0]
            T[va, vs.start] = 1.0
        elif jt == BALL:
            Q = quat_to_matrix(q[qs])
            qpos[qa:qa + 4] = matrix_to_quat(Bk.T @ Q @ Bk)
            T[va:va + 3, vs] = Bk.T
        else:
            Q = quat_to_matrix(q[qs][3:])                # our position is from the joint's placement
            qpos[qa:qa + 3] = tree.placement_p[k_body] + tree.placement_R[k_body] @ q[qs][:3]
            qpos[qa + 3:qa + 7] = matrix_to_quat(Q @ Bk)
            T[va:va + 3, vs.start + 3:vs.start + 6] = Q
            T[va + 3:va + 6, vs.start:vs.start + 3] = Bk.T
            w, vb = v[vs][:3], v[vs][3:]
            tdot_v[va:va + 3] = Q @ np.cross(w, vb)
    return qpos, T, tdot_v


def mujoco_dynamics(m, d, qpos, qvel):
    """MuJoCo's dense M and bias forces ``qfrc_bias`` (Coriolis, centrifugal, gravity)."""
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M, d.qfrc_bias.copy()
