"""C of the force elements a tree carries: joint springs, dampers, actuators and DC motors
(:mod:`dynamics.forces` gives their terminal equations, seed 004 section 3 and Fig. 1, with MuJoCo's
semantics; the motors' electrical equations after seed 004 section 5).

Stiffness and damping of each spring, the gear of each actuator and the six constants of each DC motor
are tunable parameters (after the inertias in ``p``); spring references, gains, biases and ranges are
constants.  A motor's rotor inertia is in its joint's armature (``gear_ratio^2 rotor_inertia``, added by
the model builder), a constant of the generated code.
"""

from __future__ import annotations

from ..force_elements import DCMotorSpec, JointForce
from ..joints import has_quaternion
from .emit import fmt

__all__ = ["force_parameters", "passive_source", "actuator_source", "motor_source", "dc_motors", "MOTOR_FIELDS",
           "QUAT_LOG_SOURCE"]

#: the tunable parameters of each DC motor, in ``p`` (ohm, H, N m/A, V s/rad, rotor per joint, 1)
MOTOR_FIELDS = ("resistance", "inductance", "torque_constant", "back_emf_constant", "gear_ratio", "efficiency")

#: rotation vector of a quaternion [w, x, y, z] (normalized, shortest rotation), as
#: :func:`dynamics.spatial.quat_log`; SMALL is :data:`dynamics.tolerances.SMALL_ANGLE`
QUAT_LOG_SOURCE = """
static CG_UNUSED void {prefix}_quat_log(const double *q, double *out)
{{
  const double n = 1.0/sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3]);
  const double sg = q[0] < 0.0 ? -n : n;
  const double w = q[0]*sg, x = q[1]*sg, y = q[2]*sg, z = q[3]*sg;
  const double s = sqrt(x*x + y*y + z*z);
  const double f = s < {small} ? 2.0/w : 2.0*atan2(s, w)/s;
  out[0] = f*x; out[1] = f*y; out[2] = f*z;
}}

static CG_UNUSED void {prefix}_quat_matrix(const double *q, double *R)
{{
  const double n = 1.0/sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3]);
  const double w = q[0]*n, x = q[1]*n, y = q[2]*n, z = q[3]*n;
  R[0] = 1 - 2*(y*y + z*z); R[1] = 2*(x*y - w*z); R[2] = 2*(x*z + w*y);
  R[3] = 2*(x*y + w*z); R[4] = 1 - 2*(x*x + z*z); R[5] = 2*(y*z - w*x);
  R[6] = 2*(x*z - w*y); R[7] = 2*(y*z + w*x); R[8] = 1 - 2*(x*x + y*y);
}}
"""


def dc_motors(model) -> list[DCMotorSpec]:
    """The DC motors of a tree, in the order of their currents and voltages (:func:`dynamics.forces.motor_names`)."""
    return [e for e in model.forces.elements if isinstance(e, DCMotorSpec)]


def force_parameters(model) -> tuple[list[str], list[float]]:
    """Names and defaults of the force-element parameters: ``joint.stiffness``, ``joint.damping`` per
    spring, ``actuator.gear`` per actuator, ``motor.FIELD`` (:data:`MOTOR_FIELDS`) per DC motor."""
    names, values = [], []
    for s in model.forces.springs:
        names += [f"{s.joint}.stiffness", f"{s.joint}.damping"]
        values += [float(s.stiffness), float(s.damping)]
    for a in model.forces.actuators:
        names.append(f"{a.name}.gear")
        values.append(float(a.gear))
    for m in dc_motors(model):
        names += [f"{m.name}.{f}" for f in MOTOR_FIELDS]
        values += [float(getattr(m, f)) for f in MOTOR_FIELDS]
    return names, values


def passive_source(model, prefix: str, base: int) -> str:
    """``void PREFIX_passive_forces(p, q, v, tau)``: ``tau = `` spring plus damper forces (nv), the native
    format's joint forces included (:func:`joint_force_lines`)."""
    lines = [f"void {prefix}_passive_forces(const double *p, const double *q, const double *v, double *tau)", "{",
             "  /* joint springs and dampers (seed 004 Fig. 1 terminal equations; dynamics/forces.py) */",
             f"  memset(tau, 0, sizeof(double)*{max(model.nv, 1)});"]
    types = dict(zip(model.joint_names, model.joint_types))
    for i, s in enumerate(model.forces.springs):
        k, d = f"p[{base + 2 * i}]", f"p[{base + 2 * i + 1}]"
        qs, vs = model.q_slice(s.joint), model.v_slice(s.joint)
        for j in range(vs.start, vs.stop):
            lines.append(f"  tau[{j}] -= {d}*v[{j}];  /* {s.joint}: damping */")
        if qs.stop - qs.start == 1:
            lines.append(f"  tau[{vs.start}] -= {k}*(q[{qs.start}] - {fmt(float(s.springref))});  /* {s.joint}: spring */")
        elif has_quaternion(types[s.joint]):
            q4 = qs.stop - 4
            v3 = vs.start
            lines.append(f"  {{ double r[3]; {prefix}_quat_log(q + {q4}, r);  /* {s.joint}: spring to the identity */")
            lines.append(f"    tau[{v3}] -= {k}*r[0]; tau[{v3 + 1}] -= {k}*r[1]; tau[{v3 + 2}] -= {k}*r[2];")
            if types[s.joint] == "free":
                lines.append(f"    double R[9]; {prefix}_quat_matrix(q + {q4}, R);")
                for c in range(3):
                    lines.append(f"    tau[{v3 + 3 + c}] -= {k}*(R[{c}]*q[{qs.start}] + R[{3 + c}]*q[{qs.start + 1}] "
                                 f"+ R[{6 + c}]*q[{qs.start + 2}]);")
            lines.append("  }")
    lines += joint_force_lines(model)
    lines.append("}")
    return "\n".join(lines)


