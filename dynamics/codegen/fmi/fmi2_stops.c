/* fmi2_stops.c: joint stops (position limits) of a rigid-body tree or of the independent coordinates of
 * an embedded closed chain, for fmi2_wrapper.c (included by it).
 *
 * The same model as mbcompose's adaptive simulator (dynamics/simulation/stops.py): hard, perfectly
 * inelastic stops.
 *  - Free motion runs until a limited coordinate reaches a limit: an event (indicators q - lower and
 *    upper - q; Model Exchange: the importer's root finder locates it; Co-Simulation: bisection of the
 *    Runge-Kutta step to FMU_EVENT_TIME_TOL).
 *  - There the impulse dv = M^-1 E p with E^T (v + dv) = 0 stops the coordinates on their stops that move
 *    outwards (E the unit columns of those coordinates; a row the impulse pushes outwards joins them),
 *    and q is put on the stop.
 *  - A coordinate whose stop pushes back (force lambda into the range) is held:
 *    a = a0 + M^-1 E lambda with E^T a = 0 (a0 the free acceleration), until lambda reaches zero
 *    (the indicator of a held row), when it is released.
 *  - A row that has just left a stop is not an event again until it is FMU_STOP_MARGIN inside its range.
 * M is the generated CRBA (FMU_CRBA) of a tree, factorised by Cholesky; the small k x k systems by Gaussian
 * elimination with partial pivoting.  Needs x = (q, v) with FMU_NQ positions and FMU_NV velocities: the
 * whole tree's, or (FMU_CLOSED_STOPS) a closed chain's independent ones, whose M is then the mass matrix
 * in independent coordinates M_r = X^T M X (X = the columns of FMU_COMPLETE_VELOCITY at the configuration
 * FMU_CLOSE completes, M the tree's CRBA there): as mbcompose's simulator for a stop on an independent
 * coordinate (dynamics/simulation/stops.py, X M_r^-1 X^T, whose independent rows are M_r^-1).
 */

#define FMU_STOP_MARGIN 1e-9    /* rad or m: how far inside its range a row that left a stop is re-armed */
#define FMU_EVENT_TIME_TOL 1e-13 /* s: co-simulation's event location */

#if FMU_NL > 0
/* A (n x n, symmetric positive definite) -> its Cholesky factor L in the lower triangle; 0 = ok */
static int cholesky(double *A, int n) {
    int i, j, k;
    for (j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0.0)) return 1;
        d = sqrt(d);
        A[j * n + j] = d;
        for (i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / d;
        }
    }
    return 0;
}

/* b <- (L L^T)^-1 b */
static void cholesky_solve(const double *L, int n, double *b) {
    int i, k;
    for (i = 0; i < n; i++) {
        for (k = 0; k < i; k++) b[i] -= L[i * n + k] * b[k];
        b[i] /= L[i * n + i];
    }
    for (i = n - 1; i >= 0; i--) {
        for (k = i + 1; k < n; k++) b[i] -= L[k * n + i] * b[k];
        b[i] /= L[i * n + i];
    }
}

/* b <- A^-1 b (A k x k, destroyed), partial pivoting; 0 = ok */
static int solve_small(double *A, int k, double *b) {
    int i, j, r;
    for (j = 0; j < k; j++) {
        int p = j;
        for (i = j + 1; i < k; i++) if (fabs(A[i * k + j]) > fabs(A[p * k + j])) p = i;
        if (A[p * k + j] == 0.0) return 1;
        if (p != j) {
            double t;
            for (r = 0; r < k; r++) { t = A[j * k + r]; A[j * k + r] = A[p * k + r]; A[p * k + r] = t; }
            t = b[j]; b[j] = b[p]; b[p] = t;
        }
        for (i = j + 1; i < k; i++) {
            double f = A[i * k + j] / A[j * k + j];
            for (r = j; r < k; r++) A[i * k + r] -= f * A[j * k + r];
            b[i] -= f * b[j];
        }
    }
    for (i = k - 1; i >= 0; i--) {
        for (r = i + 1; r < k; r++) b[i] -= A[i * k + r] * b[r];
        b[i] /= A[i * k + i];
    }
    return 0;
}

