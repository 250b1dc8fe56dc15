"""Benchmark: generated C (dynamics/codegen) against Pinocchio, issue 28 point 3 and 4.

Run ``python benchmarks/codegen.py`` (``--quick`` for fewer repeats; ``--skip-200`` without the
200-body model).

Panda (fixed base) and talos_reduced (free flyer) from example-robot-data, ours through
``mbcompose.compose`` and Pinocchio's through ``buildModelFromUrdf`` (coordinates mapped by joint
name, :mod:`benchmarks.dynamics`); the results are compared before any timing.  Timings are the
minimum over interleaved repeats (:func:`dynamics.best_of`), ratios ours / Pinocchio:

1. a batch of 1,000 configurations in one C call (``PREFIX_aba_batch``), per configuration, against
   ``pin.abaInParallel(1, ...)`` on the same batch (both C loops, one thread; goal <= 0.5x);
2. one configuration from Python: the library's function called through cffi with preallocated arrays
   (and with new buffers), the library object's ``compile_model(model).forward_dynamics`` and the public
   ``dynamics.forward_dynamics`` under ``backend("codegen")``, against ``pin.aba`` (goal <= 1.0x); the
   last two check the arrays and call C in a CPython extension (:mod:`dynamics.codegen.fastcall`);
3. the time to generate and compile (cold cache) panda, talos_reduced, the seeker sample and a random
   tree of 200 bodies (goal < 30 s), and the size of the source.

Measured 2026-11-27 06:24 UTC on the 2-core development machine, idle (load average 0.9; full run with the
200-body model):

=================  =========  ==========  ================  ==============  ===============  ==================
model              batch      one call    one call, new     compile_model   public           generate + compile
                   vs par(1)  (cffi)      buffers (cffi)    .forward_dyn.   forward_dyn.     wall (CPU)
=================  =========  ==========  ================  ==============  ===============  ==================
panda              0.38x      0.39x       0.95x             0.33x           0.54x            2.7 s (2.6 s)
talos_reduced      0.39x      0.36x       0.51x             0.34x           0.40x            9.4 s (9.3 s)
seeker             --         --          --                --              --               0.54 s (0.54 s)
200-body tree      --         --          --                --              --               15.0 s (14.9 s)
=================  =========  ==========  ================  ==============  ===============  ==================

(ratios: generated / Pinocchio, interleaved minimum; panda 1.46 vs 3.88 us per configuration in the
batch, pin.aba 6.50 us, public forward_dynamics 3.52 us; talos 5.17 vs 13.23 us, pin.aba 13.73 us, public
5.48 us; the 200-body random tree has nv 257 and 4.4 MB of source.)  Before the CPython extension
(2026-11-26) the public function was 1.50x pin.aba on panda: cffi's ``from_buffer`` of four arrays and the
dispatch cost about 5 us.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "dynamics"))

import mbcompose  # noqa: E402
from mbcompose import dynamics as dyn  # noqa: E402
from mbcompose.dynamics import dispatch  # noqa: E402
from mbcompose.dynamics.codegen import compile_model, fastcall  # noqa: E402

from dynamics import best_of, coordinate_maps, load_pair  # noqa: E402

ROBOTS = (("panda", "panda_description/urdf/panda.urdf", False),
          ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True))


def cold_compile(model, label):
    """(wall seconds to generate + compile with an empty cache, CPU seconds of it (this process and the
    compiler), source size in bytes, the CompiledModel).  On a shared machine the wall time counts the
    other processes' share of the cores; the CPU time is what an idle machine would take."""
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("MBCOMPOSE_CACHE")
        os.environ["MBCOMPOSE_CACHE"] = d
        try:
            t0, c0 = time.perf_counter(), cpu_seconds()
            cm = compile_model(model, prefix=label)
            dt, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        finally:
            os.environ.pop("MBCOMPOSE_CACHE") if old is None else os.environ.__setitem__("MBCOMPOSE_CACHE", old)
    return dt, cpu, len(cm.gen.source), cm


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the compiler), user + system."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def robot(label, rel, floating, repeats, B=1000):
    import pinocchio as pin

    model, pm = load_pair(rel, floating)
    pd = pm.createData()
    dt, cpu, size, cm = cold_compile(model, label)
    qi, vi = coordinate_maps(model, pm)
    rng = np.random.default_rng(0)
    q = np.ascontiguousarray(dyn.random_configuration(model, rng, batch=B))
    v, tau = rng.normal(size=(B, model.nv)), rng.normal(size=(B, model.nv))
    qp, vp, tp = q[:, qi], v[:, vi], tau[:, vi]
    qpT, vpT, tpT = (np.asfortranarray(x.T) for x in (qp, vp, tp))
    pool = pin.ModelPool(pm, 1)
    out = np.empty((B, model.nv))
    f = cm.function("aba_batch")
    P, Q, V, T, O = (cm.buf(x) for x in (cm.p, q, v, tau, out))
    f(P, B, Q, V, T, O)
    err = np.abs(out[:, vi] - pin.abaInParallel(1, pool, qpT, vpT, tpT).T).max()
    with dispatch.backend("numpy"):
        err_np = np.abs(out - dyn.forward_dynamics(model, q, v, tau)).max()
    t = best_of({"gen": lambda: f(P, B, Q, V, T, O),
                 "pin": lambda: pin.abaInParallel(1, pool, qpT, vpT, tpT)}, repeats, 1)
    one = cm.function("aba")
    o1 = np.empty(model.nv)
    q0, v0, t0 = (np.ascontiguousarray(x[0]) for x in (q, v, tau))
    P1, Q1, V1, T1, O1 = (cm.buf(x) for x in (cm.p, q0, v0, t0, o1))
    with dispatch.backend("codegen"):
        public = dyn.forward_dynamics(model, q0, v0, t0)
        assert np.array_equal(public, cm.forward_dynamics(q0, v0, t0)) and np.array_equal(public, out[0])
        s = best_of({"cffi": lambda: one(P1, Q1, V1, T1, O1),
                     "cffi+buffers": lambda: one(cm.buf(cm.p), cm.buf(q0), cm.buf(v0), cm.buf(t0), cm.buf(o1)),
                     "object": lambda: cm.forward_dynamics(q0, v0, t0),
                     "public": lambda: dyn.forward_dynamics(model, q0, v0, t0),
                     "pin": lambda: pin.aba(pm, pd, qp[0], vp[0], tp[0])}, repeats, 2000)
    print(f"{label}: nq {model.nq}, nv {model.nv}; generate + compile {dt:.1f} s ({cpu:.1f} s CPU), source {size / 1e3:.0f} kB; "
          f"max |difference| to pin {err:.1e}, to the numpy reference {err_np:.1e}")
    print(f"  batch of {B}: generated {t['gen'] / B * 1e6:.3f} us/config, pin.abaInParallel(1) "
          f"{t['pin'] / B * 1e6:.3f} us/config, ratio {t['gen'] / t['pin']:.2f} (goal <= 0.5)")
    print(f"  one call: cffi {s['cffi'] * 1e6:.2f} us (ratio {s['cffi'] / s['pin']:.2f}), cffi with new buffers "
          f"{s['cffi+buffers'] * 1e6:.2f} us ({s['cffi+buffers'] / s['pin']:.2f}); pin.aba {s['pin'] * 1e6:.2f} us")
    print(f"  one call from Python (goal <= 1.0): compile_model(model).forward_dynamics {s['object'] * 1e6:.2f} us "
          f"(ratio {s['object'] / s['pin']:.2f}), public dynamics.forward_dynamics under backend('codegen') "
          f"{s['public'] * 1e6:.2f} us (ratio {s['public'] / s['pin']:.2f})")


def compile_times(skip_200: bool):
    from trees import random_model

    seeker = mbcompose.compose(str(HERE.parent / "samples" / "seeker" / "seeker.yaml")).model
    dt, cpu, size, _ = cold_compile(seeker, "seeker")
    print(f"seeker: generate + compile {dt:.2f} s ({cpu:.2f} s CPU), source {size / 1e3:.0f} kB")
    if not skip_200:
        model, _ = random_model(7, n=200, types=("revolute", "prismatic", "fixed", "spherical"))
        dt, cpu, size, _ = cold_compile(model, "tree200")
        print(f"random tree of 200 bodies (nv {model.nv}): generate + compile {dt:.1f} s ({cpu:.1f} s CPU), "
              f"source {size / 1e6:.1f} MB (goal < 30 s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-200", action="store_true")
    args = ap.parse_args()
    repeats = 5 if args.quick else 20
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if fastcall.extension() is None:        # generic, built once per Python and numpy: not a model's compile time
        print("the fast-call extension could not be built here: one call goes through cffi")
    for label, rel, floating in ROBOTS:
        robot(label, rel, floating, repeats)
    compile_times(args.skip_200)


if __name__ == "__main__":
    main()
