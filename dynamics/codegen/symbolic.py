"""Closed forms of a small model's dynamics with sympy, written as C and LaTeX (issue 28, ``--symbolic``).

For a rigid-body tree (``kind == "tree"``) :func:`symbolic_model` builds, as sympy expressions of the
joint coordinates ``q`` (nq), velocities ``v`` (nv), forces ``tau`` (nv) and the inertia parameters
``p`` (the first ``10 n_bodies`` entries of the numeric generator's parameter array,
:func:`dynamics.codegen.tree.inertia_parameters`: per body mass, centre of mass, inertia about it):

* ``M(q)`` (nv, nv): ``M e_j`` is the Newton-Euler inverse dynamics with ``v = 0``, no gravity and
  ``a = e_j`` (seed 001 Algorithm 3.1; rotor inertia on the diagonal);
* ``h(q, v)`` (nv,): Coriolis, centrifugal and gravity forces, the inverse dynamics with ``a = 0``
  (gravity as the acceleration ``[0; -g]`` of the ground, seed 002);
* ``qdd = M^-1 (tau - h)`` (nv,), solved by an unpivoted LU factorization of the symmetric positive
  definite ``M`` (its entries named first, so the closed form stays as short as the factorization).

Body frames and spatial vectors as :mod:`dynamics.codegen.spatial` (``[angular; linear]``, the pose of
body k in its parent ``R = R0 Rot(axis, q)``, ``l = p0 (+ R0 axis q)``, seed 002 Eqs. 3-4 and 14).

For an embedded closed chain (``kind == "embedded"``) the expressions use the numeric generator's
partition (:func:`dynamics.codegen.closed.partition`: the model's default split, fixed at the reference
configuration) and take the *full* tree state as input: the dependent coordinates have no closed form
in general, so ``q`` (nq) must be closed and ``v`` (nv) consistent (``G v = 0``), as for the numpy
reference.  With the kept closure rows ``e(q)`` (:mod:`dynamics.closed.closure`: ``n . R_a^T (x_b -
x_a)`` and ``n . R_a^T R_b u``; a joint coupling's ``s_f - p(s_l)``, :mod:`dynamics.closed.coupling`),
``G = de/dq``, ``gamma = Gdot v`` and ``X = [I; -G_d^-1 G_i]``
(rows in tree order, seed 000 sections 5-6):

* ``M_r(q) = X^T M X`` (n_i, n_i) and ``h_r(q, v) = X^T (h + M c)`` (n_i,), ``c = [0; -G_d^-1 gamma]``;
* ``qdd = X M_r^-1 (X^T tau - h_r) + c`` (nv,), every tree joint's acceleration.

Only one-coordinate joints that move as revolute or prismatic joints (and fixed joints) are written,
and only small models: at most :data:`MAX_NV` velocity coordinates and :data:`MAX_BODIES` bodies
(the closed forms grow quickly with the depth of the tree); beyond that :class:`SymbolicTooLarge`.

:func:`generate_symbolic` writes the expressions with common subexpressions eliminated
(``sympy.cse``) as C99 (``sympy.ccode``)::

    void PREFIX_sym_mass_matrix(const double *p, const double *q, double *M);           nv x nv or n_i x n_i
    void PREFIX_sym_bias(const double *p, const double *q, const double *v, double *h); nv or n_i
    void PREFIX_sym_forward_dynamics(const double *p, const double *q, const double *v,
                                     const double *tau, double *qdd);                  nv

and as LaTeX (``sympy.latex``) in a Markdown file for the report.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .. import joints as J
from .emit import const
from .tree import CodegenUnsupported, inertia_parameters

log = logging.getLogger(__name__)

__all__ = [
    "MAX_BODIES",
    "MAX_NV",
    "SymbolicModel",
    "SymbolicSource",
    "SymbolicTooLarge",
    "generate_symbolic",
    "symbolic_model",
]

#: the largest model the closed forms are written for (velocity coordinates of the tree)
MAX_NV = 6
#: ... and bodies of the tree
MAX_BODIES = 12


class SymbolicTooLarge(CodegenUnsupported):
    """The model is above the size the closed forms are written for (:data:`MAX_NV`, :data:`MAX_BODIES`)."""


@dataclass(frozen=True)
class SymbolicModel:
    """Closed forms of one model (see the module docstring).

    kind : "tree" or "embedded"; q, v, tau, p : tuples of the input symbols (nq, nv, nv, 10 n_bodies);
    p_defaults : (10 n_bodies,) the model's values of ``p``; M : mass matrix (nv, nv) or ``M_r``
    (n_i, n_i); h : bias (nv,) or ``h_r`` (n_i,); qdd : (nv,) accelerations; independent_v : the tree
    velocity indices of the independent coordinates (all of them for a tree); joint_names : the joint
    of each coordinate (fixed joints have none), body_names : of the tree, for the symbol table.
    """

    kind: str
    q: tuple
    v: tuple
    tau: tuple
    p: tuple
    p_defaults: tuple
    M: sp.Matrix
    h: sp.Matrix
    qdd: sp.Matrix
    independent_v: tuple
    joint_names: tuple
    body_names: tuple


@dataclass(frozen=True)
class SymbolicSource:
    """C (``source``, ``header``) and LaTeX-in-Markdown (``latex``) of a :class:`SymbolicModel`."""

    prefix: str
    source: str
    header: str
    latex: str
    model: SymbolicModel


# ==================== checks

def _check_model(model):
    """The tree of ``model``; refuses kinds, joint types and sizes the closed forms are not written for."""
    kind = getattr(model, "kind", None)
    if kind not in ("tree", "embedded"):
        raise CodegenUnsupported(f"symbolic closed forms take rigid-body trees and embedded closed chains, not "
                                 f"{kind or type(model).__name__!r} models")
    tree = model.tree_model if kind == "embedded" else model
    if tree.nv > MAX_NV or tree.n_bodies > MAX_BODIES:
        raise SymbolicTooLarge(f"--symbolic writes closed forms for small models only (at most {MAX_NV} velocity "
                               f"coordinates and {MAX_BODIES} bodies); this one has nv = {tree.nv} and "
                               f"{tree.n_bodies} bodies: use the numeric C (without --symbolic)")
    bad = sorted({t for t in tree.joint_types if not (J.JOINTS[t].nv == 0 or J.JOINTS[t].one_coordinate)})
    if bad:
        raise CodegenUnsupported(f"--symbolic writes one-coordinate revolute and prismatic joints only, not "
                                 f"{', '.join(bad)}")
    return tree


# ==================== spatial algebra on sympy matrices (body frames, [angular; linear])

def _skew(x):
    return sp.Matrix([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def _num(A):
    """A sympy matrix of generation-time constants (structural zeros exact, :func:`codegen.emit.const`)."""
    A = np.atleast_2d(np.asarray(A, float))
    def entry(x):
        x = const(x)
        return sp.Integer(int(x)) if x == int(x) else sp.Float(x)

    return sp.Matrix(A.shape[0], A.shape[1], lambda i, j: entry(A[i, j]))


def _joint_pose(tree, k, qk):
    """(R (3, 3), l (3,)) of body k in its parent at coordinate ``qk`` (None for a fixed joint)."""
    R0, p0 = _num(tree.placement_R[k]), _num(tree.placement_p[k]).reshape(3, 1)
    axis = np.asarray(tree.axis[k], float)
    moves = J.JOINTS[tree.joint_types[k]].moves_as
    if moves == "revolute":
        a = _num(axis).reshape(3, 1)
        K = _skew(a)
        Rj = sp.eye(3) + sp.sin(qk) * K + (1 - sp.cos(qk)) * K * K
        return R0 * Rj, p0
    if moves == "prismatic":
        return R0, p0 + _num(tree.placement_R[k] @ axis).reshape(3, 1) * qk
    return R0, p0


def _to_child(R, l, m):
    """``phi* m = [R^T w; R^T (v + w x l)]`` (seed 002 Eq. 3)."""
    w, u = m[:3, 0], m[3:, 0]
    return (R.T * w).col_join(R.T * (u + w.cross(l)))


def _to_parent(R, l, f):
    """``phi f = [R n + l x (R f); R f]``."""
    Rf = R * f[3:, 0]
    return (R * f[:3, 0] + l.cross(Rf)).col_join(Rf)


def _motion_cross(V, m):
    w, u = V[:3, 0], V[3:, 0]
    return w.cross(m[:3, 0]).col_join(w.cross(m[3:, 0]) + u.cross(m[:3, 0]))


def _force_cross(V, f):
    w, u = V[:3, 0], V[3:, 0]
    return (w.cross(f[:3, 0]) + u.cross(f[3:, 0])).col_join(w.cross(f[3:, 0]))


def _body_inertia(pk):
    """Spatial inertia about the body origin, ``[[I_c - m ~c ~c, m ~c], [-m ~c, m 1]]`` (seed 002 Eq. 14),
    from the ten parameters ``pk`` (mass, com, Ixx, Ixy, Ixz, Iyy, Iyz, Izz about the centre of mass)."""
    m, c = pk[0], sp.Matrix(pk[1:4])
    Ic = sp.Matrix([[pk[4], pk[5], pk[6]], [pk[5], pk[7], pk[8]], [pk[6], pk[8], pk[9]]])
    C = _skew(c)
    return (Ic - m * C * C).row_join(m * C).col_join((-m * C).row_join(m * sp.eye(3)))


# ==================== tree: Newton-Euler, M, h, qdd

def _tree_parts(tree, q, p):
    """Per body: (parent, pose (R, l), joint columns S (6, n_k), velocity indices, spatial inertia)."""
    parts = []
    for k in range(tree.n_bodies):
        q0, q1 = int(tree.q_offset[k]), int(tree.q_offset[k + 1])
        v0, v1 = int(tree.v_offset[k]), int(tree.v_offset[k + 1])
        R, l = _joint_pose(tree, k, q[q0] if q1 > q0 else 0)
        H = np.asarray(tree.H_const[k][0], float).reshape(v1 - v0, 6)
        S = _num(H.T) if v1 > v0 else sp.zeros(6, 0)
        parts.append((int(tree.parent[k]), R, l, S, list(range(v0, v1)), _body_inertia(p[10 * k:10 * k + 10])))
    return parts


def newton_euler(tree, parts, v, a, gravity: bool = True) -> sp.Matrix:
    """``tau = M(q) a + h(q, v)`` (nv,) by the Newton-Euler recursion (seed 001 Algorithm 3.1): body
    velocities and accelerations base to tips, forces tips to base; ``a_ground = [0; -g]``."""
    n = tree.n_bodies
    g = _num(tree.gravity).reshape(3, 1) if gravity else sp.zeros(3, 1)
    base = sp.zeros(3, 1).col_join(-g)
    V, A, f = [None] * n, [None] * n, [None] * n
    for k, (par, R, l, S, idx, I) in enumerate(parts):
        vJ = S * sp.Matrix([v[i] for i in idx]) if idx else sp.zeros(6, 1)
        aJ = S * sp.Matrix([a[i] for i in idx]) if idx else sp.zeros(6, 1)
        Vp = sp.zeros(6, 1) if par < 0 else V[par]
        Ap = base if par < 0 else A[par]
        V[k] = _to_child(R, l, Vp) + vJ
        A[k] = _to_child(R, l, Ap) + aJ + _motion_cross(V[k], vJ)
        f[k] = I * A[k] + _force_cross(V[k], I * V[k])
    tau = [sp.S.Zero] * tree.nv
    for k in reversed(range(n)):                  # parents precede their children (dynamics.model)
        par, R, l, S, idx, _ = parts[k]
        for c, i in enumerate(idx):
            tau[i] = (S[:, c].T * f[k])[0, 0] + float(tree.armature[i]) * a[i]
        if par >= 0:
            f[par] = f[par] + _to_parent(R, l, f[k])
    return sp.Matrix(tau)


def _solve_spd(M, r, name: str):
    """``M^-1 r`` by an unpivoted LU factorization of named entries (``M`` symmetric positive definite),
    the names then replaced by the entries."""
    n = M.shape[0]
    Ms = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"{name}_{min(i, j)}{max(i, j)}"))
    rs = sp.Matrix(n, 1, lambda i, j: sp.Symbol(f"{name}_r{i}"))
    x = Ms.LUsolve(rs)
    sub = {Ms[i, j]: M[i, j] for i in range(n) for j in range(n)} | {rs[i]: r[i] for i in range(n)}
    return x.xreplace(sub)


def _inverse_named(A, name: str):
    """``A^-1`` of a small square matrix as its adjugate over its determinant (Cramer), formed on named
    entries that are then replaced by ``A``'s (no simplification of the entries)."""
    n = A.shape[0]
    As = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"{name}_{i}{j}"))
    inv = As.adjugate(method="berkowitz") / As.det(method="berkowitz")
    return inv.xreplace({As[i, j]: A[i, j] for i in range(n) for j in range(n)})


