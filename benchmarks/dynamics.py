"""Benchmark: RNEA, CRBA and ABA of ``dynamics`` against Pinocchio, and scaling in N.

Run ``python benchmarks/dynamics.py`` (``--quick`` for a short run).

1. A 7-dof arm (Franka panda from example-robot-data, fingers locked) and a
   humanoid (Talos, reduced model: free flyer + 32 revolute joints), each built
   through ``dynamics.build_model`` from the numbers of the Pinocchio model (the
   results are checked against Pinocchio before timing).  For each algorithm the
   time per configuration at B = 1 (one call per configuration) and at
   B = 1000 (one batched call) is printed next to Pinocchio called in a Python
   loop over the same configurations, and the ratio ours / Pinocchio.
2. Serial chains of N = 10 ... 640 revolute bodies: time per call (B = 1)
   against N and the fitted exponent (slope of log time vs log N).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


from mbcompose import dynamics as dyn  # noqa: E402

ROBOTS = None


def robots_dir() -> Path:
    import pinocchio as pin  # noqa: F401

    base = Path(sys.prefix) / "lib"
    for p in base.glob("python3*/site-packages/cmeel.prefix/share/example-robot-data/robots"):
        return p
    import example_robot_data  # noqa: F401

    return Path(example_robot_data.getModelPath("panda_description/urdf/panda.urdf")) / "robots"


# ---------------------------------------------------------------------------
# Pinocchio model -> BodySpec list
# ---------------------------------------------------------------------------

def from_pinocchio(pm):
    """BodySpecs of a Pinocchio model whose joints are R{X,Y,Z}, P{X,Y,Z}, (un)aligned, spherical, free."""
    bodies = []
    for i in range(1, pm.njoints):
        j = pm.joints[i]
        name = j.shortname()
        axis = (0.0, 0.0, 1.0)
        if name in ("JointModelRX", "JointModelRY", "JointModelRZ", "JointModelPX", "JointModelPY", "JointModelPZ"):
            axis = {"X": (1.0, 0, 0), "Y": (0, 1.0, 0), "Z": (0, 0, 1.0)}[name[-1]]
            jt = "revolute" if name[-2] == "R" else "prismatic"
        elif name == "JointModelRevoluteUnaligned":
            jt, axis = "revolute", tuple(j.extract().axis)
        elif name == "JointModelPrismaticUnaligned":
            jt, axis = "prismatic", tuple(j.extract().axis)
        elif name == "JointModelFreeFlyer":
            jt = "free"
        elif name == "JointModelSpherical":
            jt = "spherical"
        else:
            raise ValueError(f"joint {pm.names[i]}: {name} not mapped")
        I = pm.inertias[i]
        M = pm.jointPlacements[i]
        bodies.append(dyn.BodySpec(pm.names[i], int(pm.parents[i]) - 1, jt, pm.names[i], M.rotation.copy(),
                                   M.translation.copy(), float(I.mass), I.lever.copy(), I.inertia.copy(), axis))
    return dyn.build_model(bodies, gravity=tuple(pm.gravity.linear))


def pin_q(model, q):
    out = []
    for k, t in enumerate(model.joint_types):
        qk = q[..., model.q_slice(k)]
        if t in ("free", "spherical"):
            out.append(np.concatenate([qk[..., :-4], qk[..., -3:], qk[..., -4:-3]], axis=-1))
        else:
            out.append(qk)
    return np.concatenate(out, axis=-1)


def pin_vperm(model):
    perm = []
    for k, t in enumerate(model.joint_types):
        s = model.v_slice(k)
        idx = list(range(s.start, s.stop))
        perm.extend(idx[3:] + idx[:3] if t == "free" else idx)
    return np.array(perm)


def load_robots():
    import pinocchio as pin

    root = robots_dir()
    panda = pin.buildModelFromUrdf(str(root / "panda_description/urdf/panda.urdf"))
    fingers = [panda.getJointId(n) for n in panda.names if "finger" in n]
    panda = pin.buildReducedModel(panda, fingers, pin.neutral(panda))
    talos = pin.buildModelFromUrdf(str(root / "talos_data/robots/talos_reduced.urdf"), pin.JointModelFreeFlyer())
    return [("panda (7 dof)", panda), (f"talos ({talos.nv - 6} dof + free flyer)", talos)]


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------

def per_call(fn, min_time=0.2, max_reps=10000, repeats=5):
    """Seconds per call: the best of ``repeats`` runs of about ``min_time / repeats`` each
    (the minimum is the least disturbed by other processes on a shared machine)."""
    fn()
    best = np.inf
    for _ in range(repeats):
        reps, t0 = 0, time.perf_counter()
        while True:
            fn()
            reps += 1
            el = time.perf_counter() - t0
            if el > min_time / repeats or reps >= max_reps:
                break
        best = min(best, el / reps)
    return best


def compare_robot(label, pm, B, min_time):
    import pinocchio as pin

    model = from_pinocchio(pm)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = dyn.random_configuration(model, rng, batch=B)
    v = rng.normal(size=(B, model.nv))
    a = rng.normal(size=(B, model.nv))
    perm = pin_vperm(model)
    qp, vp, ap = pin_q(model, q), v[:, perm], a[:, perm]
    # correctness first
    err = max(np.max(np.abs(dyn.inverse_dynamics(model, q[0], v[0], a[0])[perm] - pin.rnea(pm, pd, qp[0], vp[0], ap[0]))),
              np.max(np.abs(dyn.forward_dynamics(model, q[0], v[0], a[0])[perm] - pin.aba(pm, pd, qp[0], vp[0], ap[0]))))
    algs = {
        "RNEA": (lambda i: dyn.inverse_dynamics(model, q[i], v[i], a[i]),
                 lambda: dyn.inverse_dynamics(model, q, v, a),
                 lambda i: pin.rnea(pm, pd, qp[i], vp[i], ap[i])),
        "CRBA": (lambda i: dyn.mass_matrix(model, q[i]),
                 lambda: dyn.mass_matrix(model, q),
                 lambda i: pin.crba(pm, pd, qp[i])),
        "ABA": (lambda i: dyn.forward_dynamics(model, q[i], v[i], a[i]),
                lambda: dyn.forward_dynamics(model, q, v, a),
                lambda i: pin.aba(pm, pd, qp[i], vp[i], ap[i])),
    }
    print(f"\n{label}: nq={model.nq} nv={model.nv} bodies={model.n_bodies}  (max |ours - pinocchio| = {err:.1e})")
    print(f"  {'alg':5s} {'ours B=1':>11s} {'pin B=1':>11s} {'ratio':>8s} | {'ours B=' + str(B):>12s} "
          f"{'pin loop':>11s} {'ratio':>8s}   (microseconds per configuration)")
    rows = {}
    for name, (one, batch, ref) in algs.items():
        t1 = per_call(lambda: one(0), min_time)
        p1 = per_call(lambda: ref(0), min_time)
        tb = per_call(batch, min_time, max_reps=50) / B

        def loop():
            for i in range(B):
                ref(i)
        pb = per_call(loop, min_time, max_reps=50) / B
        rows[name] = (t1, p1, tb, pb)
        print(f"  {name:5s} {t1 * 1e6:11.1f} {p1 * 1e6:11.2f} {t1 / p1:8.1f} | {tb * 1e6:12.2f} {pb * 1e6:11.2f} {tb / pb:8.2f}")
    return rows


def chain(N):
    rng = np.random.default_rng(N)
    bodies = []
    for k in range(N):
        bodies.append(dyn.BodySpec(f"b{k}", k - 1, "revolute", f"j{k}", np.eye(3), np.array([0.0, 0.0, 0.1]) if k else np.zeros(3),
                                   1.0, np.array([0.0, 0.0, 0.05]), np.eye(3) * 0.01, axis=tuple(rng.normal(size=3))))
    return dyn.build_model(bodies)


def scaling(Ns, min_time):
    print("\nserial chains, B = 1, time per call (ms)")
    print(f"  {'N':>5s} {'RNEA':>9s} {'CRBA':>9s} {'ABA':>9s}")
    T = {"RNEA": [], "CRBA": [], "ABA": []}
    for N in Ns:
        model = chain(N)
        rng = np.random.default_rng(1)
        q, v, a = (rng.normal(size=model.nv) for _ in range(3))
        T["RNEA"].append(per_call(lambda: dyn.inverse_dynamics(model, q, v, a), min_time, 200, repeats=9))
        T["CRBA"].append(per_call(lambda: dyn.mass_matrix(model, q), min_time, 200, repeats=3))
        T["ABA"].append(per_call(lambda: dyn.forward_dynamics(model, q, v, a), min_time, 200, repeats=9))
        print(f"  {N:5d} {T['RNEA'][-1] * 1e3:9.3f} {T['CRBA'][-1] * 1e3:9.3f} {T['ABA'][-1] * 1e3:9.3f}")
    slopes = {k: float(np.polyfit(np.log(Ns), np.log(t), 1)[0]) for k, t in T.items()}
    print("  fitted exponent (log-log slope): " + ", ".join(f"{k} {s:.3f}" for k, s in slopes.items()))
    return slopes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short run: B = 100, N up to 160, 0.05 s per timing")
    args = ap.parse_args(argv)
    B = 100 if args.quick else 1000
    min_time = 0.05 if args.quick else 0.3
    Ns = [10, 20, 40, 80, 160] if args.quick else [10, 20, 40, 80, 160, 320, 640]
    try:
        robots = load_robots()
    except Exception as exc:  # pinocchio / example-robot-data missing
        print(f"skipping robot comparison: {exc}")
        robots = []
    for label, pm in robots:
        compare_robot(label, pm, B, min_time)
    scaling(Ns, min_time)


if __name__ == "__main__":
    main()
