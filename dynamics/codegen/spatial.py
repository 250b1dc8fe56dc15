"""Spatial algebra on generator symbols (:mod:`dynamics.codegen.emit`), body frames, ``[angular; linear]``.

The rigid-body tree's transform of body k is ``phi(parent(k), k) = [[R, ~l R], [0, R]]`` (seed 002
Eq. 4; ``R`` the rotation of body k in its parent, ``l`` its origin there, :mod:`dynamics.model`):
motions go to the child with ``phi*`` and forces and inertias to the parent with ``phi``.  Spatial
inertias are 6 x 6 lists of symbols about the body origin (seed 002 Eq. 14).
"""

from __future__ import annotations

from .emit import Code, add, recip, cross, dot, matmul, matmulT, matTvec, matvec, mul, neg, skew, sub

__all__ = ["motion_to_child", "force_to_parent", "inertia_to_parent", "motion_cross", "force_cross",
           "inertia_times", "body_inertia", "let6", "let66", "inverse_spd"]


def motion_to_child(R, l, m, code: Code | None = None, name: str = ""):
    """``phi*(parent, k) m``: ``[R^T w; R^T (v + w x l)]`` (seed 002 Eq. 3)."""
    w, v = m[:3], m[3:]
    u = [add(a, b) for a, b in zip(v, cross(w, l))]
    if code is not None:
        u = code.lets(f"{name}u", u)
    return matTvec(R, w) + matTvec(R, u)


def force_to_parent(R, l, f, code: Code | None = None, name: str = ""):
    """``phi(parent, k) f``: ``[R n + l x (R f); R f]``."""
    Rf = matvec(R, f[3:])
    if code is not None:
        Rf = code.lets(f"{name}Rf", Rf)
    return [add(a, b) for a, b in zip(matvec(R, f[:3]), cross(l, Rf))] + Rf


def _blocks(P):
    return ([row[:3] for row in P[:3]], [row[3:] for row in P[:3]], [row[3:] for row in P[3:]])


def inertia_to_parent(code: Code, name: str, R, l, P):
    """``phi P phi*`` (6 x 6 symmetric): ``[[A' + L B'^T - X L, X], [X^T, C']]`` with ``X = B' + L C'``,
    ``A' = R A R^T`` (likewise B', C') and ``L = ~l``; lets named ``name``."""
    A, B, C = _blocks(P)
    A2 = code.lets3(f"{name}A", matmulT(code.lets3(f"{name}RA", matmul(R, A)), R))
    B2 = code.lets3(f"{name}B", matmulT(code.lets3(f"{name}RB", matmul(R, B)), R))
    C2 = code.lets3(f"{name}C", matmulT(code.lets3(f"{name}RC", matmul(R, C)), R))
    L = skew(l)
    X = code.lets3(f"{name}X", [[add(B2[i][j], dot(L[i], [C2[r][j] for r in range(3)])) for j in range(3)]
                                for i in range(3)])
    top = [[sub(add(A2[i][j], dot(L[i], B2[j])), dot(X[i], [L[r][j] for r in range(3)])) for j in range(3)]
           for i in range(3)]
    out = [[0.0] * 6 for _ in range(6)]
    for i in range(3):
        for j in range(3):
            out[i][j] = top[i][j] if i <= j else top[j][i]
            out[i][3 + j] = out[3 + j][i] = X[i][j]
            out[3 + i][3 + j] = C2[i][j] if i <= j else C2[j][i]
    return out


def motion_cross(V, m):
    """``V x m`` (motion cross product): ``[w x mw; w x mv + v x mw]``."""
    w, v = V[:3], V[3:]
    return cross(w, m[:3]) + [add(a, b) for a, b in zip(cross(w, m[3:]), cross(v, m[:3]))]


def force_cross(V, f):
    """``V x* f`` (force cross product): ``[w x n + v x f; w x f]``."""
    w, v = V[:3], V[3:]
    return [add(a, b) for a, b in zip(cross(w, f[:3]), cross(v, f[3:]))] + cross(w, f[3:])


def inertia_times(M, m):
    return [dot(row, m) for row in M]


def let6(code: Code, name: str, x):
    return code.lets(name, x)


def let66(code: Code, name: str, P):
    """Lets of a symmetric 6 x 6 (upper triangle named, lower mirrored)."""
    out = [[0.0] * 6 for _ in range(6)]
    for i in range(6):
        for j in range(i, 6):
            out[i][j] = out[j][i] = code.let(f"{name}{i}{j}", P[i][j])
    return out


def body_inertia(code: Code, name: str, base: int):
    """Spatial inertia about the body origin from the parameters ``p[base .. base+9]`` =
    (mass, com x, y, z, Ixx, Ixy, Ixz, Iyy, Iyz, Izz about the centre of mass):
    ``[[I_c - m ~c ~c, m ~c], [-m ~c, m 1]]`` (seed 002 Eq. 14)."""
    m = f"p[{base}]"
    c = [f"p[{base + 1 + i}]" for i in range(3)]
    Ic = [f"p[{base + 4 + i}]" for i in range(6)]
    Icm = [[Ic[0], Ic[1], Ic[2]], [Ic[1], Ic[3], Ic[4]], [Ic[2], Ic[4], Ic[5]]]
    mc = code.lets(f"{name}mc", [mul(m, ci) for ci in c])
    cc = code.let(f"{name}cc", dot(mc, c))
    J = [[add(Icm[i][j], cc if i == j else 0.0, neg(mul(mc[i], c[j]))) for j in range(3)] for i in range(3)]
    J = [[code.let(f"{name}J{i}{j}", J[i][j]) if i <= j else None for j in range(3)] for i in range(3)]
    Mc = skew(mc)
    out = [[0.0] * 6 for _ in range(6)]
    for i in range(3):
        for j in range(3):
            out[i][j] = J[min(i, j)][max(i, j)]
            out[i][3 + j] = Mc[i][j]
            out[3 + i][j] = neg(Mc[i][j])
        out[3 + i][3 + i] = m
    return out


def inverse_spd(code: Code, name: str, D):
    """``D^-1`` of a small symmetric positive definite matrix of symbols (n x n), by an unrolled
    Cholesky factorization ``D = L L^T`` and n forward and back substitutions."""
    n = len(D)
    if n == 1:
        return [[code.let(f"{name}inv", recip(D[0][0]))]]
    L = [[0.0] * n for _ in range(n)]
    for j in range(n):
        s = sub(D[j][j], add(*(mul(L[j][k], L[j][k]) for k in range(j))))
        L[j][j] = code.let(f"{name}L{j}{j}", f"sqrt({s})")
        inv = code.let(f"{name}r{j}", recip(L[j][j]))
        for i in range(j + 1, n):
            L[i][j] = code.let(f"{name}L{i}{j}", mul(sub(D[i][j], add(*(mul(L[i][k], L[j][k]) for k in range(j)))), inv))
    Linv = [[0.0] * n for _ in range(n)]      # lower triangular inverse
    for j in range(n):
        for i in range(j, n):
            rhs = 1.0 if i == j else 0.0
            s = sub(rhs, add(*(mul(L[i][k], Linv[k][j]) for k in range(j, i))))
            Linv[i][j] = code.let(f"{name}Li{i}{j}", mul(s, f"{name}r{i}"))
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            out[i][j] = out[j][i] = code.let(f"{name}inv{i}{j}", add(*(mul(Linv[k][i], Linv[k][j]) for k in range(j, n))))
    return out