def _tree_forms(tree, q, v, p):
    """(M, h) of the tree: Newton-Euler columns and the bias."""
    parts = _tree_parts(tree, q, p)
    zero = [sp.S.Zero] * tree.nv
    cols = [newton_euler(tree, parts, zero, [sp.S.One if i == j else sp.S.Zero for i in range(tree.nv)],
                         gravity=False) for j in range(tree.nv)]
    M = sp.Matrix.hstack(*cols) if cols else sp.zeros(0, 0)
    M = sp.Matrix(tree.nv, tree.nv, lambda i, j: M[min(i, j), max(i, j)])
    return M, newton_euler(tree, parts, v, zero)


# ==================== embedded closed chains: closure, null-space basis, reduced dynamics

def _world_poses(tree, parts):
    """World rotation and origin of every body ({k: R}, {k: p}); the ground, -1, is I, 0."""
    Rw, pw = {-1: sp.eye(3)}, {-1: sp.zeros(3, 1)}
    for k, (par, R, l, *_) in enumerate(parts):
        Rw[k] = Rw[par] * R
        pw[k] = pw[par] + Rw[par] * l
    return Rw, pw


def _coupling_row(coupling, q) -> sp.Expr:
    """``s_f - p(s_l)`` of a joint coupling (:mod:`dynamics.closed.coupling`), ``s = sum c q``."""
    side = lambda terms: sp.Add(*(_num(c) * q[iq] for iq, _, c in terms))
    x = side(coupling.leader)
    return side(coupling.follower) - sp.Add(*(_num(a) * x ** k for k, a in enumerate(coupling.coefficients)))


