"""Benchmark: our public RNEA, CRBA and ABA against Pinocchio's Python calls (issue 12, points 1-3).

Run ``python benchmarks/dynamics.py`` (``--quick`` for a short run).

Both models come from the same URDF file of example-robot-data: ours through
``mbcompose.compose`` (Talos with ``base="floating"``), Pinocchio's through
``buildModelFromUrdf`` (Talos with a free flyer); coordinates are mapped by joint
name and the results are compared before any timing.  Every timing is the minimum
over repeated blocks, ours and Pinocchio's interleaved, so both see the same machine
load (one-configuration timings use the thread's CPU time, batches the wall clock);
ratios are ours / Pinocchio.

1. One configuration: ``dynamics.inverse_dynamics`` / ``mass_matrix`` /
   ``forward_dynamics`` vs ``pin.rnea`` / ``pin.crba`` / ``pin.aba`` (the wrapper
   overhead of the public call is included, and printed on its own).
2. Batches of B = 1,000 and 10,000 configurations: our batched call (``prange``,
   ``numba.get_num_threads()`` threads) per configuration, vs a Python loop of
   Pinocchio calls and vs ``pin.rneaInParallel`` / ``pin.abaInParallel`` with the
   same number of threads.
3. Serial chains of 5 ... 200 revolute bodies: time of one RNEA / ABA call against N
   and the fitted exponent (slope of log time against log N).
"""

from __future__ import annotations

import argparse
import os
import platform
import sysconfig
import time

import numpy as np

import mbcompose
from mbcompose import dynamics as dyn

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ROBOTS = os.path.join(SHARE, "example-robot-data", "robots")


def load_pair(rel_path, floating):
    """(our SKOModel, Pinocchio model) of one URDF."""
    import pinocchio as pin

    path = os.path.join(ROBOTS, rel_path)
    ours = mbcompose.compose(path, base="floating" if floating else "fixed", package_dirs=[SHARE]).model
    if ours.kind == "embedded":  # panda's <mimic> fingers: Pinocchio's default parser ignores mimic
        ours = ours.tree_model
    theirs = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return ours, theirs


def coordinate_maps(model, pm):
    """(q_index, v_index) with ``q_pin = q_ours[q_index]`` and ``v_pin = v_ours[v_index]``."""
    qi, vi = [], []
    for i in range(1, pm.njoints):
        name = pm.names[i]
        qs, vs = list(range(*model.q_slice(name).indices(model.nq))), list(range(*model.v_slice(name).indices(model.nv)))
        if model.joint_types[model.joint_index(name)] == "free":
            qs = qs[:3] + qs[4:7] + qs[3:4]      # [p, w, x, y, z] -> [p, x, y, z, w]
            vs = vs[3:] + vs[:3]                 # [omega; v] -> [v; omega]
        elif model.joint_types[model.joint_index(name)] == "spherical":
            qs = qs[1:] + qs[:1]
        assert len(qs) == pm.joints[i].nq and len(vs) == pm.joints[i].nv, name
        qi += qs
        vi += vs
    return np.array(qi), np.array(vi)


