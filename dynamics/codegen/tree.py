"""Model-specific C of the rigid-body tree: kinematics, ABA, RNEA, CRBA (seed 001, seed 002).

Each pass is unrolled body by body with the joint's placement, axis and motion subspace ``H*(k)``
as constants (:mod:`dynamics.codegen.emit` folds their zeros away); body inertias ``M(k)`` come from
the parameter array ``p`` (:func:`inertia_parameters`).  Names follow the seeds: ``R``, ``l`` the
pose of body k in its parent (``phi``), ``V`` body velocity, ``a`` Coriolis and ``b`` gyroscopic
terms (seed 001 Eq. 1), ``P`` articulated inertia, ``D``, ``G``, ``eps``, ``nu``, ``z`` of the
Riccati and ABA recursions (seed 001 Eqs. 33, 58), ``alpha`` accelerations, ``f`` inter-body forces,
``Rc`` composite inertias (seed 001 Algorithm 4.1).
"""

from __future__ import annotations

import numpy as np

from .. import joints as J
from .emit import Code, add, const, dot, matmul, mul, neg, sub
from .spatial import (body_inertia, force_cross, force_to_parent, inertia_times, inertia_to_parent, inverse_spd,
                      let66, motion_cross, motion_to_child)

__all__ = ["CodegenUnsupported", "TreeSpec", "inertia_parameters", "emit_poses", "emit_velocities", "emit_aba",
           "emit_rnea", "emit_crba_blocks", "declare", "INERTIA_FIELDS"]

#: the ten inertia parameters of each body, in ``p`` order
INERTIA_FIELDS = ("mass", "com[0]", "com[1]", "com[2]", "inertia[xx]", "inertia[xy]", "inertia[xz]",
                  "inertia[yy]", "inertia[yz]", "inertia[zz]")


#: above this many bodies the transform of inertias to the parent (``phi P phi*``, the largest part of
#: the unrolled ABA and CRBA) is a call of one static helper per body (``PREFIX_inertia_to_parent``)
#: rather than unrolled code, which halves the source and the compile time of large models
UNROLL_MAX_BODIES = 40


class CodegenUnsupported(ValueError):
    """The model has something the generator does not write (the message says what and why)."""


def inertia_parameters(model) -> tuple[list[str], list[float]]:
    """Names ``body.field`` and defaults of the inertia parameters (:data:`INERTIA_FIELDS` per body)."""
    names, values = [], []
    for k, body in enumerate(model.body_names):
        I = model.inertia_com[k]
        names += [f"{body}.{f}" for f in INERTIA_FIELDS]
        values += [float(model.mass[k]), *map(float, model.com[k]),
                   I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]]
    return names, [float(x) for x in values]


class TreeSpec:
    """The constants of a rigid-body tree the generator folds in.

    S[k] : list of n_k columns (6,) of ``H*(k)`` (body frame); q0[k], v0[k] : first q and v index.
    """

    def __init__(self, model, prefix: str = "model"):
        bad = sorted({t for t in model.joint_types if t == "universal"})
        if bad:
            raise CodegenUnsupported("universal joints have a configuration-dependent joint map H(k); the code "
                                     "generator writes constant maps only (model it as two revolute joints)")
        self.model = model
        self.prefix = prefix
        self.n = model.n_bodies
        self.parent = model.parent.tolist()
        self.children = model.tree.children
        self.S = [[[const(x) for x in row] for row in model.H_const[k][0]] for k in range(self.n)]
        self.q0 = model.q_offset.tolist()
        self.v0 = model.v_offset.tolist()
        self.nv_node = model.tree.nv_node.tolist()
        self.arm = [const(x) for x in model.armature]
        #: large models carry inertias to the parent with one compiled helper instead of unrolled code
        #: (the C compiler's time grows with the unrolled source: :data:`UNROLL_MAX_BODIES`)
        self.helpers = self.n > UNROLL_MAX_BODIES


def _rotation_about(R0, a, c, s):
    """``R0 Rot(a, theta)`` with ``c = cos theta``, ``s = sin theta`` symbols: entry-wise
    ``C + (R0 - C) c + (R0 ~a) s`` with ``C = (R0 a) a^T`` (Rodrigues)."""
    R0 = np.asarray(R0, float)
    a = np.asarray(a, float)
    C = np.outer(R0 @ a, a)
    Bm = R0 @ np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return [[add(const(C[i, j]), mul(const(R0[i, j] - C[i, j]), c), mul(const(Bm[i, j]), s)) for j in range(3)]
            for i in range(3)]


