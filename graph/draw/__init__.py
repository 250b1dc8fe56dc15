"""Pictures of graphs (matplotlib): :mod:`.systems` draws seed 004's system graphs (Figs. 3-4),
:mod:`.sparsity` the block sparsity of an SKO model (seed 000, Figs. 6-7)."""

from .sparsity import draw_sparsity, sparsity_figure, sparsity_patterns
from .systems import draw_system_graph

__all__ = ["draw_sparsity", "draw_system_graph", "sparsity_figure", "sparsity_patterns"]
