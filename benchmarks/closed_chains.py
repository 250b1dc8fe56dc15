"""Benchmark: closed-chain forward dynamics by constraint embedding.

Run ``python benchmarks/closed_chains.py`` (``--quick`` for a short run).

For each mechanism, at the same closed states, the time per call (one
configuration per call, median over repeats) of

* ``tree``: the articulated-body algorithm on the spanning tree alone
  (``dynamics.forward_dynamics``, loops open) -- the baseline;
* ``embedded``: ``dynamics.embedding.forward_dynamics`` (closure terms, aggregated
  and embedded SKO weights, articulated-body algorithm on the embedded tree,
  expansion to all joints);
* ``lagrange``: a dense Lagrange-multiplier solve on the same model: tree mass
  matrix (composite inertia) and bias forces (Newton-Euler), closure Jacobian and
  ``Gdot v`` (``dynamics.closure``), and ``[M G^T; G 0]`` solved by LU,

and the ratios embedded / tree (published constraint-embedding implementations:
1.6-2.1x) and embedded / lagrange.  The accelerations of the two closed-chain
methods are compared before timing.

Mechanisms: the closed-chain samples, and a synthetic leg of K stacked four-bar
knee modules (1 + 3K bodies, K loops) for the scaling in the number of loops.

Measured 2026-11-21 on the shared 2-core development machine (full run, times in
microseconds per call, one configuration per call; other jobs were running: an
earlier run of the same code gave ratios 1.5-2.5 and the Lagrange times vary most)::

    mechanism          bodies loops   nv  dof   tree us  embedded us  lagrange us  emb/tree  emb/lagr  max rel diff
    fourbar                 3     1    3    1     258.5        697.8       1152.8      2.70      0.61       5.5e-15
    slider_crank            3     1    3    1     243.4        672.9       1225.0      2.77      0.55       5.0e-15
    fivebar                 4     1    4    2     303.9        750.8       1276.8      2.47      0.59       2.7e-15
    leg_fourbar_knee        5     1    5    3     313.9        753.6       1243.2      2.40      0.61       2.3e-15
    rssr                    3     1    5    2     492.0        925.2       1749.9      1.88      0.53       8.5e-14
    seeker_bearings         9     2    3    2     475.4        912.4       1559.6      1.92      0.59       3.5e-15
    knees K=1               4     1    4    2     416.8        741.8       1245.0      1.78      0.60       1.7e-15
    knees K=2               7     2    7    3     581.1       1033.0       1693.0      1.78      0.61       4.6e-15
    knees K=4              13     4   13    5     837.3       1632.8       2725.5      1.95      0.60       4.0e-14
    knees K=8              25     8   25    9    1146.0       2099.7       3832.3      1.83      0.55       1.4e-13
    knees K=16             49    16   49   17    3424.8       5770.3      13533.5      1.68      0.43       1.8e-12
    knees K=32             97    32   97   33    4880.6       8490.9      96031.3      1.74      0.09       2.2e-11

The embedded articulated-body algorithm costs 1.7-2.8 times the tree's own (the
published constraint-embedding figure is 1.6-2.1x; here the fixed Python cost of the
closure terms weighs most on the smallest mechanisms) and 0.1-0.6 times the dense
Lagrange solve, whose O(N^3) share grows with the number of loops.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sla

ROOT = Path(__file__).resolve().parents[1]

from mbcompose import dynamics as dyn  # noqa: E402
from mbcompose.composer.closed import embed_tree_model  # noqa: E402
from mbcompose.dynamics import embedding as E  # noqa: E402
from mbcompose.dynamics.closure import closure_bias, closure_jacobian  # noqa: E402

SAMPLES = ("fourbar", "slider_crank", "fivebar", "leg_fourbar_knee", "rssr", "seeker_bearings")


def sample_model(name):
    from mbcompose import parsers
    from mbcompose.composer.tree import RigidBody, build_tree_model
    from mbcompose.parsers.massprops import transform_mass_properties

    asm = parsers.read_assembly(ROOT / "samples" / name / f"{name}.yaml")
    bodies = [RigidBody(b.name, transform_mass_properties(b.mass, b.pose)) for b in asm.bodies]
    return embed_tree_model(build_tree_model(bodies, asm.joints, asm.gravity))


def stacked_knees(K: int):
    """A planar leg of K four-bar knee modules (the leg_fourbar_knee sample's knee, repeated)."""
    from mbcompose.composer.tree import RigidBody, build_tree_model
    from mbcompose.parsers.assembly import GROUND, Joint, MassProperties

    def bar(name, a, b, mass):
        c = 0.5 * (np.asarray(a) + np.asarray(b))
        L = np.linalg.norm(np.asarray(b) - np.asarray(a))
        I = mass * L ** 2 / 12.0
        return RigidBody(name, MassProperties(mass, c, np.diag([I, I, I * 0.05 + 1e-6])))

    y = np.array([0.0, 1.0, 0.0])
    bodies, joints = [], []
    O = np.zeros(3)
    bodies.append(bar("seg0", O, O + [0, 0, -0.46], 2.0))
    joints.append(Joint("hip", "revolute", GROUND, "seg0", origin=O, axis=y, actuated=True))
    for i in range(K):
        P1, P2 = O + [0.025, 0, -0.40], O + [-0.025, 0, -0.42]
        Q1, Q2 = O + [-0.02, 0, -0.46], O + [0.02, 0, -0.45]
        nxt = f"seg{i + 1}"
        On = O + [0, 0, -0.46]
        bodies += [bar(f"front{i}", P1, Q1, 0.1), bar(f"rear{i}", P2, Q2, 0.08), bar(nxt, On, On + [0, 0, -0.46], 1.5)]
        joints += [Joint(f"front_upper{i}", "revolute", f"seg{i}", f"front{i}", origin=P1, axis=y, actuated=True),
                   Joint(f"rear_upper{i}", "revolute", f"seg{i}", f"rear{i}", origin=P2, axis=y),
                   Joint(f"front_lower{i}", "revolute", f"front{i}", nxt, origin=Q1, axis=y),
                   Joint(f"rear_lower{i}", "revolute", f"rear{i}", nxt, origin=Q2, axis=y)]
        O = On
    return embed_tree_model(build_tree_model(bodies, joints, (0.0, 0.0, -9.81)))


def kept_rows(em):
    """Indices of the independent constraint rows (those the embedding keeps) in the stacked
    closure rows of ``em.chords``, so that the KKT matrix is regular."""
    return np.concatenate([lp.all_rows[lp.rows] for lp in em.loops] + [np.zeros(0, dtype=int)]).astype(int)


def lagrange_forward_dynamics(em, q, v, tau, keep):
    """Dense reference: tree ``M`` (composite inertia), ``C`` (Newton-Euler), ``G`` and ``Gdot v``
    (``dynamics.closure``, rows ``keep``), ``[M G^T; G 0] [a; lambda] = [tau - C; -Gdot v]`` by LU."""
    m = em.tree_model
    M = dyn.mass_matrix(m, q)
    C = dyn.bias_forces(m, q, v)
    G = closure_jacobian(m, em.chords, q)[keep]
    gam = closure_bias(m, em.chords, q, v)[keep]
    nc = G.shape[0]
    K = np.block([[M, G.T], [G, np.zeros((nc, nc))]])
    sol = sla.solve(K, np.concatenate([tau - C, -gam]))
    return sol[:m.nv]


def median_time(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def bench(name, em, n_states, reps, rng):
    from mbcompose.dynamics.kinematics import integrate

    states = []
    while len(states) < n_states:
        dv = np.zeros(em.nv)
        dv[em.independent_v] = rng.uniform(-0.3, 0.3, size=em.n_independent)
        try:
            q = E.complete_configuration(em, integrate(em.tree_model, em.neutral(), dv))
        except E.ClosureError:
            continue
        v = E.complete_velocity(em, q, rng.normal(size=em.n_independent))
        tau = rng.normal(size=em.nv) * float(np.mean(np.diag(dyn.mass_matrix(em.tree_model, q))))
        states.append((q, v, tau))
    keep = kept_rows(em)
    err = 0.0
    for q, v, tau in states:
        a = E.forward_dynamics(em, q, v, tau)
        a_ref = lagrange_forward_dynamics(em, q, v, tau, keep)
        err = max(err, np.max(np.abs(a - a_ref)) / max(1.0, np.max(np.abs(a_ref))))
    t = {"tree": [], "embedded": [], "lagrange": []}
    for q, v, tau in states:
        t["tree"].append(median_time(lambda: dyn.forward_dynamics(em.tree_model, q, v, tau), reps))
        t["embedded"].append(median_time(lambda: E.forward_dynamics(em, q, v, tau), reps))
        t["lagrange"].append(median_time(lambda: lagrange_forward_dynamics(em, q, v, tau, keep), reps))
    t = {k: float(np.median(x)) for k, x in t.items()}
    return dict(name=name, bodies=em.tree_model.n_bodies, loops=len(em.loops), nv=em.nv,
                dof=em.n_independent, err=err, **t)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer states and repeats")
    args = ap.parse_args(argv)
    n_states, reps = (3, 20) if args.quick else (10, 50)
    rng = np.random.default_rng(0)
    cases = [(s, sample_model(s)) for s in SAMPLES if (ROOT / "samples" / s / f"{s}.yaml").exists()]
    cases += [(f"knees K={K}", stacked_knees(K)) for K in ((1, 4, 16) if args.quick else (1, 2, 4, 8, 16, 32))]
    print(f"{'mechanism':18s} {'bodies':>6s} {'loops':>5s} {'nv':>4s} {'dof':>4s} {'tree us':>9s} "
          f"{'embedded us':>12s} {'lagrange us':>12s} {'emb/tree':>9s} {'emb/lagr':>9s} {'max rel diff':>13s}")
    rows = []
    for name, em in cases:
        r = bench(name, em, n_states, reps, rng)
        rows.append(r)
        print(f"{name:18s} {r['bodies']:6d} {r['loops']:5d} {r['nv']:4d} {r['dof']:4d} {1e6 * r['tree']:9.1f} "
              f"{1e6 * r['embedded']:12.1f} {1e6 * r['lagrange']:12.1f} {r['embedded'] / r['tree']:9.2f} "
              f"{r['embedded'] / r['lagrange']:9.2f} {r['err']:13.1e}")
    return rows


if __name__ == "__main__":
    main()
