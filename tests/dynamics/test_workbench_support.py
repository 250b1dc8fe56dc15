"""Reference builders for the workbench tests, and checks of the builders themselves.

Everything here is built without :mod:`dynamics.workbench`: dense block
matrices straight from the block lists (``E_phi`` as a dense block matrix,
``phi = (I - E_phi)^-1`` by numpy inversion), a dense block ``U D U*``
factorization of a mass matrix (the innovations factors of seed 002 Eq. 28
without any Riccati recursion), Pinocchio twins of revolute/prismatic trees,
and the frame changes used by the sensitivity tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from mbcompose import dynamics as dyn
from mbcompose.dynamics.model import weights as model_weights
from mbcompose.dynamics.sko import topological_order
from mbcompose.dynamics.spatial import quat_to_matrix, rotation_about_axis

# ---------------------------------------------------------------------------
# random trees
# ---------------------------------------------------------------------------


def random_parent(rng, n, chain=False, p_root=0.0):
    """Parent array in depth-first order (``parent[k] < k``, subtrees contiguous)."""
    if chain:
        return np.arange(-1, n - 1)
    parent = np.array([-1] + [(-1 if rng.random() < p_root else int(rng.integers(0, k))) for k in range(1, n)])
    perm = topological_order(parent)
    inv = np.empty(n, dtype=int)
    inv[perm] = np.arange(n)
    return np.array([-1 if parent[old] < 0 else inv[parent[old]] for old in perm])


def random_generic_sko(rng, n, m_max=5, chain=False, allow_zero_dof=True):
    """Generic SKO model with random non-square, non-rigid weights (seed 001 section 2.3).

    Returns parent, phi (list, None for roots), H (n_k, m_k) full row rank, M SPD.
    """
    parent = random_parent(rng, n, chain)
    m = rng.integers(2, m_max + 1, size=n)
    lo = 0 if allow_zero_dof else 1
    nv = np.array([int(rng.integers(lo, mk + 1)) for mk in m])
    nv[0] = max(nv[0], 1)
    phi = [None if parent[k] < 0 else rng.normal(size=(m[parent[k]], m[k])) * 0.6 for k in range(n)]
    H = [np.linalg.qr(rng.normal(size=(m[k], m[k])))[0][: nv[k]] * rng.uniform(0.5, 2.0) for k in range(n)]
    M = []
    for k in range(n):
        A = rng.normal(size=(m[k], m[k]))
        M.append(A @ A.T / m[k] + np.eye(m[k]))
    return parent, phi, H, M


def random_rigid_model(rng, n, chain=False, types=("revolute",), gravity=(0.0, 0.0, 0.0)):
    """Rigid-body tree (dynamics.build_model) in depth-first order with random bodies."""
    parent = random_parent(rng, n, chain)
    bodies = []
    for k in range(n):
        a = rng.normal(size=3)
        A = rng.normal(size=(3, 3))
        bodies.append(dyn.BodySpec(
            name=f"b{k}", parent=int(parent[k]), joint_type=str(rng.choice(types)), joint_name=f"j{k}",
            placement_rotation=quat_to_matrix(rng.normal(size=4)), placement_translation=rng.normal(size=3) * 0.5,
            mass=float(rng.uniform(0.5, 3.0)), com=rng.normal(size=3) * 0.2, inertia=A @ A.T * 0.1 + 0.05 * np.eye(3),
            axis=tuple(a / np.linalg.norm(a))))
    return dyn.build_model(bodies, gravity=gravity)


def model_blocks(model, q):
    """(parent, phi, H, M) lists of the rigid model at q, from dynamics.model.weights."""
    w = model_weights(model, np.asarray(q, float)[None])
    phi = [None if p is None else p[0] for p in w.phi]
    return model.parent.copy(), phi, [h[0] for h in w.H], [x[0] for x in w.M]


# ---------------------------------------------------------------------------
# dense references
# ---------------------------------------------------------------------------


class Dense:
    """Dense block matrices of an SKO model built from its block lists."""

    def __init__(self, parent, phi, H, M):
        n = len(parent)
        self.parent = np.asarray(parent)
        self.m = [Mk.shape[0] for Mk in M]
        self.nv = [Hk.shape[0] for Hk in H]
        self.xo = np.concatenate([[0], np.cumsum(self.m)]).astype(int)
        self.vo = np.concatenate([[0], np.cumsum(self.nv)]).astype(int)
        nx, nvt = self.xo[-1], self.vo[-1]
        self.E = np.zeros((nx, nx))
        self.H = np.zeros((nvt, nx))
        self.M = np.zeros((nx, nx))
        for k in range(n):
            if parent[k] >= 0:
                self.E[self.xs(parent[k]), self.xs(k)] = phi[k]
            self.H[self.vs(k), self.xs(k)] = H[k]
            self.M[self.xs(k), self.xs(k)] = M[k]
        self.I = np.eye(nx)
        self.phi = np.linalg.inv(self.I - self.E)
        self.mass = self.H @ self.phi @ self.M @ self.phi.T @ self.H.T

    def xs(self, k):
        return slice(int(self.xo[k]), int(self.xo[k + 1]))

    def vs(self, k):
        return slice(int(self.vo[k]), int(self.vo[k + 1]))

    def blockdiag_x(self, A):
        """Keep only the node-diagonal blocks of a (nx, nx) matrix."""
        out = np.zeros_like(A)
        for k in range(len(self.m)):
            out[self.xs(k), self.xs(k)] = A[self.xs(k), self.xs(k)]
        return out

    def blockdiag_v(self, A):
        out = np.zeros_like(A)
        for k in range(len(self.nv)):
            out[self.vs(k), self.vs(k)] = A[self.vs(k), self.vs(k)]
        return out

    def articulated(self, P):
        """Dense D, G, tau_bar, E_psi, psi, K from a dense block-diagonal P (seed 002 Eq. 24)."""
        D = self.H @ P @ self.H.T
        Dinv = np.zeros_like(D)
        for k in range(len(self.nv)):
            if self.nv[k]:
                Dinv[self.vs(k), self.vs(k)] = np.linalg.inv(D[self.vs(k), self.vs(k)])
        G = P @ self.H.T @ Dinv
        taubar = self.I - G @ self.H
        Epsi = self.E @ taubar
        return dict(D=D, Dinv=Dinv, G=G, taubar=taubar, Epsi=Epsi, psi=np.linalg.inv(self.I - Epsi), K=self.E @ G)

    def riccati_P(self):
        """Block-diagonal P solving seed 002 Eq. 25 by dense fixed-point iteration
        ``P = M + E tau_bar(P) P E*`` (n sweeps; exact for a nilpotent E)."""
        P = self.M.copy()
        for _ in range(len(self.m) + 1):
            D = self.H @ P @ self.H.T
            Dinv = np.zeros_like(D)
            for k in range(len(self.nv)):
                if self.nv[k]:
                    Dinv[self.vs(k), self.vs(k)] = np.linalg.inv(D[self.vs(k), self.vs(k)])
            taubar = self.I - P @ self.H.T @ Dinv @ self.H
            P = self.M + self.E @ taubar @ P @ self.E.T
        return P


def block_udu(Mmat, vo):
    """Block ``M = U D U*`` with U unit upper block-triangular (base-first node order).

    For parent[k] < k this is the innovations factorization of seed 002 Eq. 28
    (``U = I + H phi K``), obtained here by plain block elimination from the last
    block to the first, without any Riccati recursion.
    """
    A = np.array(Mmat, dtype=float)
    N = A.shape[0]
    U = np.eye(N)
    D = np.zeros_like(A)
    nb = len(vo) - 1
    for k in range(nb - 1, -1, -1):
        s = slice(int(vo[k]), int(vo[k + 1]))
        if s.stop == s.start:
            continue
        Dk = A[s, s]
        D[s, s] = Dk
        above = slice(0, s.start)
        Uk = A[above, s] @ np.linalg.inv(Dk)
        U[above, s] = Uk
        A[above, above] -= Uk @ Dk @ Uk.T
    return U, D


# ---------------------------------------------------------------------------
# frames for the sensitivity formulas
# ---------------------------------------------------------------------------


def world_frames(model, q):
    """X(k) = diag(R_k, R_k), R_k the orientation of body k in the ground frame."""
    w = model_weights(model, np.asarray(q, float)[None])
    Rrel = w.extras["R_rel"][0]
    Rw = [None] * model.n_bodies
    for k in range(model.n_bodies):
        p = model.parent[k]
        Rw[k] = Rrel[k] if p < 0 else Rw[p] @ Rrel[k]
    return [np.kron(np.eye(2), R) for R in Rw]


def hinge_frames(model, q):
    """X(k) = diag(R_J, R_J), R_J the joint rotation of hinge k: node k's blocks in a frame
    fixed on its parent at hinge k (the frames of seed 002 Listing 18)."""
    out = []
    for k in range(model.n_bodies):
        if model.joint_types[k] in ("revolute", "continuous"):
            R = rotation_about_axis(model.axis[k], q[k])
        else:
            R = np.eye(3)
        out.append(np.kron(np.eye(2), R))
    return out


def transform_blocks(blocks, X):
    """Similarity ``E' = X E X^-1``, ``H' = H X^-1``, ``M' = X M X*`` on block lists (seed 003 Lemma 8)."""
    parent, phi, H, M = blocks
    Xi = [np.linalg.inv(x) for x in X]
    phi2 = [None if parent[k] < 0 else X[parent[k]] @ phi[k] @ Xi[k] for k in range(len(parent))]
    return parent, phi2, [h @ Xi[k] for k, h in enumerate(H)], [X[k] @ m @ X[k].T for k, m in enumerate(M)]


