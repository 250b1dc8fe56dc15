"""C of joint couplings: linear ones in closed form, and coupling rows of the general closure solve.

A joint coupling holds one side ``s_f = sum c q`` of one-coordinate joints at a polynomial ``p`` of the
other (:mod:`dynamics.closed.coupling`: URDF ``mimic``, MJCF ``equality/joint`` and ``equality/tendon``,
SDFormat ``mimic`` and ``gearbox``).  The embedded model treats it as a holonomic constraint like a loop
closure (seed 000 sections 5-6): its follower becomes a dependent coordinate of a compound node.

* **Linear couplings without loop-closing joints** (:attr:`dynamics.closed.embedding.EmbeddedModel.
  linear_couplings`, every polynomial of degree at most one): the null-space basis ``X`` (nv, n_i) is
  constant and ``Xdot = 0`` (:mod:`dynamics.closed.linear`), so :func:`linear_system` writes the embedding
  in closed form, with no Newton solve and no workspace:

  - positions ``q_d = offset + X_ds q_s`` (``q_s`` the independent coordinates the dependent ones follow);
  - velocities ``v = X v_i``;
  - forward dynamics ``theta_ddot = X M_r^-1 X^T (T - h)``, ``M_r = X^T M X`` (n_i, n_i), with the tree's
    mass matrix ``M`` (composite rigid body, seed 001 Algorithm 4.2) and bias ``h`` (Newton-Euler at zero
    acceleration, seed 001 Algorithm 3.1) from the generated ``PREFIX_crba`` and ``PREFIX_rnea``; the
    products with ``X`` unrolled over its nonzero entries (constants of the model), ``M_r`` factored by
    Cholesky (``M_r = L L^T``, symmetric positive definite: ``X`` has full column rank).

* **Other couplings** (a polynomial of higher degree, or couplings beside loop-closing joints) are rows
  of the general closure (:mod:`dynamics.codegen.closed`): :func:`emit_coupling_rows` writes their
  residuals ``e = s_f - p(s_l)`` and Jacobian rows (``+c`` at a follower coordinate, ``-p'(s_l) c`` at a
  leader's), :func:`emit_coupling_bias` their ``gamma = Gdot v = -p''(s_l) (sum c v_l)^2``; the polynomial
  is written by Horner's scheme with its coefficients as constants.
"""

from __future__ import annotations

import numpy as np

from ..tolerances import SINGULAR_FLOOR, STRUCTURAL_ZERO
from .emit import Code, add, const, fmt, mul, neg
from .generate import INDEPENDENT_RATE, INDEPENDENT_TABLES, reduced_format, reduced_interface

__all__ = ["linear_system", "emit_coupling_rows", "emit_coupling_bias"]


# ---------------------------------------------------------------- coupling rows of the general closure


def _side(side, values) -> object:
    """``sum c x[index]`` over one side of a coupling (``index`` the q or v index, by ``values``)."""
    return add(*(mul(const(c), values(iq, iv)) for iq, iv, c in side))


def _polynomial(coefficients, x):
    """``(p(x), p'(x), p''(x))`` as symbols, by Horner's scheme (:meth:`JointCoupling.polynomial`)."""
    p = dp = h = 0.0
    for a in reversed(coefficients):
        h = add(mul(h, x), dp)
        dp = add(mul(dp, x), p)
        p = add(mul(p, x), const(a))
    return p, dp, mul(2.0, h)


def emit_coupling_rows(code: Code, coupling, i: int, q, nv: int, e_out: str, G_out: str) -> None:
    """Residual ``e_out[i] = s_f - p(s_l)`` of ``coupling`` (a :class:`dynamics.closed.coupling.JointCoupling`)
    and its Jacobian row ``G_out[i*nv + j]`` (``G_out`` zeroed by the caller); ``q`` the symbols of the
    tree coordinates (nq,), rad or m."""
    code.comment(f"coupling {coupling.name}: e = s_f - p(s_l) (dynamics/closed/coupling.py)")
    x = code.let(f"s{i}_", _side(coupling.leader, lambda iq, iv: q[iq]))
    p, dp, _ = _polynomial(coupling.coefficients, x)
    code.store(f"{e_out}[{i}]", add(_side(coupling.follower, lambda iq, iv: q[iq]), neg(p)))
    dp = code.let(f"dp{i}_", dp)
    row: dict[int, object] = {}
    for _, iv, c in coupling.follower:
        row[iv] = add(row.get(iv, 0.0), const(c))
    for _, iv, c in coupling.leader:
        row[iv] = add(row.get(iv, 0.0), neg(mul(dp, const(c))))
    for iv in sorted(row):
        code.store(f"{G_out}[{i * nv + iv}]", row[iv])