def _quaternion_matrix(code: Code, name: str, qw):
    """Rotation of a quaternion ``[w, x, y, z]`` of symbols, normalized first (as the numpy model)."""
    n = code.let(f"{name}n", f"1.0/sqrt({dot(qw, qw)})")
    w, x, y, z = code.lets(f"{name}q", [mul(c, n) for c in qw])
    e = lambda expr: code.let(f"{name}_{len(code.lines)}", expr)
    xx, yy, zz = e(mul(x, x)), e(mul(y, y)), e(mul(z, z))
    xy, xz, yz, wx, wy, wz = e(mul(x, y)), e(mul(x, z)), e(mul(y, z)), e(mul(w, x)), e(mul(w, y)), e(mul(w, z))
    t = lambda *xs: mul(2.0, add(*xs))
    return [[sub(1.0, t(yy, zz)), t(xy, neg(wz)), t(xz, wy)],
            [t(xy, wz), sub(1.0, t(xx, zz)), t(yz, neg(wx))],
            [t(xz, neg(wy)), t(yz, wx), sub(1.0, t(xx, yy))]]


def _joint_pose(code: Code, spec: TreeSpec, k: int, q):
    """(R, l) symbols of body k in its parent frame at ``q`` (list of C expressions of all q)."""
    m = spec.model
    t = J.JOINTS[m.joint_types[k]].moves_as
    R0 = [[const(x) for x in row] for row in m.placement_R[k]]
    p0 = [const(x) for x in m.placement_p[k]]
    qk = q[spec.q0[k]:spec.q0[k + 1]]
    ax = m.axis[k]
    R0a = [const(x) for x in m.placement_R[k] @ ax]
    angle, slide = J.axis_angle_coordinate(t), J.axis_slide_coordinate(t)
    if angle is not None:
        th = qk[angle]
        c, s = code.let(f"c{k}", f"cos({th})"), code.let(f"s{k}", f"sin({th})")
        R = _rotation_about(m.placement_R[k], ax, c, s)
    elif J.has_quaternion(t):
        RJ = _quaternion_matrix(code, f"quat{k}", qk[-4:])
        R = matmul(R0, RJ)
    else:
        R = R0
    if slide is not None:
        p = [add(p0[i], mul(R0a[i], qk[slide])) for i in range(3)]
    elif t == "planar":
        e1, e2 = J.plane_basis(ax)
        E1, E2 = [const(x) for x in m.placement_R[k] @ e1], [const(x) for x in m.placement_R[k] @ e2]
        p = [add(p0[i], mul(E1[i], qk[0]), mul(E2[i], qk[1])) for i in range(3)]
    elif t == "free":
        p = [add(p0[i], dot(R0[i], qk[:3])) for i in range(3)]
    else:
        p = p0
    return code.lets3(f"R{k}_", R), code.lets(f"l{k}_", p)


def emit_poses(code: Code, spec: TreeSpec, q, full: bool = False):
    """Relative poses of every body (list of (R, l)), spilled into ``X[k][12]`` (R row-major, l; the
    constant entries too with ``full``, for loops that read the array)."""
    code.comment("poses phi(parent(k), k) = [[R, ~l R], [0, R]] of the bodies in their parents (seed 002 Eq. 4)")
    out = []
    for k in range(spec.n):
        code.split()
        code.raw("{")
        R, l = _joint_pose(code, spec, k, q)
        x = code.spill("X", k, [R[i][j] for i in range(3) for j in range(3)] + list(l))
        if full:
            for i, e in enumerate(x):
                if isinstance(e, float):
                    code.store(f"w->X[{k}][{i}]", e)
        code.raw("}")
        out.append(([x[0:3], x[3:6], x[6:9]], x[9:12]))
    return out


def declare(code: Code, spec: TreeSpec, *arrays) -> None:
    """Work arrays ``w->NAME[n][width]`` of the passes (one row per body)."""
    for name, width in arrays:
        code.declare_work(name, spec.n, width)