def frame_blocks(model, q, frames):
    """Blocks of ``model`` at q in 'body' (dynamics.model), 'world' or 'hinge' frames."""
    b = model_blocks(model, q)
    if frames == "body":
        return b
    X = world_frames(model, q) if frames == "world" else hinge_frames(model, q)
    return transform_blocks(b, X)


def central_difference(f, q, i, h=1e-6):
    qp, qm = np.array(q, float), np.array(q, float)
    qp[i] += h
    qm[i] -= h
    return (f(qp) - f(qm)) / (2 * h)


def subtree(parent, i):
    out = {i}
    for k in range(len(parent)):
        if k > i and parent[k] in out:
            out.add(k)
    return out


# ---------------------------------------------------------------------------
# Pinocchio twin (revolute / prismatic trees in depth-first order)
# ---------------------------------------------------------------------------


def to_pinocchio(model):
    pin = pytest.importorskip("pinocchio")
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    for k in range(model.n_bodies):
        t = model.joint_types[k]
        jm = (pin.JointModelPrismaticUnaligned(model.axis[k]) if t == "prismatic"
              else pin.JointModelRevoluteUnaligned(model.axis[k]))
        j = pm.addJoint(int(model.parent[k]) + 1, jm, pin.SE3(model.placement_R[k], model.placement_p[k]), f"j{k}")
        pm.appendBodyToJoint(j, pin.Inertia(model.mass[k], model.com[k], model.inertia_com[k]), pin.SE3.Identity())
    return pm


