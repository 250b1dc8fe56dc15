"""Benchmark: our fixed-step simulator against MuJoCo stepping our MJCF export (issue 12 point 5).

Run ``python benchmarks/simulate.py`` (``--quick``: fewer repeats).

For the seeker (samples/seeker, a 2-dof tree) and the four-bar (samples/fourbar, one
closed loop), both simulated for 2 s from a moving state:

* ``ours``: :func:`mbcompose.dynamics.simulation.simulate` with ``method="rk4"`` at the step
  ``dt``, and the compiled loop alone (``kernel``) -- for the seeker
  ``simulate_api.simulate_fixed_step`` (the whole loop in machine code), for the four-bar
  the constraint-embedded model with the loops closed by Newton's method at every stage and
  step, ``simulate_api.closed_chain_stepper`` (the whole loop in machine code as well);
* ``mujoco``: our MJCF export (``parsers.exporters.mjcf``, no geometry) loaded by MuJoCo,
  ``opt.integrator = RK4``, the same ``dt``, contacts and joint limits disabled, stepped
  from Python (``mj_step`` in a loop) and, for the seeker, by ``mujoco.rollout`` (the loop in
  C++);
* the reference: our adaptive integrator (DOP853, rtol = atol = 1e-12).

It prints the final-state error of each against the reference (max over coordinates of
|q| and |v|), the time (the thread's CPU time, interleaved runs, minimum of repeats) and the ratios
ours / MuJoCo, and the largest loop closure error of the four-bar over the run (ours:
Newton-closed; MuJoCo's equality constraints are soft).  A model check first runs MuJoCo
at dt = 1e-5 against the reference, so that a difference in the final state is the
integrators' and not the models'.

Measured 2026-11-23 on the shared 2-core development machine (other agents running, load
average 3; numbers in the README's benchmark section)::

    seeker: 2 s, RK4, dt = 0.001 s (2000 steps); MuJoCo at dt 1e-5 vs the reference: 9.7e-13
    run                       final error    time ms   us/step
    ours (kernel)                4.54e-11     10.139     5.070
    ours (simulate)              4.54e-11     10.989     5.495
    mujoco (mj_step loop)        4.54e-11     12.749     6.375
    mujoco (rollout)             4.54e-11     12.504     6.252

    fourbar: 2 s, RK4, dt = 0.001 s (2000 steps)
    run                       final error  max closure    time ms   us/step
    ours (kernel)                4.79e-06     1.77e-16      71.84     35.92
    ours (simulate)              4.79e-06     1.73e-16      76.38     38.19
    mujoco (mj_step loop)        1.26e+01     2.46e-04      24.87     12.44
    ratio ours (kernel) / mujoco (mj_step loop): 2.89
    ratio ours (simulate) / mujoco (mj_step loop): 3.07

The four-bar took 4.4 ms a step (8.7 s, 363x MuJoCo) with the closure Newton and the velocity
completion in numpy; compiled, a step is about 20 closure evaluations (Newton's iterations and
polishing at four stages and after the step, 0.9 us each), four embedded forward dynamics (3 us
each) and four velocity completions.  MuJoCo's soft loop constraint drifts (2.5e-4) and
dissipates, so its final state is not comparable.

Measured 2026-11-27 (``closedfast``), full runs of this branch and of main at its start commit side by side in
the same minutes (load average 1.7-3.5), four-bar, ratio to the mj_step loop of the same run::

    run        ours (kernel)  ours (simulate)  simulate - kernel   final error  max closure
    after 1         0.83           0.93             3.9 ms          4.79e-06     1.26e-16
    after 2         0.96           1.02             2.3 ms          4.79e-06     1.26e-16
    main  1         1.03           1.42            12.5 ms          4.79e-06     1.29e-16
    main  2         0.97           1.36            14.0 ms          4.79e-06     1.29e-16

The ~13 ms that ``simulate`` spent beyond the kernel were per call, not per step (2 samples): the result's
re-completion of each sample by the numpy ``complete_state`` (QR partition quality, Newton, 1.5 ms a sample), its
closure column from the numpy closure terms (0.3 ms a sample), the chord columns from the numpy kinematics
(0.6 ms a sample), the energies sample by sample (0.35 ms a sample), the stepper's ``create_data`` (1.5 ms: the
layout tables described and viewed field by field with IntEnum look-ups), the initial consistent state (numpy,
1.5 ms) and the decline threshold from the numpy closure terms (0.35 ms).  Now the samples are completed by the
compiled kernels on the default split wherever it has not degraded (the numpy reference otherwise), the closure
and chord columns come from compiled closure rows and world kinematics, the kinetic energy is ``v^T M v / 2`` with
the compiled mass matrix, and a ``ClosedData`` costs 0.16 ms.  The kernel itself is ~4 % faster (closure
evaluations at rest no longer compute zero world rates).  The ratio ours (simulate) / mj_step is 0.93-1.02 on
this loaded machine: the goal (<= 1.0 reliably) needs the kernel faster too (the closure Newton, about 20
evaluations a step, is most of it).

Measured 2026-11-27 (``rk4fast``), full runs of this branch and of main at its start commit (df6ac68) alternated
in the same minutes (load average 4-5: the whole test suite running beside), four-bar, ratio to the mj_step loop of
the same run.  A step counted 14.6 closure evaluations (numpy emulation of ``closed_step``, 300 steps; per stage
1.6, 3.6, 3.7, 2.9 and 2.9 closing y_next): a closed start cost 1-2 (a polishing step of ~1e-16, then a
confirming evaluation), a stage 3-4 (Newton step from 4e-8, polishing step from 2e-15, polishing step from 3e-17,
confirming evaluation).  Now a polishing step that moves no coordinate by more than ``ROUNDING_STEP`` (4 eps)
is not taken (numpy reference and kernels alike): 10.3 evaluations a step; and the first stage does not close y
again when the previous closing ended on that rule (a new call would stop at its first evaluation with y
unchanged; the trajectory is bitwise the same): 9.3.  Final error unchanged; the largest closure of the
2000 states 2.2e-16 (1.5e-16 before: the last polishing step's ulp)::

    run                          ours (kernel)  ours (simulate)  final error  max closure (kernel)
    rounding rule     1              0.83            0.91          4.79e-06     2.22e-16
    rounding rule     2              0.91            0.97          4.79e-06     2.22e-16
    main              1              0.93            1.02          4.79e-06     1.49e-16
    main              2              0.98            1.02          4.79e-06     1.49e-16
    + first stage     3              0.73            0.84          4.79e-06     2.22e-16
    main              3              1.00            1.03          4.79e-06     1.49e-16
    main              4              0.94            1.04          4.79e-06     1.49e-16
    + first stage     4              0.64            0.79          4.79e-06     2.22e-16

(mj_step took 17-20 us a step in these runs, 12.4 on a quieter machine: the ratios are of one run each.)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

import mujoco  # noqa: E402

import mbcompose  # noqa: E402
from mbcompose.dynamics.simulation import simulate  # noqa: E402
from mbcompose.dynamics import embedding as E  # noqa: E402
from mbcompose.dynamics.compiled.simulate_api import closed_chain_stepper, simulate_fixed_step  # noqa: E402
from mbcompose.parsers.exporters.mjcf import mjcf_element  # noqa: E402

DURATION = 2.0


def mujoco_model(composition, dt: float):
    """MuJoCo's model of our MJCF export: RK4 at dt, no contacts, no joint limits."""
    xml = ET.tostring(mjcf_element(composition.lumped, geometry=False), encoding="unicode")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.xml"
        path.write_text(xml)
        mj = mujoco.MjModel.from_xml_path(str(path))
    mj.opt.timestep = dt
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    return mj


