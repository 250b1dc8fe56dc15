"""O(N) cost of the recursions (seed 001 Lemmas 1-2, Algorithms 3.1 and 6.1).

Reference: counting the block products the numpy recursions perform (deterministic;
the compiled kernels of :mod:`dynamics.compiled` run the same loops), and, marked
slow, the benchmark's fitted log-log slope of wall time against N.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics import aba, riccati, rnea, sko


def chain(N):
    return dyn.build_model([dyn.BodySpec(f"b{k}", k - 1, "revolute", f"j{k}", np.eye(3), np.array([0, 0, 0.1]),
                                         1.0, np.array([0, 0, 0.05]), np.eye(3) * 0.01, axis=(0, 1, 0))
                            for k in range(N)])


def count_products(monkeypatch, fn):
    calls = {"n": 0}
    for mod in (rnea, aba, sko):
        for name in ("mul", "mulT"):
            if hasattr(mod, name):
                orig = getattr(sko, name)

                def wrapped(*a, _orig=orig):
                    calls["n"] += 1
                    return _orig(*a)
                monkeypatch.setattr(mod, name, wrapped)
    fn()
    return calls["n"]


@pytest.mark.parametrize("which", ["rnea", "aba"])
def test_block_product_count_is_linear_in_the_number_of_bodies(monkeypatch, which):
    counts = []
    for N in (10, 20, 40, 80):
        m = chain(N)
        q = np.zeros(m.nv)
        f = (lambda: rnea.inverse_dynamics(m, q, q, q)) if which == "rnea" else (lambda: aba.forward_dynamics(m, q, q, q))
        counts.append(count_products(monkeypatch, f))
    d = np.diff(counts)
    assert counts[0] > 0 and np.allclose(d / d[0], [1, 2, 4])   # exactly affine in N


@pytest.mark.slow
def test_benchmark_fitted_exponent_of_rnea_and_aba_is_at_most_1_15():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "dynamics.py"
    spec = importlib.util.spec_from_file_location("bench_dynamics", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    slopes = mod.scaling([10, 20, 40, 80, 160, 320], 5, 20)
    assert slopes["RNEA"] <= 1.15 and slopes["ABA"] <= 1.15
