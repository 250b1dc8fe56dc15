"""Closed-chain samples and their independent references for the tests.

* :func:`load`: read a sample, split it into spanning tree + chords
  (``graph.model.tree.build_tree_model``) and constraint-embed it.
* :class:`PinTwin`: the same spanning tree built through Pinocchio's API
  (``tests/dynamics/trees.to_pinocchio``), with each chord replaced by point
  constraints written here from the Assembly joints: one point for a spherical
  joint, two points on the axis for a revolute, three non-collinear points for a
  fixed joint.  Its closure error (point gaps), Jacobian (finite differences of
  that error, :meth:`PinTwin.jacobian_fd`),
  mass matrix (Pinocchio CRBA), analytic frame Jacobians (checked against the
  finite differences in the tests) and classical frame accelerations give the dense Lagrange-multiplier
  reference ``[M G^T; G 0]``, and its rigid constraint models feed
  ``pinocchio.constraintDynamics``.  Nothing here calls ``dynamics.closed.closure``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mbcompose import dynamics as dyn
from mbcompose import parsers
from mbcompose.graph.model.closed import embed_tree_model
from mbcompose.graph.model.tree import RigidBody, build_tree_model
from mbcompose.dynamics import embedding as E
from mbcompose.parsers.massprops import transform_mass_properties

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
CLOSED = {
    "fourbar": SAMPLES / "fourbar" / "fourbar.yaml",
    "slider_crank": SAMPLES / "slider_crank" / "slider_crank.yaml",
    "fivebar": SAMPLES / "fivebar" / "fivebar.yaml",
    "leg_fourbar_knee": SAMPLES / "leg_fourbar_knee" / "leg_fourbar_knee.yaml",
    "rssr": SAMPLES / "rssr" / "rssr.yaml",
    "seeker_bearings": SAMPLES / "seeker_bearings" / "seeker_bearings.yaml",
}
POINT_OFFSET = 0.05   # m, spacing of the extra constraint points


def available():
    """Every closed-chain sample (a missing sample file is a failure, not a skip)."""
    return list(CLOSED)


def tree_of(asm, drop=()):
    bodies = [RigidBody(b.name, transform_mass_properties(b.mass, b.pose)) for b in asm.bodies]
    joints = [j for j in asm.joints if j.name not in drop]
    return build_tree_model(bodies, joints, asm.gravity)


def load(name):
    asm = parsers.read_assembly(CLOSED[name])
    tm = tree_of(asm)
    return asm, tm, embed_tree_model(tm)


class PinTwin:
    """Pinocchio model of the spanning tree plus point constraints for the chords.

    ``planar=True`` constrains a revolute chord at one point (its origin) instead of two: the
    same mechanism when the chord's loop is planar with the chord axis normal to the plane (the
    other points' rows are then redundant), and fewer redundant rows for ``constraintDynamics``.
    """

    def __init__(self, tm, planar=False):
        import pinocchio as pin
        from trees import q_to_pin, to_pinocchio, v_perm

        self.pin = pin
        self.tm = tm
        self.model = tm.model
        self.pm, self.jid, self.off = to_pinocchio(tm.model)
        self.pd = self.pm.createData()
        self.vp = v_perm(tm.model)
        self._q_to_pin = q_to_pin
        index = {e.child: k for k, e in enumerate(tm.edges)}
        origin = {e.child: np.asarray(e.joint.origin, float) for e in tm.edges}
        self.pairs = []          # (frame id on a, frame id on b)
        self.constraints = []    # pin.RigidConstraintModel (3D) per pair
        for j in tm.chords:
            o = np.asarray(j.origin, float)
            u = np.asarray(j.axis, float)
            if j.type == "spherical":
                pts = [o]
            elif j.type in ("revolute", "continuous"):
                pts = [o] if planar else [o, o + POINT_OFFSET * u]
            elif j.type == "fixed":
                pts = [o, o + POINT_OFFSET * np.array([1.0, 0, 0]), o + POINT_OFFSET * np.array([0, 1.0, 0])]
            else:
                raise NotImplementedError(f"no point-constraint twin for a {j.type} chord")
            for i, x in enumerate(pts):
                ids = []
                places = []
                for end in (j.reference, j.secondary):
                    if end in index:
                        k = index[end]
                        jid = self.jid[k]
                        place = self.off[k] * pin.SE3(np.eye(3), x - origin[end])
                    else:
                        jid = 0
                        place = pin.SE3(np.eye(3), x)
                    fid = self.pm.addFrame(pin.Frame(f"{j.name}_{end}_{i}", jid, place, pin.FrameType.OP_FRAME))
                    ids.append(fid)
                    places.append((jid, place))
                self.pairs.append(tuple(ids))
                (j1, p1), (j2, p2) = places
                self.constraints.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, self.pm, j1, p1, j2, p2,
                                                                 pin.ReferenceFrame.LOCAL_WORLD_ALIGNED))
        self.pd = self.pm.createData()

    def qp(self, q):
        return self._q_to_pin(self.model, q)

    def vpin(self, v):
        return np.asarray(v)[self.vp]

    def v_from_pin(self, vpin):
        out = np.empty(len(vpin))
        out[self.vp] = vpin
        return out

    def error(self, qp):
        pin = self.pin
        pin.framesForwardKinematics(self.pm, self.pd, qp)
        return np.concatenate([self.pd.oMf[b].translation - self.pd.oMf[a].translation for a, b in self.pairs])

    def jacobian_fd(self, qp, h=1e-6):
        """Closure Jacobian w.r.t. Pinocchio's v by central differences of :meth:`error`."""
        pin = self.pin
        cols = []
        for i in range(self.pm.nv):
            dv = np.zeros(self.pm.nv)
            dv[i] = h
            cols.append((self.error(pin.integrate(self.pm, qp, dv)) - self.error(pin.integrate(self.pm, qp, -dv))) / (2 * h))
        return np.column_stack(cols)

    def jacobian(self, qp):
        """Closure Jacobian from Pinocchio's analytic frame Jacobians (world-aligned, linear rows)."""
        pin = self.pin
        pin.computeJointJacobians(self.pm, self.pd, qp)
        pin.updateFramePlacements(self.pm, self.pd)
        J = lambda f: pin.getFrameJacobian(self.pm, self.pd, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:3]
        return np.vstack([J(b) - J(a) for a, b in self.pairs])

    def bias(self, qp, vpin):
        """``Gdot v``: classical relative acceleration of the point pairs at zero joint acceleration."""
        pin = self.pin
        pin.forwardKinematics(self.pm, self.pd, qp, vpin, np.zeros(self.pm.nv))
        pin.updateFramePlacements(self.pm, self.pd)
        acc = lambda f: pin.getFrameClassicalAcceleration(self.pm, self.pd, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear
        return np.concatenate([acc(b) - acc(a) for a, b in self.pairs])

    def lagrange_accelerations(self, q, v, tau):
        """Dense reference: solve ``[M G^T; G 0] [a; lambda] = [tau - C; -Gdot v]`` (least squares,
        since point constraints of planar loops are redundant).  Returns (a (nv,) ours, G^T lambda)."""
        pin = self.pin
        qp, vpin, tp = self.qp(q), self.vpin(v), self.vpin(tau)
        M = pin.crba(self.pm, self.pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.rnea(self.pm, self.pd, qp, vpin, np.zeros(self.pm.nv))
        G = self.jacobian(qp)
        gam = self.bias(qp, vpin)
        nc = G.shape[0]
        K = np.block([[M, G.T], [G, np.zeros((nc, nc))]])
        sol = np.linalg.lstsq(K, np.r_[tp - C, -gam], rcond=1e-13)[0]
        a = sol[:self.pm.nv]
        return self.v_from_pin(a), self.v_from_pin(-(G.T @ sol[self.pm.nv:]))

    def constraint_solver(self, mu=1e-8, iters=200):
        """``(data, constraint models, constraint data, proximal settings)`` for
        ``pinocchio.constraintDynamics`` on this twin, initialised once."""
        pin = self.pin
        cms = pin.StdVec_RigidConstraintModel()
        for c in self.constraints:
            cms.append(c)
        cds = pin.StdVec_RigidConstraintData()
        for c in cms:
            cds.append(c.createData())
        data = self.pm.createData()
        pin.initConstraintDynamics(self.pm, data, cms, cds)
        return data, cms, cds, pin.ProximalSettings(1e-14, mu, iters)

    def constraint_dynamics(self, q, v, tau, iters=200):
        data, cms, cds, prox = self.constraint_solver(iters=iters)
        a = self.pin.constraintDynamics(self.pm, data, self.qp(q), self.vpin(v), self.vpin(tau), cms, cds, prox)
        return self.v_from_pin(a)


def random_states(em, rng, n, spread=0.6, v_scale=1.0, tau_scale=1.0, max_tries=None):
    """``n`` closed states (q, v, tau): independent coordinates drawn around the reference."""
    out = []
    tries = 0
    q0 = em.neutral()
    max_tries = max_tries or 20 * n
    while len(out) < n:
        tries += 1
        if tries > max_tries:
            raise RuntimeError("could not draw closed configurations")
        dv = np.zeros(em.nv)
        dv[em.independent_v] = rng.uniform(-spread, spread, size=em.n_independent)
        from mbcompose.dynamics.kinematics import integrate
        qg = integrate(em.tree_model, q0, dv)
        try:
            q = E.complete_configuration(em, qg)
            v = E.complete_velocity(em, q, rng.normal(size=em.n_independent) * v_scale)
        except E.ClosureError:
            continue
        # forces scaled by the typical joint-space inertia: accelerations of order one
        inertia = float(np.mean(np.diag(dyn.mass_matrix(em.tree_model, q))))
        tau = rng.normal(size=em.nv) * tau_scale * inertia
        out.append((q, v, tau))
    return out