def closure_rows(em, parts, rows, q=()) -> sp.Matrix:
    """The kept closure rows ``e(q)`` (:mod:`dynamics.closed.closure`): ``n . R_a^T (x_b - x_a)`` for
    position rows, ``n . R_a^T R_b u`` for orientation rows, ``R_a = R_w(a) R_a,chord`` and ``x_a =
    p_w(a) + R_w(a) p_a,chord`` (likewise b); a joint coupling's row is ``s_f - p(s_l)`` of the
    coordinates ``q``."""
    from .closed import _row_kind

    cs, n = em.chord_set, em.tree_model.n_bodies
    Rw, pw = _world_poses(em.tree_model, parts)
    out = []
    for r in rows:
        if r >= cs.n_rows:
            out.append(_coupling_row(em.couplings[r - cs.n_rows], q))
            continue
        kind, c, nrm, u = _row_kind(cs, r)
        a, b = (int(x) if int(x) < n else -1 for x in (cs.body_a[c], cs.body_b[c]))
        Ra, Rb = Rw[a] * _num(cs.R_a[c]), Rw[b] * _num(cs.R_b[c])
        nrm = _num(nrm).reshape(3, 1)
        if kind == "p":
            xa = pw[a] + Rw[a] * _num(cs.p_a[c]).reshape(3, 1)
            xb = pw[b] + Rw[b] * _num(cs.p_b[c]).reshape(3, 1)
            out.append((nrm.T * Ra.T * (xb - xa))[0, 0])
        else:
            out.append((nrm.T * Ra.T * Rb * _num(u).reshape(3, 1))[0, 0])
    return sp.Matrix(out)


