"""C of an embedded closed chain: closure solve and forward dynamics in independent coordinates.

The loops of an :class:`dynamics.closed.embedding.EmbeddedModel` are closed in the generated code with
the model's *default* partition, fixed at generation (``EmbeddedLoop.dep`` and ``rows``: chosen by QR
with column pivoting of the closure Jacobian at the reference configuration, seed 000 sections 5-6):

* positions: Newton's method on the kept closure rows ``e(q) = 0`` for the dependent coordinates
  ``q_d`` (exact Jacobian ``G_d``), warm-started from the last solution (a :c:type:`PREFIX_workspace`
  holds it; the plain ``PREFIX_derivatives``/``PREFIX_outputs`` use one static workspace, the ``_ws``
  variants take the caller's, one per simulation instance or thread);
* velocities: ``v_d = -G_d^-1 G_i v_i``;
* dynamics: ``X = [I; -G_d^-1 G_i]``, ``Xdot v_i = [0; -G_d^-1 gamma]`` (``gamma = Gdot v``), and the
  reduced equations ``X^T M X theta_ddot_i = X^T (T - C - M Xdot v_i)`` with ``M`` from the CRBA and
  ``C`` from the RNEA of the spanning tree (the same minimal-coordinate dynamics as seed 000's
  constraint embedding, formed densely: the loops here are small).

The closure rows and their rates follow :mod:`dynamics.closed.closure` (position rows ``n . p_ab``,
orientation rows ``n . R_ab u``, ``gamma`` from the bias accelerations); the rows of joint couplings
(polynomial ones, or couplings beside loop-closing joints) come from :mod:`dynamics.codegen.couplings`,
which also writes linear couplings without chords in closed form (:func:`generate.generate_c` picks it).
Dense solves use Gaussian elimination with partial pivoting written in the C.  Where the fixed partition
does not apply the generator refuses (:class:`CodegenUnsupported`): a dependent coordinate of a joint with
more than one coordinate; at run time a singular ``G_d`` (a configuration where the reference split
degenerates) or a failed Newton solve makes the functions return a nonzero code.
"""

from __future__ import annotations

import numpy as np

from .. import topology
from ..tolerances import NEWTON_MAX_ITER, SIMULATION_CLOSURE_TOL, SINGULAR_FLOOR
from .emit import Code, add, const, cross, dot, fmt, matmul, matTvec, matvec, mul, sub
from .couplings import emit_coupling_bias, emit_coupling_rows
from .generate import INDEPENDENT_RATE, INDEPENDENT_TABLES, c_ints, reduced_format, reduced_interface
from .tree import CodegenUnsupported, TreeSpec, _joint_motion, _joint_pose, motion_cross, motion_to_child

__all__ = ["closed_system", "partition"]


def partition(em):
    """(dep_v, dep_q, ind_v, ind_q, kept rows of the chord set) of the default split; refuses what
    the generated closure cannot do."""
    t = em.tree_model
    body_of = np.repeat(np.arange(t.n_bodies), t.tree.nv_node)
    dep_v, dep_q, rows = [], [], []
    for lp in em.loops:
        if len(lp.dep) != len(lp.rows):
            raise CodegenUnsupported(f"loop {lp.name!r}: {len(lp.rows)} closure rows for {len(lp.dep)} dependent "
                                     "coordinates")
        rows += lp.all_rows[lp.rows].tolist()
        for i in lp.dep.tolist():
            j = int(lp.v_idx[i])
            k = int(body_of[j])
            if t.tree.nv_node[k] != 1 or t.q_offset[k + 1] - t.q_offset[k] != 1:
                raise CodegenUnsupported(f"loop {lp.name!r}: dependent coordinate {em.coordinate_names[j]!r} "
                                         "belongs to a joint with several coordinates (one-coordinate joints only)")
            dep_v.append(j)
            dep_q.append(int(t.q_offset[k]))
    order = np.argsort(dep_v, kind="stable")
    dep_v, dep_q = [dep_v[i] for i in order], [dep_q[i] for i in order]
    ind_v = [j for j in range(t.nv) if j not in set(dep_v)]
    ind_q = [i for i in range(t.nq) if i not in set(dep_q)]
    return dep_v, dep_q, ind_v, ind_q, rows