def _joint_motion(spec: TreeSpec, k: int, x):
    """``H*(k) x_k`` (6 symbols) for the joint's part ``x_k`` of a generalized vector ``x``."""
    return _joint_motion_local(spec, k, x[spec.v0[k]:spec.v0[k + 1]])


def _joint_motion_local(spec: TreeSpec, k: int, xs):
    return [add(*(mul(col[i], xj) for col, xj in zip(spec.S[k], xs))) for i in range(6)]


def _gravity(spec: TreeSpec):
    """``alpha(ground) = [0; -g]`` (seed 002: gravity as the acceleration of the ground)."""
    return [0.0, 0.0, 0.0] + [const(-g) for g in spec.model.gravity]


def emit_velocities(code: Code, spec: TreeSpec, poses, v):
    """V(k) and a(k), base to tips (seed 001 Eq. 1, seed 002 Eq. 3), spilled into ``V`` and ``A``."""
    code.comment("scatter: V(k) = phi*(parent, k) V(parent) + H*(k) v_k; a(k) = V(k) x H*(k) v_k (seed 001 Eq. 1)")
    V, a = [None] * spec.n, [None] * spec.n
    for k in range(spec.n):
        code.split()
        code.raw("{")
        vJ = code.lets(f"vJ{k}_", _joint_motion(spec, k, v))
        par = spec.parent[k]
        Vp = [0.0] * 6 if par < 0 else motion_to_child(*poses[k], V[par], code, f"V{k}_")
        V[k] = code.spill("V", k, [add(x, y) for x, y in zip(Vp, vJ)])
        a[k] = code.spill("A", k, motion_cross(V[k], vJ))
        code.raw("}")
    return V, a


def _inertia(code: Code, k: int, base: int):
    return body_inertia(code, f"M{k}_", base + 10 * k)


def _gyroscopic(code: Code, k: int, V, M):
    """``b(k) = V(k) x* M(k) V(k)`` (seed 001 Eq. 1)."""
    return code.lets(f"b{k}_", force_cross(V, code.lets(f"h{k}_", inertia_times(M, V))))


def parent_inertia(code: Code, spec: TreeSpec, k: int, poses, P, array: str):
    """``phi P phi*`` of body k (seed 001 Eq. 33, Algorithm 4.1) into ``array[k]`` (upper triangle, 21):
    unrolled, or through the helper for large models (:attr:`TreeSpec.helpers`)."""
    if not spec.helpers:
        return _sym_spill(code, array, k, inertia_to_parent(code, f"T{k}_", *poses[k], P))
    src = [P[i][j] for i in range(6) for j in range(i, 6)]
    for i, e in enumerate(src):
        code.store(f"w->{array}in[{k}][{i}]", e)
    code.declare_work(f"{array}in", spec.n, 21)
    code.raw(f"{spec.prefix}_inertia_to_parent(w->X[{k}], w->{array}in[{k}], w->{array}[{k}]);")
    out = [[0.0] * 6 for _ in range(6)]
    idx = 0
    for i in range(6):
        for j in range(i, 6):
            out[i][j] = out[j][i] = f"w->{array}[{k}][{idx}]"
            idx += 1
    return out


def _sym_spill(code: Code, name: str, k: int, P):
    """Spill the upper triangle of a symmetric 6 x 6 into ``name[k][21]``; symbols reading it back."""
    flat = code.spill(name, k, [P[i][j] for i in range(6) for j in range(i, 6)])
    out = [[0.0] * 6 for _ in range(6)]
    it = iter(flat)
    for i in range(6):
        for j in range(i, 6):
            out[i][j] = out[j][i] = next(it)
    return out


