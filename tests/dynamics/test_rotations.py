"""URDF's roll-pitch-yaw rotations against Pinocchio's ``rpyToMatrix`` and the product of the
three elementary rotations."""

import numpy as np
import pinocchio as pin

from mbcompose.dynamics.spatial import rot_x, rot_y, rot_z, rpy_to_matrices, rpy_to_matrix

RPY = np.random.default_rng(7).uniform(-4.0, 4.0, size=(50, 3))


def test_rpy_to_matrix_is_rz_ry_rx_and_pinocchios():
    for r, p, y in RPY:
        R = rpy_to_matrix((r, p, y))
        np.testing.assert_allclose(R, rot_z(y) @ rot_y(p) @ rot_x(r), atol=1e-15)
        np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(r, p, y), atol=1e-15)


def test_rpy_to_matrices_gives_each_rows_rotation():
    Rs = rpy_to_matrices(RPY)
    assert Rs.shape == (50, 3, 3) and Rs.flags.c_contiguous
    for (r, p, y), R in zip(RPY, Rs):
        np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(r, p, y), atol=1e-15)
        np.testing.assert_array_equal(R, rpy_to_matrix((r, p, y)))  # the same numbers, not only close
