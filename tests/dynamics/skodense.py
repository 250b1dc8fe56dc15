"""Dense matrices of SKO operators, built block by block from SKO weights (test reference)."""

from __future__ import annotations

import numpy as np

from mbcompose.dynamics.riccati import articulated_body
from mbcompose.dynamics.sko import SKOTree, SKOWeights


def random_sko(rng, n, m_max=5, p_root=0.1, batch=1, chain=False):
    """Generic SKO model with random, non-square weights (seed 001 section 2.3)."""
    parent = [-1] + [(-1 if rng.random() < p_root else int(rng.integers(0, k))) for k in range(1, n)]
    if chain:
        parent = list(range(-1, n - 1))
    m = rng.integers(1, m_max + 1, size=n)
    nv = np.array([int(rng.integers(0, mk + 1)) for mk in m])
    tree = SKOTree(np.array(parent), m, nv)
    phi = [None if parent[k] < 0 else rng.normal(size=(batch, m[parent[k]], m[k])) * 0.5 for k in range(n)]
    # full row rank joint maps: rows of a random orthogonal matrix, scaled
    H = [np.linalg.qr(rng.normal(size=(batch, m[k], m[k])))[0][:, :nv[k], :] * rng.uniform(0.5, 2.0)
         for k in range(n)]
    M = []
    for k in range(n):
        A = rng.normal(size=(batch, m[k], m[k]))
        M.append(A @ np.swapaxes(A, -1, -2) / m[k] + np.eye(m[k]))
    return SKOWeights(tree, phi, H, M, batch)


def block_sko(tree, blocks, b=0):
    """Dense E with E(parent(k), k) = blocks[k]."""
    E = np.zeros((tree.nx, tree.nx))
    for k in range(tree.n_nodes):
        if tree.parent[k] >= 0:
            E[tree.x_slice(tree.parent[k]), tree.x_slice(k)] = np.broadcast_to(blocks[k], (b + 1,) + blocks[k].shape[1:])[b]
    return E


def block_diag(tree, blocks, rows, cols, b=0):
    """Dense block diagonal operator with node blocks; rows/cols 'x' or 'v'."""
    rs = tree.x_slice if rows == "x" else tree.v_slice
    cs = tree.x_slice if cols == "x" else tree.v_slice
    R = tree.nx if rows == "x" else tree.nv
    C = tree.nx if cols == "x" else tree.nv
    out = np.zeros((R, C))
    for k in range(tree.n_nodes):
        blk = blocks[k]
        out[rs(k), cs(k)] = np.broadcast_to(blk, (b + 1,) + blk.shape[1:])[b]
    return out


def dense_operators(w: SKOWeights, b=0):
    t = w.tree
    ab = articulated_body(w)
    I = np.eye(t.nx)
    E = block_sko(t, w.phi, b)
    phi = np.linalg.inv(I - E)
    H = block_diag(t, w.H, "v", "x", b)
    M = block_diag(t, w.M, "x", "x", b)
    P = block_diag(t, ab.P, "x", "x", b)
    D = block_diag(t, ab.D, "v", "v", b)
    Dinv = np.linalg.inv(D) if t.nv else D
    G = block_diag(t, ab.G, "x", "v", b)
    K = E @ G
    tau = G @ H
    taubar = I - tau
    Epsi = E @ taubar
    psi = np.linalg.inv(I - Epsi)
    return dict(I=I, E=E, phi=phi, H=H, M=M, P=P, D=D, Dinv=Dinv, G=G, K=K, tau=tau, taubar=taubar,
                Epsi=Epsi, psi=psi, Mass=H @ phi @ M @ phi.T @ H.T, ab=ab, Pplus=block_diag(t, ab.P_plus, "x", "x", b))