def pin_mass_matrix(model, q):
    pin = pytest.importorskip("pinocchio")
    pm = to_pinocchio(model)
    data = pm.createData()
    Mm = pin.crba(pm, data, np.asarray(q, float))
    return np.triu(Mm) + np.triu(Mm, 1).T


def rel_err(x, ref):
    return float(np.max(np.abs(np.asarray(x) - np.asarray(ref))) / max(1.0, np.max(np.abs(ref))))


# ---------------------------------------------------------------------------
# checks of the references themselves
# ---------------------------------------------------------------------------


def test_dense_mass_matrix_of_model_blocks_matches_pinocchio_crba():
    rng = np.random.default_rng(7)
    model = random_rigid_model(rng, 12, types=("revolute", "prismatic"))
    q = rng.normal(size=model.nv)
    assert rel_err(Dense(*model_blocks(model, q)).mass, pin_mass_matrix(model, q)) < 1e-12


@pytest.mark.parametrize("frames", ["world", "hinge"])
def test_frame_changes_leave_the_mass_matrix_unchanged(frames):
    rng = np.random.default_rng(8)
    model = random_rigid_model(rng, 9)
    q = rng.normal(size=model.nv)
    assert rel_err(Dense(*frame_blocks(model, q, frames)).mass, pin_mass_matrix(model, q)) < 1e-12


def test_world_frame_weights_have_the_form_of_seed_002_eq_4():
    rng = np.random.default_rng(9)
    model = random_rigid_model(rng, 6)
    parent, phi, _, _ = frame_blocks(model, rng.normal(size=model.nv), "world")
    for k in range(1, 6):
        if parent[k] >= 0:
            assert np.allclose(phi[k][:3, :3], np.eye(3)) and np.allclose(phi[k][3:, 3:], np.eye(3))
            assert np.allclose(phi[k][3:, :3], 0) and np.allclose(phi[k][:3, 3:], -phi[k][:3, 3:].T)


def test_block_udu_reconstructs_and_is_unit_upper_triangular():
    rng = np.random.default_rng(10)
    d = Dense(*random_generic_sko(rng, 8))
    U, D = block_udu(d.mass, d.vo)
    assert np.allclose(U @ D @ U.T, d.mass, atol=1e-11)
    assert np.allclose(np.tril(U, -1), 0) and np.allclose(np.diag(U), 1)


def test_dense_riccati_fixed_point_satisfies_eq_25():
    rng = np.random.default_rng(11)
    d = Dense(*random_generic_sko(rng, 9))
    P = d.riccati_P()
    a = d.articulated(P)
    assert np.allclose(d.M, P - a["Epsi"] @ P @ a["Epsi"].T, atol=1e-10)
    assert np.allclose(a["D"], block_udu(d.mass, d.vo)[1], atol=1e-10)