def best_of(fns, repeats, number, clock=time.thread_time):
    """Seconds per call of each function: minimum over ``repeats`` interleaved blocks of ``number`` calls.

    ``clock`` is the calling thread's CPU time for single-threaded calls (it does not
    count the time other processes hold the CPU on a shared machine) and the wall
    clock (``time.perf_counter``) for the multi-threaded batches.
    """
    best = {k: np.inf for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = clock()
            for _ in range(number):
                f()
            best[k] = min(best[k], (clock() - t0) / number)
    return best


def one_configuration(label, model, pm, repeats, number):
    import pinocchio as pin

    pd = pm.createData()
    qi, vi = coordinate_maps(model, pm)
    rng = np.random.default_rng(0)
    q = dyn.random_configuration(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    qp, vp, ap = q[qi], v[vi], a[vi]
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    err = max(np.abs(dyn.inverse_dynamics(model, q, v, a)[vi] - pin.rnea(pm, pd, qp, vp, ap)).max(),
              np.abs(dyn.forward_dynamics(model, q, v, a)[vi] - pin.aba(pm, pd, qp, vp, ap)).max(),
              np.abs(dyn.mass_matrix(model, q)[np.ix_(vi, vi)] - Mp).max())
    print(f"\n{label}: nq={model.nq} nv={model.nv} bodies={model.n_bodies}  max |ours - pinocchio| = {err:.1e}")
    from mbcompose.dynamics.compiled import entry_kernels as ek

    flat, data = model.flat_model, model.create_data()
    out, M, nf = np.empty(model.nv), np.empty((model.nv, model.nv)), np.zeros((0, 6))
    t = best_of({
        "RNEA": lambda: dyn.inverse_dynamics(model, q, v, a), "pin RNEA": lambda: pin.rnea(pm, pd, qp, vp, ap),
        "CRBA": lambda: dyn.mass_matrix(model, q), "pin CRBA": lambda: pin.crba(pm, pd, qp),
        "ABA": lambda: dyn.forward_dynamics(model, q, v, a), "pin ABA": lambda: pin.aba(pm, pd, qp, vp, ap),
        "RNEA kernel": lambda: ek.rnea(flat.ints, flat.floats, data.work, q, v, a, nf, out),
        "CRBA kernel": lambda: ek.crba(flat.ints, flat.floats, data.work, q, M),
        "ABA kernel": lambda: ek.aba(flat.ints, flat.floats, data.work, q, v, a, nf, out),
    }, repeats, number)
    print("  one configuration (microseconds per call; kernel: the compiled entry called directly)")
    for alg in ("RNEA", "CRBA", "ABA"):
        print(f"    {alg:5s} ours {t[alg] * 1e6:8.2f}  pinocchio {t['pin ' + alg] * 1e6:8.2f}  "
              f"ratio {t[alg] / t['pin ' + alg]:6.2f}  kernel {t[alg + ' kernel'] * 1e6:8.2f}  "
              f"wrapper overhead {(t[alg] - t[alg + ' kernel']) * 1e6:5.2f}")
    return {alg: t[alg] / t["pin " + alg] for alg in ("RNEA", "CRBA", "ABA")}


def batches(label, model, pm, sizes, repeats):
    import numba
    import pinocchio as pin

    pd = pm.createData()
    qi, vi = coordinate_maps(model, pm)
    threads = numba.get_num_threads()
    pool = pin.ModelPool(pm, threads)
    rng = np.random.default_rng(1)
    print(f"  batches ({threads} threads; microseconds per configuration)")
    ratios = {}
    for B in sizes:
        q = dyn.random_configuration(model, rng, batch=B)
        v, a = rng.normal(size=(B, model.nv)), rng.normal(size=(B, model.nv))
        qp, vp, ap = q[:, qi], v[:, vi], a[:, vi]
        qpT, vpT, apT = (np.asfortranarray(x.T) for x in (qp, vp, ap))
        assert np.abs(pin.abaInParallel(threads, pool, qpT, vpT, apT).T - dyn.forward_dynamics(model, q, v, a)[:, vi]).max() < 1e-8

        def loop(fn):
            def run():
                for i in range(B):
                    fn(i)
            return run
        t = best_of({
            "RNEA": lambda: dyn.inverse_dynamics(model, q, v, a),
            "pin RNEA": loop(lambda i: pin.rnea(pm, pd, qp[i], vp[i], ap[i])),
            "par RNEA": lambda: pin.rneaInParallel(threads, pool, qpT, vpT, apT),
            "CRBA": lambda: dyn.mass_matrix(model, q),
            "pin CRBA": loop(lambda i: pin.crba(pm, pd, qp[i])),
            "ABA": lambda: dyn.forward_dynamics(model, q, v, a),
            "pin ABA": loop(lambda i: pin.aba(pm, pd, qp[i], vp[i], ap[i])),
            "par ABA": lambda: pin.abaInParallel(threads, pool, qpT, vpT, apT),
        }, repeats, 1, clock=time.perf_counter)
        for alg in ("RNEA", "CRBA", "ABA"):
            par = t.get("par " + alg)
            ratios[(B, alg)] = (t[alg] / t["pin " + alg], None if par is None else t[alg] / par)
            extra = "" if par is None else f"  pin parallel {par / B * 1e6:7.2f}  ratio {t[alg] / par:5.2f}"
            print(f"    B={B:6d} {alg:5s} ours {t[alg] / B * 1e6:7.2f}  pin loop {t['pin ' + alg] / B * 1e6:7.2f}  "
                  f"ratio {t[alg] / t['pin ' + alg]:5.2f}{extra}")
    return ratios


def chain(N):
    rng = np.random.default_rng(N)
    bodies = [dyn.BodySpec(f"b{k}", k - 1, "revolute", f"j{k}", np.eye(3),
                           np.array([0.0, 0.0, 0.1]) if k else np.zeros(3), 1.0, np.array([0.0, 0.0, 0.05]),
                           np.eye(3) * 0.01, axis=tuple(rng.normal(size=3))) for k in range(N)]
    return dyn.build_model(bodies)


def scaling(Ns, repeats, number):
    print("\nserial chains, one configuration, microseconds per call")
    print(f"  {'N':>5s} {'RNEA':>9s} {'ABA':>9s}")
    T = {"RNEA": [], "ABA": []}
    for N in Ns:
        model = chain(N)
        rng = np.random.default_rng(1)
        q, v, a = (rng.normal(size=model.nv) for _ in range(3))
        t = best_of({"RNEA": lambda: dyn.inverse_dynamics(model, q, v, a),
                     "ABA": lambda: dyn.forward_dynamics(model, q, v, a)}, repeats, number)
        for k in T:
            T[k].append(t[k])
        print(f"  {N:5d} {t['RNEA'] * 1e6:9.2f} {t['ABA'] * 1e6:9.2f}")
    slopes = {k: float(np.polyfit(np.log(Ns), np.log(t), 1)[0]) for k, t in T.items()}
    print("  fitted exponent (log-log slope): " + ", ".join(f"{k} {s:.3f}" for k, s in slopes.items()))
    return slopes


def main(argv=None):
    import numba

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="short run: fewer repeats, B = 1,000 only")
    args = ap.parse_args(argv)
    repeats = 5 if args.quick else 15
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"numba {numba.__version__} ({numba.get_num_threads()} threads), python {platform.python_version()}")
    for label, rel, floating in (("panda", "panda_description/urdf/panda.urdf", False),
                                 ("talos_reduced (free flyer)", "talos_data/robots/talos_reduced.urdf", True)):
        model, pm = load_pair(rel, floating)
        one_configuration(label, model, pm, repeats, 200)
        batches(label, model, pm, [1000] if args.quick else [1000, 10000], max(3, repeats // 3))
    scaling([5, 10, 20, 50, 100, 200], repeats, 50)


if __name__ == "__main__":
    main()
