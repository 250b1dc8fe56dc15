"""Loop classification by the rank of the closure Jacobian, against known mobilities.

References: planar four-bar (Grashof; 1 dof, spatial revolutes give 3 redundant
constraints), RSSR (Gruebler-Kutzbach 6*3 - 5 - 3 - 3 - 5 = 2: output + idle coupler
spin), Bennett linkage (1 dof, rank 3 although no two axes are parallel), a
general spatial 4R (immobile), a planar triangle (a structure).  Where the answer
relies on rank, the closure is also checked by finite displacements.
"""

import numpy as np
import pytest

from mbcompose import graph
from mbcompose.dynamics.spatial import axis_angle_to_matrix
from mbcompose.parsers.assembly import GROUND, Assembly

import graph_mechanisms as gm


def test_planar_fourbar_has_one_loop_six_equations_rank_3_mobility_1():
    an = graph.analyse(gm.fourbar())
    (loop,) = an.loops
    assert (loop.n_equations, loop.rank, loop.mobility, loop.redundant_constraints) == (6, 3, 1, 3)
    assert loop.kind == "redundant constraints" and loop.closes
    assert set(loop.joints) == {j.name for j in gm.fourbar().joints}
    assert an.dof == 1 and an.ok
    assert an.warnings == ()                    # expected of a planar loop: information, not a warning
    assert [(i.severity, i.code) for i in an.issues] == [("info", "planar-loop")]


def test_a_spatial_loop_with_redundant_constraints_still_warns():
    from mbcompose.graph.loops import planar_motion

    planar = np.array([[0, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0]], float)
    assert planar_motion(planar, 1e-9)             # rotations about y, translations in x-z
    tilted = planar.copy()
    tilted[2, 1] = 0.3                             # one axis leaves the plane's normal
    assert not planar_motion(tilted, 1e-9)
    lifted = planar.copy()
    lifted[4, 2] = 0.2                             # a translation with an out-of-plane part
    assert not planar_motion(lifted, 1e-9)


def test_fourbar_with_a_tilted_axis_is_over_constrained():
    an = graph.analyse(gm.fourbar(tilt=0.3))
    (loop,) = an.loops
    assert (loop.rank, loop.mobility) == (4, 0) and loop.overconstrained
    assert an.dof == 0 and "overconstrained-loop" in {i.code for i in an.warnings}
    assert an.ok  # a warning, not an error


def test_rssr_has_mobility_two_from_rank_six():
    an = graph.analyse(gm.rssr())
    (loop,) = an.loops
    assert (loop.n_freedoms, loop.rank, loop.mobility, loop.redundant_constraints) == (8, 6, 2, 0)
    assert loop.kind == "mobile" and an.dof == 2


def bennett(theta=0.7, a=0.2, alpha=np.pi / 6, b=0.3):
    """Bennett linkage by Denavit-Hartenberg chaining (Rz(theta) Tx(length) Rx(twist)): links a, b, a, b
    with twists alpha, beta, alpha, beta, a / sin(alpha) = b / sin(beta), joint angles
    (theta, phi, -theta, -phi) with tan(theta/2) tan(phi/2) = sin((beta+alpha)/2) / sin((beta-alpha)/2)."""
    beta = np.arcsin(b / a * np.sin(alpha))
    phi = 2 * np.arctan(np.sin((beta + alpha) / 2) / np.sin((beta - alpha) / 2) / np.tan(theta / 2))

    def dh(th, length, twist):
        T = np.eye(4)
        Rz = axis_angle_to_matrix([0, 0, 1], th)
        Rx = axis_angle_to_matrix([1, 0, 0], twist)
        T[:3, :3] = Rz @ Rx
        T[:3, 3] = Rz @ np.array([length, 0, 0])
        return T

    frames = [np.eye(4)]
    for th, ln, tw in ((theta, a, alpha), (phi, b, beta), (-theta, a, alpha), (-phi, b, beta)):
        frames.append(frames[-1] @ dh(th, ln, tw))
    return frames


def test_bennett_closure_by_construction():
    frames = bennett()
    assert np.allclose(frames[-1], np.eye(4), atol=1e-12)


def test_bennett_linkage_rank_3_mobility_1_with_no_parallel_axes():
    frames = bennett()
    origins = [f[:3, 3] for f in frames[:4]]
    axes = [f[:3, 2] for f in frames[:4]]
    assert all(abs(abs(axes[i] @ axes[j]) - 1) > 1e-3 for i in range(4) for j in range(i))
    bodies = tuple(gm._cube(n, o) for n, o in zip(("l1", "l2", "l3"), origins[1:]))
    chain = [GROUND, "l1", "l2", "l3", GROUND]
    joints = tuple(gm.joint(f"z{k}", "revolute", chain[k], chain[k + 1], origins[(k + 1) % 4], axes[(k + 1) % 4])
                   for k in range(4))
    an = graph.analyse(Assembly("bennett", bodies, joints))
    (loop,) = an.loops
    assert (loop.rank, loop.mobility, loop.redundant_constraints) == (3, 1, 3)
    assert an.dof == 1