def emit_coupling_bias(code: Code, coupling, i: int, q, v, g_out: str) -> None:
    """``g_out[i] = gamma = Gdot v = -p''(s_l) (sum c v_l)^2`` of ``coupling`` (zero for a linear one);
    ``q`` (nq,), ``v`` (nv,) symbols of the tree's coordinates and velocities."""
    x = code.let(f"gs{i}_", _side(coupling.leader, lambda iq, iv: q[iq]))
    _, _, ddp = _polynomial(coupling.coefficients, x)
    w = code.let(f"gw{i}_", _side(coupling.leader, lambda iq, iv: v[iv]))
    code.store(f"{g_out}[{i}]", neg(mul(ddp, mul(w, w))))


# ---------------------------------------------------------------- linear couplings in closed form


CHOLESKY_SOURCE = """
static int {P}_cholesky_solve(int n, double *A, double *b)
{{
  /* A x = b for symmetric positive definite A (n x n row-major, lower triangle overwritten by L with
     A = L L^T; x into b); 1 when a pivot is not above SINGULAR_FLOOR times the largest diagonal entry */
  double dmax = 0.0;
  for (int i = 0; i < n; ++i) dmax = fmax(dmax, fabs(A[i*n + i]));
  for (int j = 0; j < n; ++j) {{
    double d = A[j*n + j];
    for (int k = 0; k < j; ++k) d -= A[j*n + k]*A[j*n + k];
    if (!(d > {floor}*dmax)) return 1;
    d = sqrt(d);
    A[j*n + j] = d;
    for (int i = j + 1; i < n; ++i) {{
      double s = A[i*n + j];
      for (int k = 0; k < j; ++k) s -= A[i*n + k]*A[j*n + k];
      A[i*n + j] = s/d;
    }}
  }}
  for (int i = 0; i < n; ++i) {{
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= A[i*n + k]*b[k];
    b[i] = s/A[i*n + i];
  }}
  for (int i = n - 1; i >= 0; --i) {{
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= A[k*n + i]*b[k];
    b[i] = s/A[i*n + i];
  }}
  return 0;
}}
"""


def _nonzeros(X) -> list[list[tuple[int, float]]]:
    """Per column of X (nv, n_i): its (row, value) entries above :data:`STRUCTURAL_ZERO` in magnitude."""
    return [[(int(i), float(X[i, a])) for i in np.flatnonzero(np.abs(X[:, a]) > STRUCTURAL_ZERO)]
            for a in range(X.shape[1])]


def _reduction(cols, nv: int) -> Code:
    """``r = X^T w`` and ``Mr = X^T M X`` (upper triangle, mirrored) unrolled over the nonzeros ``cols`` of X."""
    code = Code()
    code.comment("r = X^T w (w = tau - h) and M_r = X^T M X over the constant nonzeros of X")
    for a, col in enumerate(cols):
        code.store(f"r[{a}]", add(*(mul(x, f"w[{i}]") for i, x in col)))
    n = len(cols)
    for a in range(n):
        for b in range(a, n):
            s = add(*(mul(xa * xb, f"M[{i * nv + j}]") for i, xa in cols[a] for j, xb in cols[b]))
            code.store(f"Mr[{a * n + b}]", s)
            if b != a:
                code.raw(f"Mr[{b * n + a}] = Mr[{a * n + b}];")
    return code


def _expansion(X, target: str, source: str, rows) -> Code:
    """``target[i] = sum_a X[i, a] source[a]`` for the rows ``rows`` of X (constants folded)."""
    code = Code()
    for i in rows:
        code.store(f"{target}[{i}]", add(*(mul(float(X[i, a]), f"{source}[{a}]")
                                          for a in np.flatnonzero(np.abs(X[i]) > STRUCTURAL_ZERO))))
    return code


def _configuration(lc, ind_q) -> Code:
    """``q`` (nq) from the independent coordinates ``q_ind``: ``q_d = offset + X_ds q_s``."""
    code = Code()
    for k, iq in enumerate(ind_q):
        code.raw(f"q[{iq}] = q_ind[{k}];")
    for d, iq in enumerate(lc.dependent_q.tolist()):
        terms = [mul(const(float(lc.X_ds[d, s])), f"q[{int(js)}]") for s, js in enumerate(lc.source_q.tolist())]
        code.store(f"q[{iq}]", add(const(float(lc.offset[d])), *terms))
    return code


