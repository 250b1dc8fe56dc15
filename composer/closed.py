"""Closed chains in the pipeline: the tree model plus its loop-closing chords.

``loops: embed`` (the default) builds the constraint-embedded model of
:mod:`dynamics.embedding` (seed 000: each loop's aggregation subgraph becomes a
compound node with minimal coordinates); ``loops: lagrange`` builds the dense
Lagrange-multiplier model of :mod:`dynamics.lagrange` on the spanning tree.
Both expose every tree joint by name (independent and dependent alike).
"""

from __future__ import annotations

from mbcompose.dynamics.closure import ClosureError
from mbcompose.parsers.errors import InputError


def closed_chain_model(tree, options):
    """The dynamics model of a closed chain (see module docstring)."""
    from mbcompose.dynamics.embedding import chords_from_tree_model, embed_tree_model

    try:
        if options.loops == "lagrange":
            from mbcompose.dynamics.lagrange import LagrangeModel

            return LagrangeModel(tree.model, chords_from_tree_model(tree))
        return embed_tree_model(tree)
    except ClosureError as exc:
        raise InputError(f"loop {exc.loop}: {exc}") from None
