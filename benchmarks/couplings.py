"""Benchmark: a robot with linear joint couplings against the same robot without them (issue 25, must-show 4).

Run ``python benchmarks/couplings.py`` (``--quick``: fewer repeats; ``--duration T``, default 0.5 s).

example-robot-data's panda (``panda_description/urdf/panda.urdf``: the second finger a URDF ``mimic`` of
the first) and the same text with its ``<mimic>`` elements removed (the fingers independent), both
simulated by :func:`mbcompose.dynamics.simulation.simulate` from the reference configuration at rest
with the file's joint limits as stops (:func:`mbcompose.graph.model.joint_properties`), adaptive
DOP853 at the default tolerances (rtol = atol = 1e-10), 201 samples:

* ``plain``: the tree (ABA, compiled);
* ``mimic``: the constraint-embedded model with its linear coupling in closed form
  (:mod:`mbcompose.dynamics.closed.linear`: ``q_d = q0_d + X (q_i - q0_i)``, ``v = X v_i``, forward
  dynamics ``X (X^T M X)^-1 X^T (tau - h)`` from the compiled tree's M and h; stops through
  ``X M_r^-1 X^T``).

It prints, for each, the time (the thread's CPU time, interleaved runs, minimum of repeats), the number
of joint-limit contacts, the largest excursion past a joint limit and (mimic) the largest coupling
residual, then the ratio mimic / plain (the issue asks for at most 1.5), with the stops and without any
limits (the same dynamics with no events: the per-evaluation cost of the coupling).  The two runs meet
different numbers of stop events (the mimic finger holds the second one), which the first ratio
includes.

Measured 2026-11-27 on the shared 2-core development machine (other helpers running, load average
about 10)::

    model     limits   time ms  contacts  past limit   coupling  status
    plain      stops     209.8        13     4.9e-16          -  DOP853, rtol 1e-10, atol 1e-10, 13 joint limit contacts
    mimic      stops     184.5         4     3.4e-15    0.0e+00  DOP853, ..., 2 segments, 4 joint limit contacts
    plain       none     172.0         0           -          -  DOP853, rtol 1e-10, atol 1e-10
    mimic       none     198.6         0           -    0.0e+00  DOP853, ..., 1 partition segments
    ratio mimic / plain, joint limits as stops: 0.88
    ratio mimic / plain, no limits: 1.15

Before :mod:`mbcompose.dynamics.closed.linear` (Newton closure, velocity completion, split checks
and stop inertia through the numpy embedding) the mimic run with stops took 1.28 s against 0.19 s
(6.8x) in the same session.
"""

from __future__ import annotations

import argparse
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import mbcompose
import numpy as np
from mbcompose.dynamics.simulation import simulate
from mbcompose.graph.model import joint_properties

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulate import best_time  # interleaved, minimum of the thread's CPU time

ERD = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
PANDA = ERD / "panda_description" / "urdf" / "panda.urdf"
SAMPLES = 201


def case(path):
    """(model, joint properties, q0, v0) of a composed file: the reference configuration at rest."""
    c = mbcompose.compose(str(path), package_dirs=[str(ERD.parent.parent)])
    tree = c.model.tree_model
    return c.model, joint_properties(c.tree, c.model), tree.neutral(), np.zeros(tree.nv)


def run(setup, duration: float, limits: bool = True):
    """The simulation of one case, with the file's joint limits as stops or without any."""
    model, props, q0, v0 = setup
    return simulate(model, q0, v0, duration, samples=SAMPLES, joints=props if limits else None)


def excursion(setup, result) -> float:
    """Largest distance (rad or m) of any sampled coordinate past its joint limit."""
    model, props = setup[0], setup[1]
    tree = model.tree_model
    worst = 0.0
    for name in tree.joint_names:
        qs, vs = tree.q_slice(name), tree.v_slice(name)
        if qs.stop - qs.start != vs.stop - vs.start:
            continue
        q = result.q[:, qs]
        worst = max(worst, float(np.max(props.lower[vs] - q, initial=0.0)),
                    float(np.max(q - props.upper[vs], initial=0.0)))
    return worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--duration", type=float, default=0.5, help="simulated time, s (default 0.5)")
    args = parser.parse_args(argv)
    if not PANDA.is_file():
        print(f"example-robot-data's panda is not installed ({PANDA})")
        return 1
    repeats = 3 if args.quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        plain_path = Path(tmp) / "panda_without_mimic.urdf"
        text = PANDA.read_text()
        plain_path.write_text(re.sub(r"<mimic\b[^>]*/>", "", text))
        setups = {"plain": case(plain_path), "mimic": case(PANDA)}
    assert setups["plain"][0].kind == "tree" and setups["mimic"][0].kind == "embedded"
    runs = {(name, limits): (lambda s=s, limits=limits: run(s, args.duration, limits))
            for limits in (True, False) for name, s in setups.items()}
    results = {key: fn() for key, fn in runs.items()}
    times = best_time(runs, repeats)
    print(f"panda, {args.duration:g} s adaptive (DOP853, rtol = atol = 1e-10) from the reference at rest, "
          f"{SAMPLES} samples; minimum of {repeats} interleaved runs")
    print(f"{'model':8s} {'limits':>7s} {'time ms':>9s} {'contacts':>9s} {'past limit':>11s} {'coupling':>10s}  status")
    for (name, limits), r in results.items():
        coupling = f"{np.max(r.closure):10.1e}" if r.closure is not None else f"{'-':>10s}"
        past = f"{excursion(setups[name], r):11.1e}" if limits else f"{'-':>11s}"
        print(f"{name:8s} {'stops' if limits else 'none':>7s} {1e3 * times[name, limits]:9.1f} "
              f"{r.limit_contacts:9d} {past} {coupling}  {r.status}")
    for limits in (True, False):
        print(f"ratio mimic / plain, {'joint limits as stops' if limits else 'no limits'}: "
              f"{times['mimic', limits] / times['plain', limits]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