def _articulated(code, spec, k, P, a_k, b_k, z_in, T):
    """One node of the gather of seed 001 Eqs. 33 and 58a-d: returns (P+, z+, G, nu)."""
    S, n = spec.S[k], spec.nv_node[k]
    z = code.lets(f"z{k}_", [add(x, y, *(zi[i] for zi in z_in)) for i, (x, y) in enumerate(zip(inertia_times(P, a_k), b_k))])
    if n == 0:
        return P, z, [], []
    U = [code.lets(f"U{k}_{j}_", inertia_times(P, S[j])) for j in range(n)]        # P H*(k), column j
    D = [[add(dot(S[i], U[j]), spec.arm[spec.v0[k] + i] if i == j else 0.0) for j in range(n)] for i in range(n)]
    D = [[code.let(f"D{k}_{i}{j}", D[i][j]) if i <= j else None for j in range(n)] for i in range(n)]
    D = [[D[min(i, j)][max(i, j)] for j in range(n)] for i in range(n)]
    Dinv = inverse_spd(code, f"D{k}_", D)
    G = [code.lets(f"G{k}_{j}_", [add(*(mul(U[i][r], Dinv[i][j]) for i in range(n))) for r in range(6)])
         for j in range(n)]
    eps = code.lets(f"eps{k}_", [sub(T[spec.v0[k] + j], dot(S[j], z)) for j in range(n)])
    nu = code.lets(f"nu{k}_", [dot(Dinv[j], eps) for j in range(n)])
    Pp = [[sub(P[r][c], add(*(mul(G[j][r], U[j][c]) for j in range(n)))) for c in range(6)] for r in range(6)]
    zp = [add(z[r], *(mul(G[j][r], eps[j]) for j in range(n))) for r in range(6)]
    return let66(code, f"Pp{k}_", Pp), code.lets(f"zp{k}_", zp), G, nu


def _gather_node(code, spec, k, base, poses, V, a, Pin, zin, T):
    """Block of body k of the ABA gather; returns (G spilled, nu spilled)."""
    code.split()
    code.raw("{")
    P = _inertia(code, k, base)
    b = _gyroscopic(code, k, V[k], P)
    for Pj in Pin[k]:
        P = [[add(P[r][c], Pj[r][c]) for c in range(6)] for r in range(6)]
    P = let66(code, f"P{k}_", P) if Pin[k] else P
    Pp, zp, G, nu = _articulated(code, spec, k, P, a[k], b, zin[k], T)
    G = [code.spill("G", k, [x for col in G for x in col])[6 * j:6 * j + 6] for j in range(len(G))] if G else []
    nu = code.spill("NU", k, nu) if nu else []
    par = spec.parent[k]
    if par >= 0:
        Pin[par].append(parent_inertia(code, spec, k, poses, Pp, "PP"))
        zin[par].append(code.spill("ZZ", k, force_to_parent(*poses[k], zp, code, f"z{k}_")))
    code.raw("}")
    return G, nu


def emit_aba(code: Code, spec: TreeSpec, q, v, T, qdd_out, base: int = 0):
    """Articulated-body forward dynamics (seed 001 Lemma 12, Eq. 58; Riccati gather Eq. 33): stores
    ``theta_ddot`` into the C lvalues ``qdd_out`` (nv)."""
    declare(code, spec, ("X", 12), ("V", 6), ("A", 6), ("PP", 21), ("ZZ", 6), ("G", 36), ("NU", 6), ("AL", 6))
    poses = emit_poses(code, spec, q, full=spec.helpers)
    V, a = emit_velocities(code, spec, poses, v)
    code.comment("gather (tips to base): P(k) = sum phi P+ phi* + M(k), D = H P H* + J, G = P H* D^-1, "
                 "z(k) = sum phi z+ + P a + b, eps = T - H z, nu = D^-1 eps, z+ = z + G eps (seed 001 Eqs. 33, 58a-d)")
    Pin = [[] for _ in range(spec.n)]
    zin = [[] for _ in range(spec.n)]
    G, nu = [None] * spec.n, [None] * spec.n
    for k in reversed(range(spec.n)):
        G[k], nu[k] = _gather_node(code, spec, k, base, poses, V, a, Pin, zin, T)
    code.comment("scatter (base to tips): alpha+ = phi* alpha(parent), theta_ddot = nu - G* alpha+, "
                 "alpha = alpha+ + H* theta_ddot + a (seed 001 Eqs. 58e-g)")
    alpha = [None] * spec.n
    for k in range(spec.n):
        code.split()
        code.raw("{")
        par = spec.parent[k]
        ap = code.lets(f"ap{k}_", motion_to_child(*poses[k], _gravity(spec) if par < 0 else alpha[par], code, f"ap{k}_"))
        th = code.lets(f"qdd{k}_", [sub(nu[k][j], dot(G[k][j], ap)) for j in range(spec.nv_node[k])])
        for j, x in enumerate(th):
            code.store(qdd_out[spec.v0[k] + j], x)
        if spec.children[k]:
            alpha[k] = code.spill("AL", k, [add(x, y, z) for x, y, z in zip(ap, _joint_motion_local(spec, k, th), a[k])])
        code.raw("}")