def joint_addresses(mj, tree):
    """MuJoCo's qpos (= qvel) address of each of our coordinates (hinges only here, by joint name)."""
    names = [n for n in tree.joint_names if tree.q_slice(n).stop > tree.q_slice(n).start]
    if any(tree.q_slice(n).stop - tree.q_slice(n).start != 1 for n in names):
        raise ValueError("this benchmark maps one-coordinate joints only")
    order = np.argsort([tree.q_slice(n).start for n in names])
    qadr = np.array([mj.joint(names[i]).qposadr[0] for i in order])
    vadr = np.array([mj.joint(names[i]).dofadr[0] for i in order])
    return qadr, vadr


def mujoco_run(mj, q0, v0, qadr, vadr, steps: int, closure=None):
    """Step MuJoCo from Python; final (q, v) in our coordinate order, largest closure error."""
    data = mujoco.MjData(mj)
    data.qpos[qadr], data.qvel[vadr] = q0, v0
    mujoco.mj_forward(mj, data)
    worst = 0.0
    for _ in range(steps):
        mujoco.mj_step(mj, data)
        if closure is not None:
            worst = max(worst, closure(data.qpos[qadr]))
    return data.qpos[qadr].copy(), data.qvel[vadr].copy(), worst


def mujoco_rollout(mj, q0, v0, qadr, vadr, steps: int):
    """The same run by ``mujoco.rollout`` (the loop in C++); final (q, v)."""
    from mujoco import rollout

    data = mujoco.MjData(mj)
    data.qpos[qadr], data.qvel[vadr] = q0, v0
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty(mujoco.mj_stateSize(mj, spec))
    mujoco.mj_getState(mj, data, state0, spec)
    states, _ = rollout.rollout(mj, data, state0[None], nstep=steps)
    last = states[0, -1]
    mujoco.mj_setState(mj, data, last, spec)
    return data.qpos[qadr].copy(), data.qvel[vadr].copy()