def _world(code: Code, spec: TreeSpec, bodies, q):
    """World rotation and origin of ``bodies`` and their ancestors ({k: R}, {k: p}); ground -1 is I, 0."""
    need = sorted({a for b in bodies if b >= 0 for a in (b, *topology.ancestors(spec.parent, b))})
    poses, Rw, pw = {}, {-1: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}, {-1: [0.0, 0.0, 0.0]}
    for k in need:
        R, l = _joint_pose(code, spec, k, q)
        poses[k] = (R, l)
        par = spec.parent[k]
        Rw[k] = code.lets3(f"Rw{k}_", matmul(Rw[par], R))
        pw[k] = code.lets(f"pw{k}_", [add(pw[par][i], x) for i, x in enumerate(matvec(Rw[par], l))])
    return poses, Rw, pw


def _frames(code, cs, c, Rw, pw, n):
    """(a, b, Ra, xa, Rb, xb) of chord c in the world (ground, ``n`` in the chord set, as -1)."""
    a, b = (int(x) if int(x) < n else -1 for x in (cs.body_a[c], cs.body_b[c]))
    Ca = [[const(x) for x in row] for row in cs.R_a[c]]
    Cb = [[const(x) for x in row] for row in cs.R_b[c]]
    Ra = code.lets3(f"Ra{c}_", matmul(Rw[a], Ca))
    Rb = code.lets3(f"Rb{c}_", matmul(Rw[b], Cb))
    xa = code.lets(f"xa{c}_", [add(pw[a][i], x) for i, x in enumerate(matvec(Rw[a], [const(x) for x in cs.p_a[c]]))])
    xb = code.lets(f"xb{c}_", [add(pw[b][i], x) for i, x in enumerate(matvec(Rw[b], [const(x) for x in cs.p_b[c]]))])
    return a, b, Ra, xa, Rb, xb


def _row_kind(cs, r):
    """('p', chord, normal) or ('r', chord, u, normal) of chord-set row r."""
    hit = np.flatnonzero(cs.p_rows == r)
    if len(hit):
        i = int(hit[0])
        return "p", int(cs.p_chord[i]), cs.N_p[i], None
    i = int(np.flatnonzero(cs.r_rows == r)[0])
    return "r", int(cs.r_chord[i]), cs.N_r[i], cs.U_r[i]


def emit_closure(code: Code, spec: TreeSpec, em, rows, columns, q, e_out: str, G_out: str):
    """Closure errors of the kept ``rows`` into ``e_out[i]`` and their Jacobian on the loop ``columns``
    into ``G_out[i*nv + j]`` (:mod:`dynamics.closed.closure`: ``e = n . p_ab`` or ``n . R_ab u``,
    ``G = K R_Ja^T [S_w; S_v(x_b)]``)."""
    cs = em.chord_set
    bodies = set(int(b) for b in cs.body_a) | set(int(b) for b in cs.body_b)
    body_of = np.repeat(np.arange(spec.n), spec.nv_node)
    bodies |= {int(body_of[j]) for j in columns}
    bodies = {b for b in bodies if b < spec.n}
    code.comment("world poses of the loop bodies (forward kinematics)")
    poses, Rw, pw = _world(code, spec, bodies, q)
    frames = {}
    nv = spec.model.nv
    code.comment("closure rows e = n . p_ab (position) or n . R_ab u (orientation), G = de/dq (dynamics/closed/closure.py)")
    for i, r in enumerate(rows):
        if r >= cs.n_rows:
            emit_coupling_rows(code, em.couplings[r - cs.n_rows], i, q, nv, e_out, G_out)
            continue
        kind, c, n, u = _row_kind(cs, r)
        if c not in frames:
            frames[c] = _frames(code, cs, c, Rw, pw, spec.n)
        a, b, Ra, xa, Rb, xb = frames[c]
        n = [const(x) for x in n]
        if kind == "p":
            d = [sub(x, y) for x, y in zip(xb, xa)]
            code.store(f"{e_out}[{i}]", dot(n, matTvec(Ra, d)))
            Kw, Kv = [0.0] * 3, code.lets(f"K{i}_", matvec(Ra, n))         # n . Ra^T x = (Ra n) . x
        else:
            RU = code.lets(f"RU{i}_", matTvec(Ra, matvec(Rb, [const(x) for x in u])))
            code.store(f"{e_out}[{i}]", dot(n, RU))
            Kw, Kv = code.lets(f"K{i}_", matvec(Ra, cross(RU, n))), [0.0] * 3
        for j in columns:
            sign = float(cs.signs[c, j])
            if sign == 0.0:
                continue
            k = int(body_of[j])
            col = spec.S[k][j - spec.v0[k]]
            Sw, Sv = matvec(Rw[k], col[:3]), matvec(Rw[k], col[3:])
            r_ = [sub(x, y) for x, y in zip(xb, pw[k])]
            val = add(dot(Kw, Sw), dot(Kv, [add(x, y) for x, y in zip(Sv, cross(Sw, r_))]))
            code.store(f"{G_out}[{i * nv + j}]", mul(sign, val))
    return poses, Rw, pw


