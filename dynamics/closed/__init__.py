"""Closed chains and joint couplings (seed 000): :mod:`.embedding` (the constraint embedding into an
aggregated SKO tree, minimal coordinates), :mod:`.closure` (chord closure functions), :mod:`.coupling`
(couplings as constraint rows), :mod:`.aggregated` (the SKO model of an aggregated tree) and
:mod:`.lagrange` (the dense Lagrange-multiplier reference).  The public names of the embedding are in
:mod:`dynamics.embedding`."""