def test_planar_triangle_of_revolutes_is_over_constrained():
    p = [np.array(v) for v in ([0, 0, 0], [0.1, 0.05, 0], [0.2, 0, 0])]
    bodies = (gm._cube("a", p[0]), gm._cube("b", p[2]))
    joints = (gm.joint("ga", "revolute", GROUND, "a", p[0]), gm.joint("ab", "revolute", "a", "b", p[1]),
              gm.joint("bg", "revolute", "b", GROUND, p[2]))
    an = graph.analyse(Assembly("triangle", bodies, joints))
    (loop,) = an.loops
    assert (loop.rank, loop.mobility, loop.redundant_constraints) == (3, 0, 3)
    assert loop.kind == "over-constrained" and an.dof == 0


def test_two_coupled_fourbars_dof_uses_stacked_rank():
    """Watt six-bar-like: two planar four-bar loops sharing the coupler; Gruebler (planar): 3*5 - 2*7 = 1."""
    P = {"O1": [0, 0, 0], "A": [0.05, 0.1, 0], "B": [0.25, 0.15, 0], "O2": [0.3, 0, 0],
         "C": [0.15, 0.25, 0], "D": [0.35, 0.3, 0], "O3": [0.45, 0.05, 0]}
    P = {k: np.array(v, float) for k, v in P.items()}
    bodies = tuple(gm._cube(n, x) for n, x in (("crank", P["A"] / 2), ("coupler", P["C"]), ("rocker", P["O2"]),
                                                ("link", P["D"]), ("out", P["O3"])))
    joints = (gm.joint("j1", "revolute", GROUND, "crank", P["O1"], actuated=True),
              gm.joint("j2", "revolute", "crank", "coupler", P["A"]),
              gm.joint("j3", "revolute", "coupler", "rocker", P["B"]),
              gm.joint("j4", "revolute", "rocker", GROUND, P["O2"]),
              gm.joint("j5", "revolute", "coupler", "link", P["C"]),
              gm.joint("j6", "revolute", "link", "out", P["D"]),
              gm.joint("j7", "revolute", "out", GROUND, P["O3"]))
    an = graph.analyse(Assembly("sixbar", bodies, joints))
    assert len(an.loops) == 2
    assert all(l.rank == 3 for l in an.loops)
    assert an.dof == 1 and (an.freedoms, an.closure_rank) == (7, 6)


@pytest.mark.parametrize("seed", range(8))
def test_dof_equals_nullity_of_stacked_closure_jacobian_by_finite_displacement(seed):
    """Independent route for the dof of random mechanisms: count the closure-preserving
    directions by perturbing joint coordinates around each loop and composing the exact
    finite transforms (no twists): dof = nullity of the numerically differentiated constraint map."""
    from scipy.linalg import null_space
    rng = np.random.default_rng(seed)
    a = gm.random_assembly(rng, 5, 2)
    an = graph.analyse(a)
    by = {j.name: j for j in an.reduced_joints}
    cols = []
    for j in sorted(an.reduced_joints, key=lambda j: j.name):
        cols += [(j.name, k) for k in range(j.nv)]

    def joint_transform(j, q):
        """Relative transform of the secondary body (about the assembly frame) for small coordinates q."""
        T = np.eye(4)
        def rot(axis, ang):
            M = np.eye(4)
            R = axis_angle_to_matrix(axis, ang)
            M[:3, :3] = R
            M[:3, 3] = j.origin - R @ j.origin
            return M
        def lin(axis, d):
            M = np.eye(4)
            M[:3, 3] = d * np.asarray(axis) / np.linalg.norm(axis)
            return M
        t = j.type
        if t in ("revolute", "continuous"):
            T = rot(j.axis, q[0])
        elif t == "prismatic":
            T = lin(j.axis, q[0])
        elif t == "cylindrical":
            T = rot(j.axis, q[0]) @ lin(j.axis, q[1])
        elif t == "universal":
            T = rot(j.axis, q[0]) @ rot(j.axis2, q[1])
        elif t == "spherical":
            T = rot([1, 0, 0], q[0]) @ rot([0, 1, 0], q[1]) @ rot([0, 0, 1], q[2])
        return T

    def residual(x):
        q = {}
        for (n, k), v in zip(cols, x):
            q.setdefault(n, np.zeros(by[n].nv))[k] = v
        out = []
        for loop in an.loops:
            T = np.eye(4)
            for n, s in zip(loop.joints, loop.signs):
                M = joint_transform(by[n], q.get(n, np.zeros(0)))
                T = T @ (M if s > 0 else np.linalg.inv(M))
            out.append(np.concatenate([(T[:3, :3] - np.eye(3)).ravel(), T[:3, 3]]))
        return np.concatenate(out) if out else np.zeros(0)

    h = 1e-6
    n = len(cols)
    if not an.loops:
        assert an.dof == n
        return
    J = np.array([(residual(h * e) - residual(-h * e)) / (2 * h) for e in np.eye(n)]).T
    assert an.dof == null_space(J, rcond=1e-6).shape[1]