/* M (FMU_NV x FMU_NV) of the velocity states at the instance's x: the tree's CRBA, or a closed chain's
   X^T M X; 0 = ok */
static int stop_mass(Instance *c, double *M) {
#ifdef FMU_CLOSED_STOPS
    double q[FMU_NQ_TREE], Mt[FMU_NV_TREE * FMU_NV_TREE], X[FMU_NV_TREE * FMU_NV], e[FMU_NV], col[FMU_NV_TREE];
    int i, j, a, b;
    if (FMU_CLOSE(&c->s.ws, c->s.x, q) != 0) {
        log_message(c, fmi2Error, "logStatusError", "joint stops: the loops do not close at t = %.17g s", c->s.time);
        return 1;
    }
    for (j = 0; j < FMU_NV; j++) {
        memset(e, 0, sizeof e);
        e[j] = 1.0;
        if (FMU_COMPLETE_VELOCITY(q, e, col) != 0) return 1;
        for (i = 0; i < FMU_NV_TREE; i++) X[i * FMU_NV + j] = col[i];
    }
    FMU_CRBA(c->s.p, q, Mt);
    for (a = 0; a < FMU_NV; a++)
        for (b = 0; b < FMU_NV; b++) {
            double s = 0.0;
            for (i = 0; i < FMU_NV_TREE; i++)
                for (j = 0; j < FMU_NV_TREE; j++) s += X[i * FMU_NV + a] * Mt[i * FMU_NV_TREE + j] * X[j * FMU_NV + b];
            M[a * FMU_NV + b] = s;
        }
#else
    FMU_CRBA(c->s.p, c->s.x, M);
#endif
    return 0;
}

/* y (k) = (E_H^T M^-1 E_H)^-1 r and out (nv) = M^-1 E_H y for the limited rows `rows` (k of them) at q;
   0 = ok */
static int stop_correction(Instance *c, const int *rows, int k, const double *r, double *y, double *out) {
    double L[FMU_NV * FMU_NV], W[FMU_NV * FMU_NL], WHH[FMU_NL * FMU_NL], col[FMU_NV];
    int i, j;
    if (stop_mass(c, L) != 0) return 1;
    if (cholesky(L, FMU_NV) != 0) {
        log_message(c, fmi2Error, "logStatusError", "the mass matrix is not positive definite at t = %.17g s",
                    c->s.time);
        return 1;
    }
    for (j = 0; j < k; j++) {
        memset(col, 0, sizeof col);
        col[FMU_LIMIT_V[rows[j]]] = 1.0;
        cholesky_solve(L, FMU_NV, col);
        for (i = 0; i < FMU_NV; i++) W[i * k + j] = col[i];
    }
    for (i = 0; i < k; i++) {
        for (j = 0; j < k; j++) WHH[i * k + j] = W[FMU_LIMIT_V[rows[i]] * k + j];
        y[i] = r[i];
    }
    if (solve_small(WHH, k, y) != 0) {
        log_message(c, fmi2Error, "logStatusError", "joint stops: singular system at t = %.17g s", c->s.time);
        return 1;
    }
    for (i = 0; i < FMU_NV; i++) {
        out[i] = 0.0;
        for (j = 0; j < k; j++) out[i] += W[i * k + j] * y[j];
    }
    return 0;
}

/* the rows with a nonzero entry of side (NL) in rows; their count */
static int rows_of(const int *side, int *rows) {
    int r, k = 0;
    for (r = 0; r < FMU_NL; r++) if (side[r] != 0) rows[k++] = r;
    return k;
}