def emit_closure_bias(code: Code, spec: TreeSpec, em, rows, q, v, g_out: str):
    """``gamma = Gdot v`` of the kept rows into ``g_out[i]``, from the bias accelerations (``a = 0``, no
    gravity) of the chord bodies (:func:`dynamics.closed.closure.chord_set_terms`)."""
    cs = em.chord_set
    bodies = {b for b in set(cs.body_a.tolist()) | set(cs.body_b.tolist()) if b < spec.n}
    poses, Rw, pw = _world(code, spec, bodies, q)
    code.comment("body velocities V and bias accelerations alpha (theta_ddot = 0, no gravity), world frame")
    Vb, Ab, mot = {}, {}, {-1: ([0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3)}
    for k in sorted(poses):
        vJ = _joint_motion(spec, k, v)
        par = spec.parent[k]
        Vp = [0.0] * 6 if par < 0 else motion_to_child(*poses[k], Vb[par])
        Vb[k] = code.lets(f"V{k}_", [add(x, y) for x, y in zip(Vp, vJ)])
        ap = [0.0] * 6 if par < 0 else motion_to_child(*poses[k], Ab[par])
        Ab[k] = code.lets(f"al{k}_", [add(x, y) for x, y in zip(ap, motion_cross(Vb[k], vJ))])
        w, vo = Vb[k][:3], Vb[k][3:]
        acc = [add(x, y) for x, y in zip(Ab[k][3:], cross(w, vo))]     # classical origin acceleration
        mot[k] = tuple(code.lets(f"{nm}{k}_", matvec(Rw[k], x)) for nm, x in
                       (("ww", w), ("vw", vo), ("wdw", Ab[k][:3]), ("adw", acc)))
    code.comment("gamma rows (dynamics/closed/closure.py, acceleration level)")
    done = {}
    for i, r in enumerate(rows):
        if r >= cs.n_rows:
            emit_coupling_bias(code, em.couplings[r - cs.n_rows], i, q, v, g_out)
            continue
        kind, c, n, u = _row_kind(cs, r)
        if c not in done:
            done[c] = _chord_bias(code, cs, c, Rw, pw, mot, spec.n)
        Ra, Rb, wa, wb, wda, wdb, d, dd, ddd = done[c]
        n = [const(x) for x in n]
        if kind == "p":
            cwd = cross(wa, d)
            h = [add(x, mul(-1.0, y), mul(-2.0, z), t) for x, y, z, t in zip(ddd, cross(wda, d), cross(wa, dd), cross(wa, cwd))]
        else:
            ub = code.lets(f"ub{i}_", matvec(Rb, [const(x) for x in u]))
            wr = [sub(x, y) for x, y in zip(wb, wa)]
            wdr = [sub(x, y) for x, y in zip(wdb, wda)]
            h = [add(x, y, mul(-1.0, z)) for x, y, z in zip(cross(wdr, ub), cross(wr, cross(wb, ub)), cross(wa, cross(wr, ub)))]
        code.store(f"{g_out}[{i}]", dot(n, matTvec(Ra, code.lets(f"h{i}_", h))))


def _chord_bias(code, cs, c, Rw, pw, mot, n):
    a, b, Ra, xa, Rb, xb = _frames(code, cs, c, Rw, pw, n)

    def motion(k, x):
        w, vo, wd, ad = mot[k]
        r = [sub(s, t) for s, t in zip(x, pw[k])]
        w_r = cross(w, r)
        return ([add(s, t) for s, t in zip(vo, w_r)],
                [add(s, t, u) for s, t, u in zip(ad, cross(wd, r), cross(w, w_r))])

    va, aa = motion(a, xa)
    vb, ab = motion(b, xb)
    d = code.lets(f"d{c}_", [sub(s, t) for s, t in zip(xb, xa)])
    dd = code.lets(f"dd{c}_", [sub(s, t) for s, t in zip(vb, va)])
    ddd = code.lets(f"ddd{c}_", [sub(s, t) for s, t in zip(ab, aa)])
    return Ra, Rb, mot[a][0], mot[b][0], mot[a][2], mot[b][2], d, dd, ddd


SOLVE_SOURCE = """
static int {prefix}_solve(int n, double *A, double *b)
{{
  /* A x = b (A n x n row-major, overwritten; x into b): Gaussian elimination, partial pivoting;
     1 when a pivot is below SINGULAR_FLOOR times the largest entry */
  double amax = 0.0;
  for (int i = 0; i < n*n; ++i) amax = fmax(amax, fabs(A[i]));
  for (int k = 0; k < n; ++k) {{
    int piv = k;
    for (int i = k + 1; i < n; ++i) if (fabs(A[i*n + k]) > fabs(A[piv*n + k])) piv = i;
    if (!(fabs(A[piv*n + k]) > {floor}*amax)) return 1;
    if (piv != k) {{
      for (int j = 0; j < n; ++j) {{ double t = A[k*n + j]; A[k*n + j] = A[piv*n + j]; A[piv*n + j] = t; }}
      double t = b[k]; b[k] = b[piv]; b[piv] = t;
    }}
    for (int i = k + 1; i < n; ++i) {{
      const double f = A[i*n + k]/A[k*n + k];
      for (int j = k; j < n; ++j) A[i*n + j] -= f*A[k*n + j];
      b[i] -= f*b[k];
    }}
  }}
  for (int k = n - 1; k >= 0; --k) {{
    double s = b[k];
    for (int j = k + 1; j < n; ++j) s -= A[k*n + j]*b[j];
    b[k] = s/A[k*n + k];
  }}
  return 0;
}}
"""


def closure_functions(em, spec: TreeSpec, prefix: str, rows, columns) -> str:
    """``PREFIX_closure(q, e, G)`` and ``PREFIX_closure_bias(q, v, gamma)`` (static)."""
    nq, nv = em.nq, em.nv
    q, v = [f"q[{i}]" for i in range(nq)], [f"v[{i}]" for i in range(nv)]
    code = Code()
    code.raw(f"memset(G, 0, sizeof(double)*{max(len(rows) * nv, 1)});")
    emit_closure(code, spec, em, rows, columns, q, "e", "G")
    code.prune()
    out = [f"static void {prefix}_closure(const double *q, double *e, double *G)\n{{\n{code.text()}\n}}\n"]
    code = Code()
    emit_closure_bias(code, spec, em, rows, q, v, "gamma")
    code.prune()
    out.append(f"static void {prefix}_closure_bias(const double *q, const double *v, double *gamma)\n"
               f"{{\n{code.text()}\n}}\n")
    return "\n".join(out)


DRIVER_SOURCE = """
static const int {P}_dep_v[{ND}] = {{{dep_v}}};
static const int {P}_dep_q[{ND}] = {{{dep_q}}};
""" + INDEPENDENT_TABLES + """
void {P}_workspace_init({P}_workspace *ws)
{{
  /* warm start: the dependent coordinates of the reference configuration */
  for (int i = 0; i < {nd}; ++i) ws->qd[i] = {P}_q_ref[{P}_dep_q[i]];
}}

static int {P}_partition(const double *q, double *G, double *Gd)
{{
  /* G (nd x nv) at q; Gd its dependent columns */
  double e[{ND}];
  {P}_closure(q, e, G);
  for (int i = 0; i < {nd}; ++i)
    for (int j = 0; j < {nd}; ++j) Gd[i*{nd} + j] = G[i*{nv} + {P}_dep_v[j]];
  return 0;
}}

int {P}_close({P}_workspace *ws, const double *q_ind, double *q)
{{
  /* q (nq) from the independent coordinates q_ind: Newton's method on the closure rows for the
     dependent ones, from ws->qd; ws->qd <- the solution.  0 = ok, 2 = no convergence, 1 = singular G_d */
  double e[{ND}], G[{ND}*{NV}], Gd[{ND}*{ND}];
  for (int i = 0; i < {nqi}; ++i) q[{P}_ind_q[i]] = q_ind[i];
  for (int i = 0; i < {nd}; ++i) q[{P}_dep_q[i]] = ws->qd[i];
  int polish = 0;
  for (int it = 0; it < {maxit}; ++it) {{
    {P}_closure(q, e, G);
    double err = 0.0;
    for (int i = 0; i < {nd}; ++i) err = fmax(err, fabs(e[i]));
    if (!(err == err)) return 2;
    if (err <= {tol}) {{ if (polish++) break; }}
    for (int i = 0; i < {nd}; ++i) {{
      e[i] = -e[i];
      for (int j = 0; j < {nd}; ++j) Gd[i*{nd} + j] = G[i*{nv} + {P}_dep_v[j]];
    }}
    if ({P}_solve({nd}, Gd, e)) return 1;
    for (int i = 0; i < {nd}; ++i) q[{P}_dep_q[i]] += e[i];
    if (it == {maxit} - 1) return 2;
  }}
  for (int i = 0; i < {nd}; ++i) ws->qd[i] = q[{P}_dep_q[i]];
  return 0;
}}

int {P}_embedded_fd(const double *p, const double *q, const double *v, const double *tau, double *qdd)
{{
  /* accelerations (nv) of all tree joints at a closed q and consistent v (G v = 0):
     X^T M X a_i = X^T (T - C - M Xdot v_i), a = X a_i + Xdot v_i (module docstring) */
  double G[{ND}*{NV}], Gd[{ND}*{ND}], X[{NV}*{NI}], xd[{NV}], gamma[{ND}];
  double M[{NV}*{NV}], C[{NV}], zero[{NV}], Mr[{NI}*{NI}], r[{NI}], w[{NV}];
  {P}_partition(q, G, Gd);
  {P}_closure_bias(q, v, gamma);
  /* X = [I; -Gd^-1 Gi] and Xdot v_i = [0; -Gd^-1 gamma], one solve per column */
  memset(X, 0, sizeof X); memset(xd, 0, sizeof xd);
  for (int c = 0; c <= {ni}; ++c) {{
    double A[{ND}*{ND}], b[{ND}];
    memcpy(A, Gd, sizeof A);
    for (int i = 0; i < {nd}; ++i) b[i] = c < {ni} ? -G[i*{nv} + {P}_ind_v[c]] : -gamma[i];
    if ({P}_solve({nd}, A, b)) return 1;
    for (int i = 0; i < {nd}; ++i) {{ if (c < {ni}) X[{P}_dep_v[i]*{ni} + c] = b[i]; else xd[{P}_dep_v[i]] = b[i]; }}
    if (c < {ni}) X[{P}_ind_v[c]*{ni} + c] = 1.0;
  }}
  memset(zero, 0, sizeof zero);
  {P}_crba(p, q, M);
  {P}_rnea(p, q, v, zero, C);
  for (int i = 0; i < {nv}; ++i) {{
    double s = tau[i] - C[i];
    for (int j = 0; j < {nv}; ++j) s -= M[i*{nv} + j]*xd[j];
    w[i] = s;
  }}
  for (int a = 0; a < {ni}; ++a) {{
    double s = 0.0;
    for (int i = 0; i < {nv}; ++i) s += X[i*{ni} + a]*w[i];
    r[a] = s;
    for (int b = 0; b < {ni}; ++b) {{
      double t = 0.0;
      for (int i = 0; i < {nv}; ++i) {{
        double mx = 0.0;
        for (int j = 0; j < {nv}; ++j) mx += M[i*{nv} + j]*X[j*{ni} + b];
        t += X[i*{ni} + a]*mx;
      }}
      Mr[a*{ni} + b] = t;
    }}
  }}
  if ({P}_solve({ni}, Mr, r)) return 1;
  for (int i = 0; i < {nv}; ++i) {{
    double s = xd[i];
    for (int a = 0; a < {ni}; ++a) s += X[i*{ni} + a]*r[a];
    qdd[i] = s;
  }}
  return 0;
}}

int {P}_complete_velocity(const double *q, const double *v_ind, double *v)
{{
  /* v (nv) = X v_ind at a closed q */
  double G[{ND}*{NV}], Gd[{ND}*{ND}], b[{ND}];
  {P}_partition(q, G, Gd);
  for (int c = 0; c < {ni}; ++c) v[{P}_ind_v[c]] = v_ind[c];
  for (int i = 0; i < {nd}; ++i) {{
    double s = 0.0;
    for (int c = 0; c < {ni}; ++c) s -= G[i*{nv} + {P}_ind_v[c]]*v_ind[c];
    b[i] = s;
  }}
  if ({P}_solve({nd}, Gd, b)) return 1;
  for (int i = 0; i < {nd}; ++i) v[{P}_dep_v[i]] = b[i];
  return 0;
}}

int {P}_derivatives_ws({P}_workspace *ws, const double *p, double t, const double *x, const double *u, double *dx)
{{
  /* x = [q_i; v_i], u = [tau_i; ctrl]: dx = [q_i dot; theta_ddot_i] */
  double q[{NQ}], v[{NV}], T[{NV}], f[{NV}], qd[{NQ}], a[{NV}];
  (void)t;
  int rc = {P}_close(ws, x, q);
  if (rc) return rc;
  rc = {P}_complete_velocity(q, x + {nqi}, v);
  if (rc) return rc;
""" + INDEPENDENT_RATE + """
int {P}_outputs_ws({P}_workspace *ws, const double *p, const double *x, double *y)
{{
  /* every joint coordinate (nq), the loops closed */
  (void)p;
  return {P}_close(ws, x, y);
}}

/* the one static workspace of the plain functions (warm start of the closure solve; not thread-safe:
   concurrent callers use the _ws variants with a workspace each) */
static {P}_workspace {P}_static_ws;
static int {P}_static_ready = 0;

static {P}_workspace *{P}_default_ws(void)
{{
  if (!{P}_static_ready) {{ {P}_workspace_init(&{P}_static_ws); {P}_static_ready = 1; }}
  return &{P}_static_ws;
}}

void {P}_start_state(double *x)
{{
  /* the reference configuration (closed) at rest; resets the static warm start */
  for (int i = 0; i < {nqi}; ++i) x[i] = {P}_q_ref[{P}_ind_q[i]];
  for (int c = 0; c < {ni}; ++c) x[{nqi} + c] = 0.0;
  {P}_workspace_init({P}_default_ws());
}}

int {P}_derivatives(const double *p, double t, const double *x, const double *u, double *dx)
{{
  return {P}_derivatives_ws({P}_default_ws(), p, t, x, u, dx);
}}

int {P}_outputs(const double *p, const double *x, double *y)
{{
  return {P}_outputs_ws({P}_default_ws(), p, x, y);
}}
"""


def closed_system(em, prefix: str):
    """(source, names, extra header declarations) of an embedded closed chain's state-space functions."""
    t = em.tree_model
    spec = TreeSpec(t)
    dep_v, dep_q, ind_v, ind_q, rows = partition(em)
    columns = sorted({int(j) for lp in em.loops for j in lp.v_idx})
    q_ref = np.asarray(em.neutral(), float)
    nd = len(dep_v)
    typedef = f"typedef struct {{ double qd[{max(nd, 1)}]; }} {prefix}_workspace;\n"
    src = [typedef, SOLVE_SOURCE.format(prefix=prefix, floor=fmt(SINGULAR_FLOOR)),
           closure_functions(em, spec, prefix, rows, columns),
           DRIVER_SOURCE.format(**reduced_format(prefix, t, q_ref, ind_q, ind_v), ND=max(nd, 1), nd=nd,
                                dep_v=c_ints(dep_v), dep_q=c_ints(dep_q), maxit=NEWTON_MAX_ITER,
                                tol=fmt(SIMULATION_CLOSURE_TOL))]
    info = reduced_interface(t, q_ref, ind_q, ind_v)
    extra = (typedef + f"void {prefix}_workspace_init({prefix}_workspace *ws);\n"
             f"int {prefix}_close({prefix}_workspace *ws, const double *q_ind, double *q);\n"
             f"int {prefix}_complete_velocity(const double *q, const double *v_ind, double *v);\n"
             f"int {prefix}_embedded_fd(const double *p, const double *q, const double *v, const double *tau, "
             "double *qdd);\n"
             f"int {prefix}_derivatives_ws({prefix}_workspace *ws, const double *p, double t, const double *x, "
             "const double *u, double *dx);\n"
             f"int {prefix}_outputs_ws({prefix}_workspace *ws, const double *p, const double *x, double *y);\n")
    return "\n".join(src), info, extra

