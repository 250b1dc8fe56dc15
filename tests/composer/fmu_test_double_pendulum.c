/* TEST DOUBLE, not generated code: a hand-written pendulum with the C interface of
 * mbcompose.dynamics.codegen.generate_c (prefix "pendulum"), used only by tests/composer/test_fmu.py to
 * test the FMI 2.0 wrapper on its own.
 *   x = (theta, v:theta), u = (tau:theta) N m, y = (theta, tip_z) with tip_z = -l cos(theta) m,
 *   p = (mass kg, length m), m l^2 theta'' = tau - m g l sin(theta).
 */
#include <math.h>

void pendulum_start_state(double *x) { x[0] = 0.5; x[1] = 0.0; }

int pendulum_derivatives(const double *p, double t, const double *x, const double *u, double *dx) {
    const double m = p[0], l = p[1], g = 9.81;
    (void)t;
    if (!(m > 0.0) || !(l > 0.0)) return 1;
    dx[0] = x[1];
    dx[1] = (u[0] - m * g * l * sin(x[0])) / (m * l * l);
    return 0;
}

int pendulum_outputs(const double *p, const double *x, double *y) {
    y[0] = x[0];
    y[1] = -p[1] * cos(x[0]);
    return 0;
}

/* the mass matrix (1 x 1), for the joint stops of the wrapper */
void pendulum_crba(const double *p, const double *q, double *M) { (void)q; M[0] = p[0] * p[1] * p[1]; }