/* dx's accelerations corrected for the held rows and their stop forces (evaluate() calls it) */
static int hold_stops(Instance *c) {
    int rows[FMU_NL], k = rows_of(c->s.held, rows), i;
    double r[FMU_NL], y[FMU_NL], corr[FMU_NV];
    for (i = 0; i < FMU_NL; i++) c->s.force[i] = 0.0;
    if (k == 0) return 0;
    for (i = 0; i < k; i++) r[i] = -c->s.dx[FMU_NQ + FMU_LIMIT_V[rows[i]]];
    if (stop_correction(c, rows, k, r, y, corr) != 0) return 1;
    for (i = 0; i < FMU_NV; i++) c->s.dx[FMU_NQ + i] += corr[i];
    for (i = 0; i < k; i++) c->s.force[rows[i]] = -c->s.held[rows[i]] * y[i];
    return 0;
}

/* the rows (side -1 lower, +1 upper, 0 free) on a stop now: held and not released, or armed and within
   FMU_STOP_MARGIN of (or past) a limit */
static void touching_rows(Instance *c, int *side) {
    int r;
    for (r = 0; r < FMU_NL; r++) {
        double q = c->s.x[FMU_LIMIT_Q[r]];
        side[r] = 0;
        if (c->s.held[r] != 0) side[r] = c->s.held[r];
        else if (c->s.armed_lo[r] && isfinite(FMU_LOWER[r]) && q - FMU_LOWER[r] <= FMU_STOP_MARGIN) side[r] = -1;
        else if (c->s.armed_hi[r] && isfinite(FMU_UPPER[r]) && FMU_UPPER[r] - q <= FMU_STOP_MARGIN) side[r] = 1;
    }
}

/* the held set among the candidates: drop the row of the most negative stop force until none pulls */
static int choose_held(Instance *c, int *candidate) {
    int rows[FMU_NL], k, i, worst;
    double r[FMU_NL], y[FMU_NL], corr[FMU_NV];
    for (;;) {
        k = rows_of(candidate, rows);
        if (k == 0) return 0;
        for (i = 0; i < FMU_NL; i++) c->s.held[i] = 0;
        c->s.fresh = 0;
        if (evaluate(c) != 0) return 1;
        for (i = 0; i < k; i++) r[i] = -c->s.dx[FMU_NQ + FMU_LIMIT_V[rows[i]]];
        if (stop_correction(c, rows, k, r, y, corr) != 0) return 1;
        worst = -1;
        for (i = 0; i < k; i++) {
            double lam = -candidate[rows[i]] * y[i];
            if (lam < 0.0 && (worst < 0 || lam < -candidate[rows[worst]] * y[worst])) worst = i;
        }
        if (worst < 0) return 0;
        candidate[rows[worst]] = 0;
    }
}

/* an event: release held rows whose stop force reached zero, put the touching rows on their stops,
   stop their outward velocities by the inelastic impulse, choose the held set; *changed (if given)
   says whether x changed.  0 = ok */