def joint_force_lines(model) -> list[str]:
    """C lines adding the native format's joint springs, dampers and regularised Coulomb friction
    (:class:`dynamics.force_elements.JointForce`: ``-k (q - rest) - c v - f tanh(v / v_f)`` on a
    one-coordinate joint, as :func:`dynamics.forces.element_forces`; URDF ``<dynamics friction>`` and MJCF
    ``frictionloss`` are read as such) to ``tau``; their constants are written in (not tunable)."""
    lines = []
    for e in model.forces.elements:
        if not isinstance(e, JointForce):
            continue
        qi, vi = model.q_slice(e.joint).start, model.v_slice(e.joint).start
        terms = []
        if e.stiffness:
            terms.append(f"{fmt(float(e.stiffness))}*(q[{qi}] - {fmt(float(e.rest))})")
        if e.damping:
            terms.append(f"{fmt(float(e.damping))}*v[{vi}]")
        if e.friction:
            terms.append(f"{fmt(float(e.friction))}*tanh(v[{vi}]/{fmt(float(e.friction_velocity))})")
        if terms:
            lines.append(f"  tau[{vi}] -= {' + '.join(terms)};  /* {e.name} on {e.joint} */")
    return lines


def actuator_source(model, prefix: str, base: int) -> str:
    """``void PREFIX_actuator_forces(p, q, v, ctrl, tau)``: ``tau = `` actuator forces (nv), MuJoCo's affine
    gain and bias, ``ctrl`` clamped to ``ctrlrange`` and the force to ``forcerange``."""
    lines = [f"void {prefix}_actuator_forces(const double *p, const double *q, const double *v, const double *ctrl, "
             "double *tau)", "{", "  /* actuators: gear * clamp(gain ctrl + bias, forcerange) (dynamics/forces.py) */",
             f"  memset(tau, 0, sizeof(double)*{max(model.nv, 1)});"]
    for i, a in enumerate(model.forces.actuators):
        gear = f"p[{base + 2 * len(model.forces.springs) + i}]"
        qi, vi = model.q_slice(a.joint).start, model.v_slice(a.joint).start
        g, b = [fmt(float(x)) for x in a.gain], [fmt(float(x)) for x in a.bias]
        lo, hi = (fmt(float(x)) for x in a.ctrlrange)
        flo, fhi = (fmt(float(x)) for x in a.forcerange)
        lines += [f"  {{ /* {a.name} on {a.joint} */",
                  f"    const double len = {gear}*q[{qi}], vel = {gear}*v[{vi}];",
                  f"    const double c = fmin(fmax(ctrl[{i}], {lo}), {hi});",
                  f"    const double force = ({g[0]} + {g[1]}*len + {g[2]}*vel)*c + {b[0]} + {b[1]}*len + {b[2]}*vel;",
                  f"    tau[{vi}] += {gear}*fmin(fmax(force, {flo}), {fhi});", "  }"]
    lines.append("}")
    return "\n".join(lines)


def motor_source(model, prefix: str, base: int) -> str:
    """``void PREFIX_motor_forces(p, v, i, volt, tau, di)``: the DC motors' joint forces ``tau`` (nv) and
    current rates ``di`` (nmotors, A/s) at joint velocities ``v`` (nv), currents ``i`` (A) and voltages
    ``volt`` (V), as :func:`dynamics.forces.motor_rates`: ``tau_j += eta N k_t i`` on the motor's joint and
    ``L di/dt = V - R i - k_e N v_j`` (seed 004 section 5: the current is the electrical domain's state)."""
    first = base + 2 * len(model.forces.springs) + len(model.forces.actuators)
    lines = [(f"void {prefix}_motor_forces(const double *p, const double *v, const double *i, const double *volt, "
              "double *tau, double *di)"), "{",
             "  /* DC motors: tau_j = eta N kt i, L di/dt = V - R i - ke N v_j (dynamics/forces.py motor_rates) */",
             f"  memset(tau, 0, sizeof(double)*{max(model.nv, 1)});"]
    for k, m in enumerate(dc_motors(model)):
        R, L, kt, ke, N, eta = (f"p[{first + len(MOTOR_FIELDS) * k + j}]" for j in range(len(MOTOR_FIELDS)))
        j = model.v_slice(m.joint).start
        lines += [f"  /* {m.name} on {m.joint} */",
                  f"  tau[{j}] += {eta}*{N}*{kt}*i[{k}];",
                  f"  di[{k}] = (volt[{k}] - {R}*i[{k}] - {ke}*{N}*v[{j}])/{L};"]
    if len(lines) == 4:
        lines.append("  (void)p; (void)v; (void)i; (void)volt; (void)di;")
    lines.append("}")
    return "\n".join(lines)
