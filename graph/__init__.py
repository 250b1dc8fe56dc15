"""System graphs of mechanisms: extended graph, composites, reduction, loops (seed 004)."""
