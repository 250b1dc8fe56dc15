"""C99 source of a model's dynamics: :func:`generate_c` -> :class:`GeneratedC`.

The source defines (all ``double``, arrays contiguous, row-major; ``p`` the parameter array,
``PREFIX_param_defaults`` its default values)::

    void PREFIX_start_state(double *x);          reference configuration at rest
    int  PREFIX_derivatives(const double *p, double t, const double *x, const double *u, double *dx);
    int  PREFIX_outputs(const double *p, const double *x, double *y);
    void PREFIX_aba(p, q, v, tau, qdd);  void PREFIX_rnea(p, q, v, a, tau);  void PREFIX_crba(p, q, M);
    void PREFIX_aba_batch(p, n, q, v, tau, qdd) (and rnea, crba): n configurations, rows contiguous
    void PREFIX_passive_forces(p, q, v, tau);  void PREFIX_actuator_forces(p, q, v, ctrl, tau)

    void PREFIX_motor_forces(p, v, i, volt, tau, di)   (trees with DC motors)
    void PREFIX_frame_poses(q, out)              (with ``poses``: world poses of frames, 12 each)

``aba``/``rnea``/``crba`` work on full tree coordinates (``q`` nq, ``v`` nv).  The state ``x`` of a
tree is ``[q; v]`` (``nx = nq + nv``), followed by the DC motors' currents ``i`` (A) when it has motors;
its inputs ``u`` are the joint forces ``tau`` (nv), the actuator controls, then the motors' voltages (V);
``derivatives`` returns ``dx = [q_dot; theta_ddot; di/dt]`` with the springs, dampers, actuators and
motors added to ``tau``; ``outputs`` gives every joint coordinate (``y = q``).  Closed chains
(:mod:`dynamics.codegen.closed`) and joint couplings (:mod:`dynamics.codegen.couplings`: linear ones in
closed form) have the independent coordinates as state and every joint coordinate as output (DC motors
refused there).
Return value 0 = ok.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import joints as J
from ..force_elements import DCMotorSpec, JointForce
from .emit import Code, add, const, fmt, matmul, matvec
from .forces import QUAT_LOG_SOURCE, actuator_source, dc_motors, force_parameters, motor_source, passive_source
from .tree import CodegenUnsupported, TreeSpec, emit_aba, emit_crba_blocks, emit_rnea, inertia_parameters
from ..tolerances import SMALL_ANGLE

__all__ = ["GeneratedC", "FramePose", "generate_c", "CodegenUnsupported", "coordinate_columns", "pose_columns"]

_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class FramePose:
    """A frame whose world pose ``PREFIX_frame_poses`` gives: ``name``, fixed in the tree body of index
    ``body`` at ``rotation`` (3, 3) and ``translation`` (3,) m in that body's frame (the body's own frame:
    the identity and zero)."""

    name: str
    body: int
    rotation: tuple = _IDENTITY
    translation: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class GeneratedC:
    """Generated C of one model (see the module docstring for the functions of ``source``).

    prefix : C identifier prefix; source : the C99 translation unit; header : its declarations;
    nq, nv : tree coordinates; nx, nu, ny : sizes of state, input and output; state_names,
    input_names, output_names, param_names : their names; param_defaults : (np,) values of ``p``;
    start_state : (nx,) the reference configuration at rest; pose_names : the 12 values of
    ``PREFIX_frame_poses`` per requested frame (:func:`pose_columns`), empty without poses.
    """

    prefix: str
    source: str
    header: str
    nq: int
    nv: int
    nx: int
    nu: int
    ny: int
    state_names: tuple
    input_names: tuple
    output_names: tuple
    param_names: tuple
    param_defaults: tuple
    start_state: tuple
    nm: int = 0
    max_step: float = float("inf")
    pose_names: tuple = ()


def coordinate_columns(model, rate: bool = False) -> tuple[str, ...]:
    """``joint`` or ``joint[i]`` per coordinate, as ``mbcompose simulate``'s CSV columns
    (:func:`dynamics.simulation.result.coordinate_columns`)."""
    from ..simulation.result import coordinate_columns as columns

    return columns(model, rate)


def reduced_interface(t, q_ref, ind_q, ind_v) -> dict:
    """Names and sizes of generated equations in independent coordinates (closed chains, couplings): states
    the independent positions ``ind_q`` and velocities ``ind_v`` of the tree ``t``, inputs their forces and the
    actuator controls, outputs every joint coordinate; the start state ``q_ref`` at rest."""
    qn, vn = coordinate_columns(t), coordinate_columns(t, rate=True)
    ni, nqi = len(ind_v), len(ind_q)
    x0 = [float(q_ref[i]) for i in ind_q] + [0.0] * ni
    return dict(state_names=(*(qn[i] for i in ind_q), *(f"v:{vn[j]}" for j in ind_v)),
                input_names=(*(f"tau:{vn[j]}" for j in ind_v), *t.actuator_names), output_names=qn,
                nx=nqi + ni, nu=ni + len(t.actuator_names), ny=t.nq, start_state=tuple(x0))



def reduced_format(prefix: str, t, q_ref, ind_q, ind_v) -> dict:
    """The format keys shared by the C templates of equations in independent coordinates (closed chains,
    couplings; :data:`INDEPENDENT_TABLES`, :data:`INDEPENDENT_RATE`): the prefix ``P``, the sizes (capitals:
    at least 1, for array declarations), the index tables of ``ind_q``/``ind_v`` and the start ``q_ref``."""
    ni, nqi = len(ind_v), len(ind_q)
    return dict(P=prefix, NI=max(ni, 1), NQI=max(nqi, 1), NQ=max(t.nq, 1), NV=max(t.nv, 1), nv=t.nv, ni=ni,
                nqi=nqi, nx=nqi + ni, ind_v=c_ints(ind_v), ind_q=c_ints(ind_q),
                q_ref=", ".join(fmt(float(x)) for x in q_ref) or "0.0")


def c_ints(xs) -> str:
    """The body of a C ``int`` array initialiser (``0`` for an empty one: C has no empty initialiser)."""
    return ", ".join(str(int(x)) for x in xs) or "0"


#: the index tables of the independent coordinates and the start configuration (keys of :func:`reduced_format`)
INDEPENDENT_TABLES = """
static const int {P}_ind_v[{NI}] = {{{ind_v}}};
static const int {P}_ind_q[{NQI}] = {{{ind_q}}};
static const double {P}_q_ref[{NQ}] = {{{q_ref}}};
"""

#: the end of the generated state rate ``dx = [q_i dot; theta_ddot_i]`` once ``q`` and ``v`` are completed
#: (``int rc`` declared): the tree's generalized forces (passive elements, actuators, the inputs on the independent
#: velocities), the embedded forward dynamics, the independent coordinates' rates; 3 when a rate is not finite
INDEPENDENT_RATE = """  {P}_passive_forces(p, q, v, T);
  {P}_actuator_forces(p, q, v, u + {ni}, f);
  for (int i = 0; i < {nv}; ++i) T[i] += f[i];
  for (int c = 0; c < {ni}; ++c) T[{P}_ind_v[c]] += u[c];
  rc = {P}_embedded_fd(p, q, v, T, a);
  if (rc) return rc;
  {P}_qdot(q, v, qd);
  for (int i = 0; i < {nqi}; ++i) dx[i] = qd[{P}_ind_q[i]];
  for (int c = 0; c < {ni}; ++c) dx[{nqi} + c] = a[{P}_ind_v[c]];
  for (int i = 0; i < {nx}; ++i) if (!isfinite(dx[i])) return 3;
  return 0;
}}
"""


def pose_columns(name: str) -> tuple[str, ...]:
    """The 12 values of one frame in ``PREFIX_frame_poses``'s output: ``NAME.x``, ``NAME.y``, ``NAME.z`` (world
    position of its origin, m) then ``NAME.R[i][j]`` (its rotation in the world frame, row-major: column j is
    the frame's axis j in world coordinates)."""
    return (f"{name}.x", f"{name}.y", f"{name}.z", *(f"{name}.R[{i}][{j}]" for i in range(3) for j in range(3)))


def pose_source(tree, prefix: str, frames) -> str:
    """``void PREFIX_frame_poses(const double *q, double *out)``: for each of ``frames`` (:class:`FramePose`),
    12 values of ``out`` (:func:`pose_columns`) at the tree configuration ``q`` (nq): forward kinematics
    ``R = R(parent) R_rel``, ``p = p(parent) + R(parent) l`` from the root (seed 002 Eq. 4, as
    :func:`dynamics.kinematics.body_poses`), then the frame's constant pose in its body."""
    from .closed import _world

    spec = TreeSpec(tree, prefix)
    code = Code()
    code.comment("world poses of the bodies carrying the frames (base-to-tips), then of the frames")
    _, Rw, pw = _world(code, spec, [f.body for f in frames], _vec("q", tree.nq))
    for i, f in enumerate(frames):
        Rf = [[const(float(x)) for x in row] for row in f.rotation]
        pf = [const(float(x)) for x in f.translation]
        R = matmul(Rw[f.body], Rf)
        p = [add(pw[f.body][r], x) for r, x in enumerate(matvec(Rw[f.body], pf))]
        for j, e in enumerate([*p, *(R[r][c] for r in range(3) for c in range(3))]):
            code.store(f"out[{12 * i + j}]", e)
    if not frames:
        code.raw("(void)q; (void)out;")
    return _function(f"void {prefix}_frame_poses(const double *q, double *out)", code)


def parameters(tree) -> tuple[list[str], list[float], int]:
    """(names, defaults, base of the force parameters) of a tree's ``p``."""
    names, values = inertia_parameters(tree)
    fn, fv = force_parameters(tree)
    return names + fn, values + fv, len(names)


#: a function body longer than this is cut into separately compiled pieces (:meth:`Code.chunks`)
CHUNK_LINES = 300
NOINLINE = ("#if defined(__GNUC__)\n#define CG_NOINLINE __attribute__((noinline))\n#define CG_UNUSED __attribute__((unused))\n"
            "#else\n#define CG_NOINLINE\n#define CG_UNUSED\n#endif\n")


def _function(signature: str, code: Code) -> str:
    """``signature { body }``; with work arrays, a ``struct`` of them on the stack, and a long body cut
    into ``static`` pieces called in order (each compiled on its own: see :meth:`Code.split`); unread
    lets are pruned first (:meth:`Code.prune`)."""
    code.prune()
    if not code.work:
        return f"{signature}\n{{\n{code.text()}\n}}\n"
    name = signature.split("(")[0].split()[-1]
    params = signature[signature.index("(") + 1:signature.rindex(")")]
    args = ", ".join(a.split("*")[-1].split()[-1] for a in params.split(","))
    struct = f"struct {name}_work"
    fields = "".join(f"  double {n}[{r}][{c}];\n" for n, r, c in code.work)
    out = [f"{struct} {{\n{fields}}};\n"]
    pieces = code.chunks(CHUNK_LINES)
    for i, lines in enumerate(pieces):
        body = "\n".join(lines)
        out.append(f"static CG_NOINLINE void {name}_{i}({params}, {struct} *w)\n{{\n{body}\n}}\n")
    calls = "".join(f"  {name}_{i}({args}, w);\n" for i in range(len(pieces)))
    out.append(f"{signature}\n{{\n  {struct} work;\n  {struct} *w = &work;\n{calls}}}\n")
    return "\n".join(out)


def _vec(name: str, n: int) -> list[str]:
    return [f"{name}[{i}]" for i in range(n)]


def tree_kernels(spec: TreeSpec, prefix: str) -> str:
    """``PREFIX_aba``, ``PREFIX_rnea``, ``PREFIX_crba`` and their batch loops."""
    m = spec.model
    nq, nv = m.nq, m.nv
    q, v = _vec("q", nq), _vec("v", nv)
    out = []
    code = Code()
    emit_aba(code, spec, q, v, _vec("tau", nv), _vec("qdd", nv))
    out.append(_function(f"void {prefix}_aba(const double *p, const double *q, const double *v, const double *tau, "
                         "double *qdd)", code))
    code = Code()
    emit_rnea(code, spec, q, v, _vec("a", nv), _vec("tau", nv))
    out.append(_function(f"void {prefix}_rnea(const double *p, const double *q, const double *v, const double *a, "
                         "double *tau)", code))
    code = Code()
    code.declare_work("F", nv, 6)
    code.raw(f"memset(M, 0, sizeof(double)*{max(nv * nv, 1)});")
    emit_crba_blocks(code, spec, q, "M", "w->F")
    code.split()
    code.comment("ancestors: M(j, k) = H(j) phi(j, k) Rc(k) H*(k), F carried to the root (seed 001 Algorithm 4.2)")
    code.raw(f"for (int c = 0; c < {nv}; ++c) {{")
    code.raw(f"  int j = {prefix}_body_of[c];")
    code.raw(f"  while ({prefix}_parent[j] >= 0) {{")
    code.raw(f"    {prefix}_force_to_parent(w->X[j], w->F[c]);")
    code.raw(f"    j = {prefix}_parent[j];")
    code.raw(f"    for (int r = {prefix}_v0[j]; r < {prefix}_v0[j + 1]; ++r) {{")
    code.raw("      const double *s = " + prefix + "_S[r];")
    code.raw("      const double *F = w->F[c];")
    code.raw("      const double x = s[0]*F[0] + s[1]*F[1] + s[2]*F[2] + s[3]*F[3] + s[4]*F[4] + s[5]*F[5];")
    code.raw(f"      M[r*{nv} + c] = x; M[c*{nv} + r] = x;")
    code.raw("    }")
    code.raw("  }")
    code.raw("}")
    out.append(_function(f"void {prefix}_crba(const double *p, const double *q, double *M)", code))
    loop = "  for (int i = 0; i < n; ++i)\n    "
    out.append(f"void {prefix}_aba_batch(const double *p, int n, const double *q, const double *v, const double *tau, "
               f"double *qdd)\n{{\n{loop}{prefix}_aba(p, q + (size_t)i*{nq}, v + (size_t)i*{nv}, "
               f"tau + (size_t)i*{nv}, qdd + (size_t)i*{nv});\n}}\n")
    out.append(f"void {prefix}_rnea_batch(const double *p, int n, const double *q, const double *v, const double *a, "
               f"double *tau)\n{{\n{loop}{prefix}_rnea(p, q + (size_t)i*{nq}, v + (size_t)i*{nv}, "
               f"a + (size_t)i*{nv}, tau + (size_t)i*{nv});\n}}\n")
    out.append(f"void {prefix}_crba_batch(const double *p, int n, const double *q, double *M)\n{{\n"
               f"{loop}{prefix}_crba(p, q + (size_t)i*{nq}, M + (size_t)i*{nv * nv});\n}}\n")
    return "\n".join(out)


def tables(spec: TreeSpec, prefix: str) -> str:
    """Static tables of the CRBA ancestor walk: parents, first velocity index per body, the body of each
    velocity coordinate and ``H*`` columns."""
    m = spec.model
    arr = lambda xs: ", ".join(str(x) for x in xs) or "0"
    body_of = [k for k in range(spec.n) for _ in range(spec.nv_node[k])]
    S = [spec.S[k][j] for k in range(spec.n) for j in range(spec.nv_node[k])] or [[0.0] * 6]
    rows = ",\n  ".join("{" + ", ".join(fmt(x) for x in s) + "}" for s in S)
    return (f"static const int {prefix}_parent[{max(spec.n, 1)}] = {{{arr(spec.parent)}}};\n"
            f"static const int {prefix}_v0[{spec.n + 1}] = {{{arr(spec.v0)}}};\n"
            f"static const int {prefix}_body_of[{max(m.nv, 1)}] = {{{arr(body_of)}}};\n"
            f"static const double {prefix}_S[{max(m.nv, 1)}][6] = {{\n  {rows}}};\n\n"
            f"static CG_UNUSED void {prefix}_force_to_parent(const double *X, double *f)\n{{\n"
            "  /* f <- phi f = [R n + l x (R f); R f] (seed 002 Eq. 4) */\n"
            "  const double Rn0 = X[0]*f[0] + X[1]*f[1] + X[2]*f[2], Rn1 = X[3]*f[0] + X[4]*f[1] + X[5]*f[2],"
            " Rn2 = X[6]*f[0] + X[7]*f[1] + X[8]*f[2];\n"
            "  const double Rf0 = X[0]*f[3] + X[1]*f[4] + X[2]*f[5], Rf1 = X[3]*f[3] + X[4]*f[4] + X[5]*f[5],"
            " Rf2 = X[6]*f[3] + X[7]*f[4] + X[8]*f[5];\n"
            "  f[0] = Rn0 + X[10]*Rf2 - X[11]*Rf1; f[1] = Rn1 + X[11]*Rf0 - X[9]*Rf2; f[2] = Rn2 + X[9]*Rf1 - X[10]*Rf0;\n"
            "  f[3] = Rf0; f[4] = Rf1; f[5] = Rf2;\n}\n" + INERTIA_HELPER.format(prefix=prefix))


INERTIA_HELPER = """
static CG_UNUSED void {prefix}_inertia_to_parent(const double *X, const double *P, double *out)
{{
  /* out = phi P phi* for symmetric 6 x 6 P, out stored as upper triangles (21, row by row):
     [[A' + L B'^T - (B' + L C') L, B' + L C'], [., C']], A' = R A R^T ... L = ~l (seed 002 Eq. 4) */
  static const int U[6][6] = {{{{0,1,2,3,4,5}},{{1,6,7,8,9,10}},{{2,7,11,12,13,14}},{{3,8,12,15,16,17}},
                               {{4,9,13,16,18,19}},{{5,10,14,17,19,20}}}};
  double A[3][3], B[3][3], C[3][3], T[3][3], A2[3][3], B2[3][3], C2[3][3], Xb[3][3], L[3][3], top[3][3];
  const double *R = X, *l = X + 9;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {{
      A[i][j] = P[U[i][j]]; B[i][j] = P[U[i][3 + j]]; C[i][j] = P[U[3 + i][3 + j]];
    }}
  double (*src[3])[3] = {{A, B, C}}, (*dst[3])[3] = {{A2, B2, C2}};
  for (int m = 0; m < 3; ++m) {{
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) T[i][j] = R[3*i]*src[m][0][j] + R[3*i + 1]*src[m][1][j] + R[3*i + 2]*src[m][2][j];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) dst[m][i][j] = T[i][0]*R[3*j] + T[i][1]*R[3*j + 1] + T[i][2]*R[3*j + 2];
  }}
  L[0][0] = 0.0; L[0][1] = -l[2]; L[0][2] = l[1];
  L[1][0] = l[2]; L[1][1] = 0.0; L[1][2] = -l[0];
  L[2][0] = -l[1]; L[2][1] = l[0]; L[2][2] = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Xb[i][j] = B2[i][j] + L[i][0]*C2[0][j] + L[i][1]*C2[1][j] + L[i][2]*C2[2][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      top[i][j] = A2[i][j] + L[i][0]*B2[j][0] + L[i][1]*B2[j][1] + L[i][2]*B2[j][2]
                  - (Xb[i][0]*L[0][j] + Xb[i][1]*L[1][j] + Xb[i][2]*L[2][j]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {{
      if (i <= j) {{ out[U[i][j]] = top[i][j]; out[U[3 + i][3 + j]] = C2[i][j]; }}
      out[U[i][3 + j]] = Xb[i][j];
    }}
}}
"""


def qdot_source(model, prefix: str) -> str:
    """``void PREFIX_qdot(q, v, qd)``: configuration rates from velocities, per joint type
    (:func:`dynamics.joints.integrate` differentiated at zero step)."""
    lines = [f"void {prefix}_qdot(const double *q, const double *v, double *qd)", "{",
             "  /* q_dot: v for vector joints; 1/2 Q [0; w] for quaternions; R v for positions */"]
    for k, t in enumerate(model.joint_types):
        q0, v0 = int(model.q_offset[k]), int(model.v_offset[k])
        if J.JOINTS[t].euclidean:
            lines += [f"  qd[{q0 + i}] = v[{v0 + i}];" for i in range(J.JOINTS[t].nv)]
            continue
        if t == "planar":
            lines += [f"  {{ const double c = cos(q[{q0 + 2}]), s = sin(q[{q0 + 2}]);",
                      f"    qd[{q0}] = c*v[{v0}] - s*v[{v0 + 1}]; qd[{q0 + 1}] = s*v[{v0}] + c*v[{v0 + 1}]; "
                      f"qd[{q0 + 2}] = v[{v0 + 2}]; }}"]
            continue
        qq, w = (q0 + 3, v0) if t == "free" else (q0, v0)
        lines.append(f"  {prefix}_quat_rate(q + {qq}, v + {w}, qd + {qq});")
        if t == "free":
            lines += [f"  {{ double R[9]; {prefix}_quat_matrix(q + {qq}, R);"] + [
                f"    qd[{q0 + i}] = R[{3 * i}]*v[{v0 + 3}] + R[{3 * i + 1}]*v[{v0 + 4}] + R[{3 * i + 2}]*v[{v0 + 5}];"
                for i in range(3)] + ["  }"]
    lines.append("}")
    return "\n".join(lines)


QUAT_RATE_SOURCE = """
static CG_UNUSED void {prefix}_quat_rate(const double *q, const double *w, double *qd)
{{
  /* 1/2 q (x) [0; w], w in the body frame */
  qd[0] = -0.5*(q[1]*w[0] + q[2]*w[1] + q[3]*w[2]);
  qd[1] = 0.5*(q[0]*w[0] + q[2]*w[2] - q[3]*w[1]);
  qd[2] = 0.5*(q[0]*w[1] + q[3]*w[0] - q[1]*w[2]);
  qd[3] = 0.5*(q[0]*w[2] + q[1]*w[1] - q[2]*w[0]);
}}
"""


def common_source(tree, prefix: str, names, defaults, base: int) -> str:
    """Includes, sizes, parameter defaults, quaternion helpers, tables, the tree kernels and forces."""
    spec = TreeSpec(tree, prefix)
    vals = ",\n  ".join(", ".join(fmt(x) for x in defaults[i:i + 10]) for i in range(0, len(defaults), 10)) or "0.0"
    pnames = "\n".join(f" *   p[{i}] {nm}" for i, nm in enumerate(names))
    parts = ["#include <math.h>\n#include <string.h>\n#include <stddef.h>\n", NOINLINE,
             f"/* parameters p (defaults {prefix}_param_defaults):\n{pnames}\n */",
             f"const double {prefix}_param_defaults[{max(len(defaults), 1)}] = {{\n  {vals}}};\n",
             QUAT_LOG_SOURCE.format(prefix=prefix, small=fmt(SMALL_ANGLE)),
             QUAT_RATE_SOURCE.format(prefix=prefix), tables(spec, prefix), tree_kernels(spec, prefix),
             passive_source(tree, prefix, base), actuator_source(tree, prefix, base), motor_source(tree, prefix, base),
             qdot_source(tree, prefix)]
    return "\n".join(parts)


def tree_system(model, prefix: str, defaults, base: int):
    """(source, names...) of the state-space functions of a tree: x = [q; v; i], u = [tau; ctrl; volt]
    (``i`` and ``volt`` the DC motors' currents and voltages, empty without motors)."""
    nq, nv, na = model.nq, model.nv, len(model.actuator_names)
    motors = [m.name for m in dc_motors(model)]
    nm = len(motors)
    x0 = [*map(float, model.neutral()), *([0.0] * (nv + nm))]
    xs = ", ".join(fmt(x) for x in x0) or "0.0"
    src = f"""
void {prefix}_start_state(double *x)
{{
  /* the reference configuration at rest, no current */
  static const double x0[{max(nq + nv + nm, 1)}] = {{{xs}}};
  memcpy(x, x0, sizeof(double)*{nq + nv + nm});
}}

int {prefix}_derivatives(const double *p, double t, const double *x, const double *u, double *dx)
{{
  /* dx = [q_dot; theta_ddot; di/dt] with T = u_tau + springs + dampers + actuators + motors */
  double T[{max(nv, 1)}], f[{max(nv, 1)}], m[{max(nv, 1)}];
  (void)t;
  {prefix}_passive_forces(p, x, x + {nq}, T);
  {prefix}_actuator_forces(p, x, x + {nq}, u + {nv}, f);
  {prefix}_motor_forces(p, x + {nq}, x + {nq + nv}, u + {nv + na}, m, dx + {nq + nv});
  for (int i = 0; i < {nv}; ++i) T[i] += f[i] + m[i] + u[i];
  {prefix}_qdot(x, x + {nq}, dx);
  {prefix}_aba(p, x, x + {nq}, T, dx + {nq});
  for (int i = 0; i < {nq + nv + nm}; ++i) if (!isfinite(dx[i])) return 1;
  return 0;
}}

int {prefix}_outputs(const double *p, const double *x, double *y)
{{
  (void)p;
  memcpy(y, x, sizeof(double)*{nq});
  return 0;
}}
"""
    qn, vn = coordinate_columns(model), coordinate_columns(model, rate=True)
    names = dict(state_names=(*qn, *(f"v:{c}" for c in vn), *(f"i:{m}" for m in motors)),
                 input_names=(*(f"tau:{c}" for c in vn), *model.actuator_names, *(f"volt:{m}" for m in motors)),
                 output_names=qn, nx=nq + nv + nm, nu=nv + na + nm, ny=nq, start_state=tuple(x0), nm=nm,
                 max_step=min((m.inductance / m.resistance / 4 for m in dc_motors(model)), default=float("inf")))
    return src, names


def header_source(prefix: str, g: dict) -> str:
    """The declarations of the source (``PREFIX.h``)."""
    P = prefix.upper()
    return f"""/* {prefix}.h: generated by mbcompose (dynamics/codegen); C99, all double, arrays contiguous. */
#ifndef {P}_H
#define {P}_H
#include <stddef.h>
#define {P}_NQ {g['nq']}
#define {P}_NV {g['nv']}
#define {P}_NX {g['nx']}
#define {P}_NU {g['nu']}
#define {P}_NY {g['ny']}
#define {P}_NP {g['np']}
#define {P}_NM {g.get('nm', 0)}
extern const double {prefix}_param_defaults[];
void {prefix}_start_state(double *x);
int {prefix}_derivatives(const double *p, double t, const double *x, const double *u, double *dx);
int {prefix}_outputs(const double *p, const double *x, double *y);
void {prefix}_aba(const double *p, const double *q, const double *v, const double *tau, double *qdd);
void {prefix}_rnea(const double *p, const double *q, const double *v, const double *a, double *tau);
void {prefix}_crba(const double *p, const double *q, double *M);
void {prefix}_aba_batch(const double *p, int n, const double *q, const double *v, const double *tau, double *qdd);
void {prefix}_rnea_batch(const double *p, int n, const double *q, const double *v, const double *a, double *tau);
void {prefix}_crba_batch(const double *p, int n, const double *q, double *M);
void {prefix}_passive_forces(const double *p, const double *q, const double *v, double *tau);
void {prefix}_actuator_forces(const double *p, const double *q, const double *v, const double *ctrl, double *tau);
void {prefix}_motor_forces(const double *p, const double *v, const double *i, const double *volt, double *tau,
                         double *di);
void {prefix}_qdot(const double *q, const double *v, double *qd);
{g.get('extra', '')}#endif
"""


def _refuse_unwritten_forces(tree, kind: str) -> None:
    """:class:`CodegenUnsupported` for force elements the generator does not write (it writes joint
    springs, dampers and friction, actuators and, on trees, DC motors): generated code without them would be silently
    wrong."""
    elements = getattr(tree.forces, "elements", ()) or ()
    extra = [type(e).__name__ for e in elements if not isinstance(e, (DCMotorSpec, JointForce))]
    if kind != "tree" and any(isinstance(e, DCMotorSpec) for e in elements):
        raise CodegenUnsupported("DC motors on a closed chain are not generated (the generated reduced equations "
                                 "carry no currents); the simulator integrates them on trees only as well")
    stateful = [a.name for a in tree.forces.actuators if a.dyntype != "none"]
    if stateful:
        raise CodegenUnsupported(f"actuators with activation dynamics are not generated yet (their activation is a "
                                 f"state the generated code does not carry): {', '.join(stateful)}")
    if extra:
        raise CodegenUnsupported(f"the model has force elements the code generator does not write yet "
                                 f"({', '.join(sorted(set(extra)))}); it writes joint springs, dampers, friction, "
                                 "actuators and DC motors")


def generate_c(model, prefix: str = "model", poses=()) -> GeneratedC:
    """C99 source of ``model``'s dynamics (a rigid-body tree, ``kind == "tree"``, or an embedded closed
    chain, ``kind == "embedded"``); see the module docstring for what it defines.

    poses : :class:`FramePose` s whose world poses ``PREFIX_frame_poses`` gives (none: no such function).

    Raises :class:`CodegenUnsupported` (a ValueError) for what the generator does not write.
    """
    if not prefix.isidentifier():
        raise ValueError(f"prefix {prefix!r} is not a C identifier")
    kind = getattr(model, "kind", None)
    if kind not in ("tree", "embedded"):
        raise CodegenUnsupported(f"code generation takes rigid-body trees and embedded closed chains, not "
                                 f"{kind or type(model).__name__!r} models")
    tree = model.tree_model
    _refuse_unwritten_forces(tree, kind)
    names, defaults, base = parameters(tree)
    body = common_source(tree, prefix, names, defaults, base)
    if kind == "tree":
        system, info = tree_system(tree, prefix, defaults, base)
        extra = ""
    elif model.linear_couplings is not None:
        from .couplings import linear_system

        system, info, extra = linear_system(model, prefix)
    else:
        from .closed import closed_system

        system, info, extra = closed_system(model, prefix)
    poses = tuple(poses)
    for f in poses:
        if not 0 <= int(f.body) < tree.n_bodies:
            raise ValueError(f"frame {f.name!r}: no body of index {f.body} (the tree has {tree.n_bodies})")
    if poses:
        system += "\n" + pose_source(tree, prefix, poses)
        extra += f"void {prefix}_frame_poses(const double *q, double *out);\n"
    g = dict(nq=tree.nq, nv=tree.nv, np=len(defaults), extra=extra, **info)
    g.setdefault("nm", 0)
    title = (f"/* {prefix}.c: dynamics of a {kind} model with {tree.n_bodies} bodies, nq = {tree.nq}, nv = {tree.nv},"
             f" generated by mbcompose (dynamics/codegen).\n * ABA, RNEA and CRBA after seed 001 (Jain, "
             "SKO operators) and seed 002; force elements after seed 004. */\n")
    source = title + body + system
    return GeneratedC(prefix, source, header_source(prefix, g), tree.nq, tree.nv, info["nx"], info["nu"], info["ny"],
                      tuple(info["state_names"]), tuple(info["input_names"]), tuple(info["output_names"]),
                      tuple(names), tuple(defaults), tuple(info["start_state"]), g["nm"],
                      info.get("max_step", float("inf")), tuple(n for f in poses for n in pose_columns(f.name)))
