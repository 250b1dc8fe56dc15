"""Design sweeps: :mod:`.config` (the ``sweep:`` section) -> :mod:`.paths` (values into the YAML
document or the options) -> :mod:`.task` (one variant, composed in a worker) on
:mod:`.executors` (inline, local processes, Dask) -> :mod:`.table` (one CSV row per variant,
reruns skip) -> :mod:`.report`; :mod:`.run` drives them."""

from .run import SweepResult, run_sweep

__all__ = ["SweepResult", "run_sweep"]