def _embedded_forms(em, q, v, tau, p):
    """(M_r, h_r, qdd, independent velocity indices) of an embedded chain (see the module docstring);
    the tree's q and v coincide coordinate by coordinate (one-coordinate joints)."""
    from .closed import partition

    tree = em.tree_model
    dep_v, _, ind_v, _, rows = partition(em)
    parts = _tree_parts(tree, q, p)
    M, h = _tree_forms(tree, q, v, p)
    e = closure_rows(em, parts, rows, q)
    qv = sp.Matrix(q)
    G = e.jacobian(qv)
    gamma = (G * sp.Matrix(v)).jacobian(qv) * sp.Matrix(v)
    Gd, Gi = G[:, dep_v], G[:, ind_v]
    Gd_inv = _inverse_named(Gd, "Gd")
    X = sp.zeros(tree.nv, len(ind_v))
    c = sp.zeros(tree.nv, 1)
    Xd, cd = -Gd_inv * Gi, -Gd_inv * gamma
    for col, j in enumerate(ind_v):
        X[j, col] = 1
    for r, j in enumerate(dep_v):
        X[j, :] = Xd[r, :]
        c[j] = cd[r]
    Mr = X.T * M * X
    hr = X.T * (h + M * c)
    ai = _solve_spd(Mr, X.T * sp.Matrix(tau) - hr, "Mr")
    return Mr, hr, X * ai + c, tuple(ind_v)