LINEAR_DRIVER = """
""" + INDEPENDENT_TABLES + """
void {P}_complete_configuration(const double *q_ind, double *q)
{{
  /* q (nq) from the independent coordinates q_ind (nqi): q_d = offset + X_ds q_s, closed exactly */
{configuration}
}}

int {P}_complete_velocity(const double *q, const double *v_ind, double *v)
{{
  /* v (nv) = X v_ind */
  (void)q;
{velocity}
  return 0;
}}

int {P}_embedded_fd(const double *p, const double *q, const double *v, const double *tau, double *qdd)
{{
  /* accelerations (nv) of all tree joints at a closed q and v = X v_i: X M_r^-1 X^T (tau - h),
     M_r = X^T M X (module docstring); 1 when M_r is not positive definite */
  double M[{NV}*{NV}], h[{NV}], w[{NV}], zero[{NV}], Mr[{NI}*{NI}], r[{NI}];
  memset(zero, 0, sizeof zero);
  {P}_crba(p, q, M);
  {P}_rnea(p, q, v, zero, h);
  for (int i = 0; i < {nv}; ++i) w[i] = tau[i] - h[i];
{reduction}
  if ({P}_cholesky_solve({ni}, Mr, r)) return 1;
{expansion}
  return 0;
}}

int {P}_derivatives(const double *p, double t, const double *x, const double *u, double *dx)
{{
  /* x = [q_i; v_i], u = [tau_i; ctrl]: dx = [q_i dot; theta_ddot_i] */
  double q[{NQ}], v[{NV}], T[{NV}], f[{NV}], qd[{NQ}], a[{NV}];
  (void)t;
  {P}_complete_configuration(x, q);
  {P}_complete_velocity(q, x + {nqi}, v);
  int rc;
""" + INDEPENDENT_RATE + """
int {P}_outputs(const double *p, const double *x, double *y)
{{
  /* every joint coordinate (nq), the dependent ones from the couplings */
  (void)p;
  {P}_complete_configuration(x, y);
  return 0;
}}

/* the closed chains' interface (dynamics/codegen/closed.py), so that an FMU treats both alike: the
   closed form needs no warm start, the workspace is empty */
void {P}_workspace_init({P}_workspace *ws) {{ (void)ws; }}

int {P}_close({P}_workspace *ws, const double *q_ind, double *q)
{{
  (void)ws;
  {P}_complete_configuration(q_ind, q);
  return 0;
}}

int {P}_derivatives_ws({P}_workspace *ws, const double *p, double t, const double *x, const double *u, double *dx)
{{
  (void)ws;
  return {P}_derivatives(p, t, x, u, dx);
}}

int {P}_outputs_ws({P}_workspace *ws, const double *p, const double *x, double *y)
{{
  (void)ws;
  return {P}_outputs(p, x, y);
}}

void {P}_start_state(double *x)
{{
  /* the reference configuration (closed) at rest */
  for (int i = 0; i < {nqi}; ++i) x[i] = {P}_q_ref[{P}_ind_q[i]];
  for (int c = 0; c < {ni}; ++c) x[{nqi} + c] = 0.0;
}}
"""


def _body(code: Code) -> str:
    return code.text() or "  ;"


def linear_system(em, prefix: str):
    """(source, names, extra header declarations) of the state-space functions of an embedded model whose
    constraints are linear joint couplings alone (:attr:`EmbeddedModel.linear_couplings` not None): the
    closed form of the module docstring.  State ``x = [q_i; v_i]`` (the independent coordinates), inputs
    ``u = [tau_i; ctrl]``, outputs every tree coordinate (the followers included)."""
    lc, t = em.linear_couplings, em.tree_model
    X = np.asarray(lc.X, float)
    dep_q = set(int(i) for i in lc.dependent_q)
    ind_v = [int(i) for i in em.independent_v]
    ind_q = [i for i in range(t.nq) if i not in dep_q]
    nv = t.nv
    q_ref = np.asarray(em.neutral(), float)
    cols = _nonzeros(X)
    typedef = f"typedef struct {{ double unused; }} {prefix}_workspace;\n"
    src = [typedef, CHOLESKY_SOURCE.format(P=prefix, floor=fmt(SINGULAR_FLOOR)),
           LINEAR_DRIVER.format(**reduced_format(prefix, t, q_ref, ind_q, ind_v),
                                configuration=_body(_configuration(lc, ind_q)),
                                velocity=_body(_expansion(X, "v", "v_ind", range(nv))),
                                reduction=_body(_reduction(cols, nv)),
                                expansion=_body(_expansion(X, "qdd", "r", range(nv))))]
    info = reduced_interface(t, q_ref, ind_q, ind_v)
    extra = (typedef + f"void {prefix}_workspace_init({prefix}_workspace *ws);\n"
             f"int {prefix}_close({prefix}_workspace *ws, const double *q_ind, double *q);\n"
             f"int {prefix}_derivatives_ws({prefix}_workspace *ws, const double *p, double t, const double *x, "
             "const double *u, double *dx);\n"
             f"int {prefix}_outputs_ws({prefix}_workspace *ws, const double *p, const double *x, double *y);\n"
             f"void {prefix}_complete_configuration(const double *q_ind, double *q);\n"
             f"int {prefix}_complete_velocity(const double *q, const double *v_ind, double *v);\n"
             f"int {prefix}_embedded_fd(const double *p, const double *q, const double *v, const double *tau, "
             "double *qdd);\n")
    return "\n".join(src), info, extra