def emit_rnea(code: Code, spec: TreeSpec, q, v, qdd, tau_out, base: int = 0, gravity: bool = True):
    """Newton-Euler inverse dynamics (seed 001 Algorithm 3.1, Eq. 10): stores ``T`` into ``tau_out``."""
    declare(code, spec, ("X", 12), ("V", 6), ("A", 6), ("AL", 6), ("FF", 6))
    poses = emit_poses(code, spec, q)
    V, a = emit_velocities(code, spec, poses, v)
    code.comment("scatter: alpha(k) = phi*(parent, k) alpha(parent) + H*(k) theta_ddot_k + a(k) (seed 001 Eq. 10)")
    g = _gravity(spec) if gravity else [0.0] * 6
    alpha = [None] * spec.n
    for k in range(spec.n):
        code.split()
        code.raw("{")
        par = spec.parent[k]
        ap = motion_to_child(*poses[k], g if par < 0 else alpha[par], code, f"ap{k}_")
        alpha[k] = code.spill("AL", k, [add(x, y, z) for x, y, z in zip(ap, _joint_motion(spec, k, qdd), a[k])])
        code.raw("}")
    code.comment("gather: f(k) = M(k) alpha(k) + b(k) + sum phi(k, child) f(child), T(k) = H(k) f(k) + J(k) theta_ddot_k")
    fin = [[] for _ in range(spec.n)]
    for k in reversed(range(spec.n)):
        code.split()
        code.raw("{")
        M = _inertia(code, k, base)
        b = _gyroscopic(code, k, V[k], M)
        fk = code.lets(f"f{k}_", [add(x, y, *(fc[i] for fc in fin[k])) for i, (x, y) in
                                  enumerate(zip(inertia_times(M, alpha[k]), b))])
        for j in range(spec.nv_node[k]):
            i = spec.v0[k] + j
            code.store(tau_out[i], add(dot(spec.S[k][j], fk), mul(spec.arm[i], qdd[i])))
        par = spec.parent[k]
        if par >= 0:
            fin[par].append(code.spill("FF", k, force_to_parent(*poses[k], fk, code, f"f{k}_")))
        code.raw("}")


def emit_crba_blocks(code: Code, spec: TreeSpec, q, M_out: str, F_out: str, base: int = 0):
    """Composite inertias ``Rc(k)`` (seed 001 Algorithm 4.1, Eq. 20) and the diagonal blocks
    ``M(k, k) = H Rc H* + J``; stores ``F = Rc(k) H*(k)`` column by column into ``F_out[c][6]``; the
    poses are in ``X[k][12]`` (R row-major, l) for the ancestor walk (Algorithm 4.2)."""
    declare(code, spec, ("X", 12), ("RR", 21))
    poses = emit_poses(code, spec, q, full=True)
    nv = spec.model.nv
    code.comment("gather: Rc(k) = M(k) + sum phi Rc(child) phi*; M(k,k) = H Rc H* + J (seed 001 Eqs. 17, 20)")
    Rin = [[] for _ in range(spec.n)]
    for k in reversed(range(spec.n)):
        code.split()
        code.raw("{")
        Rc = _inertia(code, k, base)
        for Rj in Rin[k]:
            Rc = [[add(Rc[r][c], Rj[r][c]) for c in range(6)] for r in range(6)]
        Rc = let66(code, f"Rc{k}_", Rc) if Rin[k] else Rc
        cols = [code.lets(f"F{k}_{j}_", inertia_times(Rc, spec.S[k][j])) for j in range(spec.nv_node[k])]
        for j, Fc in enumerate(cols):
            c = spec.v0[k] + j
            for r in range(6):
                code.store(f"{F_out}[{c}][{r}]", Fc[r])
            for i in range(spec.nv_node[k]):
                ri = spec.v0[k] + i
                code.store(f"{M_out}[{ri * nv + c}]", add(dot(spec.S[k][i], Fc), spec.arm[c] if i == j else 0.0))
        if spec.parent[k] >= 0:
            Rin[spec.parent[k]].append(parent_inertia(code, spec, k, poses, Rc, "RR"))
        code.raw("}")