def symbolic_model(model) -> SymbolicModel:
    """Closed forms of ``model`` (a small tree or embedded closed chain; see the module docstring).

    Raises :class:`SymbolicTooLarge` above :data:`MAX_NV` / :data:`MAX_BODIES` and
    :class:`CodegenUnsupported` for joints, kinds or couplings it does not write.
    """
    tree = _check_model(model)
    q = tuple(sp.symbols(f"q0:{tree.nq}", real=True)) if tree.nq else ()
    v = tuple(sp.symbols(f"v0:{tree.nv}", real=True)) if tree.nv else ()
    tau = tuple(sp.symbols(f"tau0:{tree.nv}", real=True)) if tree.nv else ()
    names, defaults = inertia_parameters(tree)
    p = tuple(sp.symbols(f"p0:{len(names)}", real=True))
    if model.kind == "tree":
        M, h = _tree_forms(tree, q, v, p)
        qdd, ind = _solve_spd(M, sp.Matrix(tau) - h, "M"), tuple(range(tree.nv))
    else:
        M, h, qdd, ind = _embedded_forms(model, q, v, tau, p)
    coordinates = tuple(name for k, name in enumerate(tree.joint_names) if tree.q_offset[k + 1] > tree.q_offset[k])
    return SymbolicModel(model.kind, q, v, tau, p, tuple(defaults), M, h, qdd, ind, coordinates, tuple(tree.body_names))


# ==================== writers: C (cse + ccode) and LaTeX

def _c_function(signature: str, outputs: list[tuple[str, sp.Expr]], arrays: dict) -> str:
    """``signature { ... }`` assigning ``outputs`` (C lvalue, expression) after ``sympy.cse``; ``arrays``
    maps input symbols to C symbols (``q[0]``...)."""
    exprs = [sp.sympify(e).xreplace(arrays) for _, e in outputs]
    tmp = sp.numbered_symbols("x")
    reps, reduced = sp.cse(exprs, symbols=tmp) if exprs else ([], [])
    body = [f"  const double {sp.ccode(s)} = {sp.ccode(e)};" for s, e in reps]
    body += [f"  {lhs} = {sp.ccode(e)};" for (lhs, _), e in zip(outputs, reduced)]
    unused = {"p", "q", "v", "tau"} - {str(s).split("[")[0] for e in exprs for s in e.free_symbols}
    args = [a.split("*")[-1].strip() for a in signature[signature.index("(") + 1:-1].split(",")]
    voids = [f"  (void){a};" for a in args if a in unused]
    return f"{signature}\n{{\n" + "\n".join(voids + body) + "\n}\n"


def _arrays(sm: SymbolicModel) -> dict:
    out = {}
    for name, syms in (("q", sm.q), ("v", sm.v), ("tau", sm.tau), ("p", sm.p)):
        out |= {s: sp.Symbol(f"{name}[{i}]", real=True) for i, s in enumerate(syms)}
    return out


def c_source(sm: SymbolicModel, prefix: str) -> tuple[str, str]:
    """(source, header) of ``PREFIX_sym_mass_matrix``, ``PREFIX_sym_bias``, ``PREFIX_sym_forward_dynamics``."""
    arr, n_i, nv = _arrays(sm), sm.M.shape[0], len(sm.v)
    sig_M = f"void {prefix}_sym_mass_matrix(const double *p, const double *q, double *M)"
    sig_h = f"void {prefix}_sym_bias(const double *p, const double *q, const double *v, double *h)"
    sig_f = (f"void {prefix}_sym_forward_dynamics(const double *p, const double *q, const double *v, "
             f"const double *tau, double *qdd)")
    M_out = [(f"M[{i * n_i + j}]", sm.M[i, j]) for i in range(n_i) for j in range(n_i)]
    what = "M(q)" if sm.kind == "tree" else "M_r(q) = X^T M X in the independent coordinates"
    bias = "h(q, v)" if sm.kind == "tree" else "h_r(q, v) = X^T (h + M c)"
    src = [(f"/* {prefix}_sym.c: closed forms of a {sm.kind} model (nq = {len(sm.q)}, nv = {nv}), sympy with common "
            "subexpressions eliminated;\n * generated by mbcompose (dynamics/codegen/symbolic.py). p: the inertia "
            f"parameters of {prefix}.c's p (same order). */"),
           "#include <math.h>\n",
           f"/* {what}, {n_i} x {n_i}, row-major */", _c_function(sig_M, M_out, arr),
           f"/* {bias} (Coriolis, centrifugal, gravity), {n_i} */",
           _c_function(sig_h, [(f"h[{i}]", sm.h[i]) for i in range(n_i)], arr),
           f"/* qdd of every tree joint, {nv} (tau: forces at the tree joints) */",
           _c_function(sig_f, [(f"qdd[{i}]", sm.qdd[i]) for i in range(nv)], arr)]
    P = prefix.upper()
    header = (f"/* {prefix}_sym.h: closed forms generated by mbcompose (dynamics/codegen/symbolic.py). */\n"
              f"#ifndef {P}_SYM_H\n#define {P}_SYM_H\n#define {P}_SYM_NQ {len(sm.q)}\n#define {P}_SYM_NV {nv}\n"
              f"#define {P}_SYM_NI {n_i}\n#define {P}_SYM_NP {len(sm.p)}\n{sig_M};\n{sig_h};\n{sig_f};\n#endif\n")
    return "\n".join(src), header