static int settle_stops(Instance *c, int *changed) {
    int side[FMU_NL], released[FMU_NL], candidate[FMU_NL], rows[FMU_NL], k = 0, r, i;
    double rhs[FMU_NL], y[FMU_NL], corr[FMU_NV], v_before[FMU_NV], *q = c->s.x, *v = c->s.x + FMU_NQ;
    int moved = 0, in_set[FMU_NL] = {0};
    c->s.fresh = 0;
    if (evaluate(c) != 0) return 1;
    for (r = 0; r < FMU_NL; r++) released[r] = c->s.held[r] != 0 && c->s.force[r] <= 0.0;
    touching_rows(c, side);
    for (r = 0; r < FMU_NL; r++) {
        double target;
        if (side[r] == 0) continue;
        target = side[r] < 0 ? FMU_LOWER[r] : FMU_UPPER[r];
        if (q[FMU_LIMIT_Q[r]] != target) { q[FMU_LIMIT_Q[r]] = target; moved = 1; }
    }
    /* the impulse on the rows moving outwards can push another row on its stop outwards (coupled through
       the inertia): that one joins the set and the impulse is taken again from the velocity before */
    memcpy(v_before, v, sizeof v_before);
    for (;;) {
        int more = 0;
        for (r = 0; r < FMU_NL; r++) {
            if (side[r] != 0 && !in_set[r] && side[r] * v[FMU_LIMIT_V[r]] > 0.0) { in_set[r] = 1; more = 1; }
        }
        if (!more) break;
        for (k = 0, r = 0; r < FMU_NL; r++) if (in_set[r]) { rows[k] = r; rhs[k] = -v_before[FMU_LIMIT_V[r]]; k++; }
        if (stop_correction(c, rows, k, rhs, y, corr) != 0) return 1;
        for (i = 0; i < FMU_NV; i++) v[i] = v_before[i] + corr[i];
        moved = 1;
    }
    for (r = 0; r < FMU_NL; r++) candidate[r] = released[r] ? 0 : side[r];
    if (choose_held(c, candidate) != 0) return 1;
    for (r = 0; r < FMU_NL; r++) {
        if (side[r] != 0 && candidate[r] == 0) {
            if (side[r] < 0) c->s.armed_lo[r] = 0; else c->s.armed_hi[r] = 0;
        }
        if (side[r] != 0)
            log_message(c, fmi2OK, "logAll", "t = %.17g s: limited row %d on its %s stop, %s", c->s.time, r,
                        side[r] < 0 ? "lower" : "upper", candidate[r] != 0 ? "held" : "free");
        c->s.held[r] = candidate[r];
    }
    c->s.fresh = 0;
    if (evaluate(c) != 0) return 1;
    if (changed != NULL) *changed = moved;
    return 0;
}

/* rows that left a stop become events again once FMU_STOP_MARGIN inside their range */
static void rearm_stops(Instance *c) {
    int r;
    for (r = 0; r < FMU_NL; r++) {
        double q = c->s.x[FMU_LIMIT_Q[r]];
        if (c->s.held[r] != 0) continue;
        if (!c->s.armed_lo[r] && q - FMU_LOWER[r] > FMU_STOP_MARGIN) c->s.armed_lo[r] = 1;
        if (!c->s.armed_hi[r] && FMU_UPPER[r] - q > FMU_STOP_MARGIN) c->s.armed_hi[r] = 1;
    }
}

/* 2 per limited row: held: (stop force, 1); free: (q - lower, upper - q), a side not armed kept
   >= FMU_STOP_MARGIN, an infinite side 1 */
static void stop_indicators(Instance *c, double *z) {
    int r;
    for (r = 0; r < FMU_NL; r++) {
        double q = c->s.x[FMU_LIMIT_Q[r]];
        double lo = isfinite(FMU_LOWER[r]) ? q - FMU_LOWER[r] : 1.0;
        double hi = isfinite(FMU_UPPER[r]) ? FMU_UPPER[r] - q : 1.0;
        if (c->s.held[r] != 0) { z[2 * r] = c->s.force[r]; z[2 * r + 1] = 1.0; continue; }
        z[2 * r] = c->s.armed_lo[r] ? lo : fmax(lo, FMU_STOP_MARGIN);
        z[2 * r + 1] = c->s.armed_hi[r] ? hi : fmax(hi, FMU_STOP_MARGIN);
    }
}

/* whether an indicator changed sign (> 0 to <= 0 or back) */
static int crossed(const double *z0, const double *z) {
    int i;
    for (i = 0; i < 2 * FMU_NL; i++) if ((z0[i] > 0.0) != (z[i] > 0.0)) return 1;
    return 0;
}
#else
static int hold_stops(Instance *c) { (void)c; return 0; }
static int settle_stops(Instance *c, int *changed) { (void)c; if (changed != NULL) *changed = 0; return 0; }
static void rearm_stops(Instance *c) { (void)c; }
static void stop_indicators(Instance *c, double *z) { (void)c; (void)z; }
static int crossed(const double *z0, const double *z) { (void)z0; (void)z; return 0; }
#endif
