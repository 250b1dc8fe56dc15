"""skew_batch and spatial_inertia (seed 002 Eq. 14) against their definitions, with broadcasting."""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose.dynamics.spatial import skew_batch, spatial_inertia


@pytest.mark.parametrize("lead", [(), (1,), (4,), (2, 3)])
def test_skew_batch_is_the_cross_product_matrix(lead):
    rng = np.random.default_rng(len(lead))
    x, y = rng.normal(size=lead + (3,)), rng.normal(size=lead + (3,))
    S = skew_batch(x)
    assert S.shape == lead + (3, 3)
    np.testing.assert_allclose((S @ y[..., None])[..., 0], np.cross(x, y), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(S, -np.swapaxes(S, -1, -2))
    np.testing.assert_array_equal(skew_batch([1, 2, 3]), [[0, -3, 2], [3, 0, -1], [-2, 1, 0]])


def _textbook(m: float, p, Ic) -> np.ndarray:
    """``[[Ic + m (|p|^2 1 - p p^T), m ~p], [-m ~p, m 1]]`` for one body, ``~p`` written out."""
    x, y, z = p
    P = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.block([[Ic + m * (np.dot(p, p) * np.eye(3) - np.outer(p, p)), m * P], [-m * P, m * np.eye(3)]])


@pytest.mark.parametrize("shapes", [((), (3,), (3, 3)), ((4,), (4, 3), (4, 3, 3)), ((), (4, 3), (3, 3)),
                                    ((4,), (3,), (4, 3, 3)), ((2, 3), (2, 3, 3), (3, 3))])
def test_spatial_inertia_is_the_textbook_block_matrix(shapes):
    rng = np.random.default_rng(7)
    ms, ps, Js = shapes
    m = rng.uniform(0.5, 2.0, size=ms)
    p = rng.normal(size=ps)
    A = rng.normal(size=Js)
    Ic = A @ np.swapaxes(A, -1, -2) + np.eye(3)
    M = spatial_inertia(m, p, Ic)
    lead = np.broadcast_shapes(np.shape(m), p.shape[:-1], Ic.shape[:-2])
    assert M.shape == lead + (6, 6)
    mb, pb, Jb = (np.broadcast_to(m, lead), np.broadcast_to(p, lead + (3,)), np.broadcast_to(Ic, lead + (3, 3)))
    for i in np.ndindex(*lead):
        np.testing.assert_allclose(M[i], _textbook(float(mb[i]), pb[i], Jb[i]), rtol=1e-13, atol=1e-13)