def _latex_names(sm: SymbolicModel) -> dict:
    """LaTeX of the input symbols: ``q_{i}``, ``\\dot{q}_{i}``, ``\\tau_{i}``, per body k ``m_{k}``,
    ``c_{k,x}``, ``I_{k,xy}`` (indices from 1)."""
    fields = ("m_{%d}", "c_{%d,x}", "c_{%d,y}", "c_{%d,z}", "I_{%d,xx}", "I_{%d,xy}", "I_{%d,xz}", "I_{%d,yy}",
              "I_{%d,yz}", "I_{%d,zz}")
    names = {s: f"q_{{{i + 1}}}" for i, s in enumerate(sm.q)}
    names |= {s: f"\\dot{{q}}_{{{i + 1}}}" for i, s in enumerate(sm.v)}
    names |= {s: f"\\tau_{{{i + 1}}}" for i, s in enumerate(sm.tau)}
    names |= {s: fields[i % 10] % (i // 10 + 1) for i, s in enumerate(sm.p)}
    return names


def latex_source(sm: SymbolicModel, prefix: str) -> str:
    """Markdown with the closed forms as LaTeX (``sympy.latex``) and the symbol table."""
    names = _latex_names(sm)
    reps, (Mr, hr) = sp.cse([sm.M, sm.h], symbols=sp.numbered_symbols("x"))
    tex = lambda e: sp.latex(e, symbol_names=names | {s: f"x_{{{str(s)[1:]}}}" for s, _ in reps})
    lines = [f"# Closed-form dynamics of `{prefix}` ({sm.kind}, generated by mbcompose --symbolic)", "",
             "Joints: " + ", ".join(f"$q_{{{i + 1}}}$ = `{n}`" for i, n in enumerate(sm.joint_names)) + ".",
             "Bodies (inertia parameters $m_k$, centre of mass $c_{k}$, inertia about it $I_{k}$): "
             + ", ".join(f"{k + 1} = `{n}`" for k, n in enumerate(sm.body_names)) + ".", ""]
    if sm.kind == "embedded":
        lines += ["In the independent coordinates " + ", ".join(f"$\\dot{{q}}_{{{j + 1}}}$" for j in sm.independent_v)
                  + " ($M_r = X^T M X$, $h_r = X^T (h + M c)$); the dependent $q$ are inputs (closed state).", ""]
    lines += ["Common subexpressions:", "", "$$", "\\begin{aligned}"]
    lines += [f"{tex(s)} &= {tex(e)} \\\\" for s, e in reps]
    lines += ["\\end{aligned}", "$$", "", "Mass matrix:", "", f"$$M = {tex(Mr)}$$", "",
              "Bias forces (Coriolis, centrifugal and gravity):", "", f"$$h = {tex(hr)}$$", "",
              "Forward dynamics: $\\ddot{q} = M^{-1} (\\tau - h)$ (the C solves it in closed form).", ""]
    return "\n".join(lines)


def generate_symbolic(model, prefix: str = "model") -> SymbolicSource:
    """C (``PREFIX_sym.c``, ``PREFIX_sym.h``) and Markdown/LaTeX (``PREFIX_sym.md``) of the closed forms
    of a small model (:func:`symbolic_model`)."""
    if not prefix.isidentifier():
        raise ValueError(f"prefix {prefix!r} is not a C identifier")
    sm = symbolic_model(model)
    source, header = c_source(sm, prefix)
    log.info("symbolic closed forms of %s: %d lines of C", prefix, source.count("\n"))
    return SymbolicSource(prefix, source, header, latex_source(sm, prefix), sm)