def best_time(runs: dict, repeats: int) -> dict:
    """Interleaved timing: every run once per round, minimum over rounds of the thread's CPU
    time (s; the machine is shared, and every run here stays in the calling thread)."""
    best = {name: np.inf for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            t = time.thread_time()
            run()
            best[name] = min(best[name], time.thread_time() - t)
    return best


def error(q, v, ref_q, ref_v) -> float:
    return float(max(np.abs(q - ref_q).max(), np.abs(v - ref_v).max()))


def seeker(dt: float, repeats: int) -> None:
    c = mbcompose.compose(ROOT / "samples/seeker/seeker.yaml")
    m = c.model
    q0, v0 = np.zeros(m.nq), np.zeros(m.nv)
    q0[m.q_slice("pitch_a")], v0[m.v_slice("yaw_a")], v0[m.v_slice("pitch_a")] = 0.4, 3.0, -1.0
    ref = simulate(m, q0, v0, DURATION, 2, rtol=1e-12, atol=1e-12)
    ref_q, ref_v = ref.q[-1], ref.v[-1]
    steps = round(DURATION / dt)
    mj = mujoco_model(c, dt)
    qadr, vadr = joint_addresses(mj, m)
    fine = mujoco_model(c, 1e-5)
    check = error(*mujoco_run(fine, q0, v0, qadr, vadr, round(DURATION / 1e-5))[:2], ref_q, ref_v)
    ours = simulate_fixed_step(m, q0, v0, dt, steps, "rk4", stride=steps)
    public = simulate(m, q0, v0, DURATION, 2, method="rk4", dt=dt)
    theirs = mujoco_run(mj, q0, v0, qadr, vadr, steps)
    rolled = mujoco_rollout(mj, q0, v0, qadr, vadr, steps)
    times = best_time({
        "ours (kernel)": lambda: simulate_fixed_step(m, q0, v0, dt, steps, "rk4", stride=steps),
        "ours (simulate)": lambda: simulate(m, q0, v0, DURATION, 2, method="rk4", dt=dt),
        "mujoco (mj_step loop)": lambda: mujoco_run(mj, q0, v0, qadr, vadr, steps),
        "mujoco (rollout)": lambda: mujoco_rollout(mj, q0, v0, qadr, vadr, steps),
    }, repeats)
    errors = {"ours (kernel)": error(ours.Q[-1], ours.V[-1], ref_q, ref_v),
              "ours (simulate)": error(public.q[-1], public.v[-1], ref_q, ref_v),
              "mujoco (mj_step loop)": error(*theirs[:2], ref_q, ref_v),
              "mujoco (rollout)": error(*rolled, ref_q, ref_v)}
    print(f"\nseeker: {DURATION:g} s, RK4, dt = {dt:g} s ({steps} steps); MuJoCo at dt 1e-5 vs the reference: "
          f"{check:.1e}")
    print(f"{'run':24s} {'final error':>12s} {'time ms':>10s} {'us/step':>9s}")
    for name in times:
        print(f"{name:24s} {errors[name]:12.2e} {1e3 * times[name]:10.3f} {1e6 * times[name] / steps:9.3f}")
    for ours_name in ("ours (kernel)", "ours (simulate)"):
        for theirs_name in ("mujoco (mj_step loop)", "mujoco (rollout)"):
            print(f"ratio {ours_name} / {theirs_name}: {times[ours_name] / times[theirs_name]:.2f}")


def fourbar(dt: float, repeats: int) -> None:
    from mbcompose.dynamics.closed.closure import closure_error

    c = mbcompose.compose(ROOT / "samples/fourbar/fourbar.yaml")
    em = c.model
    tree = em.tree_model
    v0 = np.zeros(em.nv)
    v0[em.independent_v] = 2.0
    q0, v0 = mbcompose.dynamics.consistent_state(em, em.neutral(), v0)
    ref = simulate(em, q0, v0, DURATION, 2, rtol=1e-12, atol=1e-12)
    steps = round(DURATION / dt)
    mj = mujoco_model(c, dt)
    qadr, vadr = joint_addresses(mj, tree)

    def closure(q):
        return float(np.max(np.abs(closure_error(tree, em.chords, q))))

    run = closed_chain_stepper(em, dt, "rk4")

    def kernel(stride=steps):
        """The compiled loop alone: every stride-th state (steps // stride + 1, nq + n_independent)."""
        y = np.concatenate([q0, v0[em.independent_v]])
        Y = np.empty((steps // stride + 1, y.size))
        Y[0] = y
        if run(y, 0, steps, stride, Y) != steps:
            raise RuntimeError("the compiled closed-chain loop declined a step")
        return Y

    every_step = kernel(1)
    y_last = every_step[-1]
    ours = simulate(em, q0, v0, DURATION, 201, method="rk4", dt=dt)
    theirs = mujoco_run(mj, q0, v0, qadr, vadr, steps, closure)
    times = best_time({"ours (kernel)": kernel,
                       "ours (simulate)": lambda: simulate(em, q0, v0, DURATION, 2, method="rk4", dt=dt),
                       "mujoco (mj_step loop)": lambda: mujoco_run(mj, q0, v0, qadr, vadr, steps)}, repeats)
    v_last = E.complete_velocity(em, y_last[:em.nq], y_last[em.nq:])
    worst = max(map(closure, every_step[:, :em.nq]))
    rows = {"ours (kernel)": (error(y_last[:em.nq], v_last, ref.q[-1], ref.v[-1]), worst),
            "ours (simulate)": (error(ours.q[-1], ours.v[-1], ref.q[-1], ref.v[-1]), ours.closure.max()),
            "mujoco (mj_step loop)": (error(theirs[0], theirs[1], ref.q[-1], ref.v[-1]), theirs[2])}
    print(f"\nfourbar: {DURATION:g} s, RK4, dt = {dt:g} s ({steps} steps)")
    print(f"{'run':24s} {'final error':>12s} {'max closure':>12s} {'time ms':>10s} {'us/step':>9s}")
    for name, (err, clo) in rows.items():
        print(f"{name:24s} {err:12.2e} {clo:12.2e} {1e3 * times[name]:10.2f} {1e6 * times[name] / steps:9.2f}")
    for name in ("ours (kernel)", "ours (simulate)"):
        print(f"ratio {name} / mujoco (mj_step loop): {times[name] / times['mujoco (mj_step loop)']:.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--dt", type=float, default=1e-3, help="step, s (default 1e-3)")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 15
    seeker(args.dt, repeats)
    fourbar(args.dt, repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
