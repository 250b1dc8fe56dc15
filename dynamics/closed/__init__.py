"""Closed chains and joint couplings (seed 000): constraint embedding, the Lagrange reference,
aggregated trees.  The public names are in :mod:`dynamics.embedding`."""
