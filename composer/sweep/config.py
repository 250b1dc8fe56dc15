"""The ``sweep:`` and ``executor:`` sections of a pipeline config.

Example (docs/pipeline-format.md, section *sweep*)::

    sweep:
      combine: grid                    # grid (every combination) | zip (i-th with i-th)
      parameters:
        - path: bodies.camera.mass     # see composer.sweep.paths
          linspace: {start: 0.05, stop: 0.5, num: 10}
        - name: pitch_offset           # one value written to several paths
          path: [joints.pitch_a.origin[2], joints.pitch_b.origin[2]]
          values: [0, 1, 2]
        - path: materials.aluminium.density
          random: {distribution: uniform, low: 2600, high: 2800, count: 5, seed: 1}
      record: [dof, total_mass, mass_matrix, bias_forces, simulation]
    executor: {kind: dask, scheduler: tcp://HOST:8786}   # or {kind: local, workers: 2}

Everything is checked when the config is loaded: paths against the input
(with "did you mean"), value lists, the combination's lengths.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbcompose.parsers.errors import did_you_mean
from mbcompose.parsers.yaml.document import Node, load_yaml

from .paths import ParamPath, parse_path

RECORDABLE = ("dof", "total_mass", "mass_matrix", "mass_matrix_eigenvalues", "bias_forces", "simulation")
DEFAULT_RECORD = ("dof", "total_mass", "mass_matrix", "mass_matrix_eigenvalues", "bias_forces")
EXECUTORS = ("local", "dask", "inline")
DISTRIBUTIONS = {"uniform": ("low", "high"), "normal": ("mean", "std")}


@dataclass(frozen=True)
class Parameter:
    """A swept parameter: its column name, the paths its value goes to, its values."""

    name: str
    paths: tuple[ParamPath, ...]
    values: tuple


@dataclass(frozen=True)
class SweepConfig:
    parameters: tuple[Parameter, ...]
    combine: str = "grid"
    record: tuple[str, ...] = DEFAULT_RECORD

    def variants(self) -> list[dict]:
        """Every variant as ``{parameter name: value}``, in a fixed order."""
        names = [p.name for p in self.parameters]
        if self.combine == "zip":
            rows = zip(*(p.values for p in self.parameters))
        else:
            rows = itertools.product(*(p.values for p in self.parameters))
        return [dict(zip(names, row)) for row in rows]


@dataclass(frozen=True)
class ExecutorConfig:
    """kind: 'local' (processes on this machine), 'dask' (a cluster) or 'inline' (this process).

    scheduler: a Dask scheduler address (None: a LocalCluster).  workers: how
    many processes (local, or the LocalCluster); None: as many as cores.
    """

    kind: str = "local"
    scheduler: str | None = None
    workers: int | None = None


def _scalar(node: Node):
    v = node.value
    if isinstance(v, list):
        return tuple(_scalar(item) for item in node)
    if isinstance(v, bool) or isinstance(v, str):
        return v
    return node.number()


def _count(node: Node) -> int:
    n = node.number(positive=True)
    if n != int(n):
        raise node.error(f"expected a whole number, got {n:g}")
    return int(n)


def _linspace(node: Node) -> tuple:
    if isinstance(node.value, list):
        items = node.sequence("[start, stop, num]")
        if len(items) != 3:
            raise node.error(f"expected [start, stop, num], got {len(items)} items")
        start, stop, num = items
    else:
        node.check_keys(("start", "stop", "num"))
        start, stop, num = node.require("start"), node.require("stop"), node.require("num")
    return tuple(float(x) for x in np.linspace(start.number(), stop.number(), _count(num)))


def _random(node: Node) -> tuple:
    node.check_keys(("distribution", "low", "high", "mean", "std", "count", "seed"))
    dist_node = node.require("distribution", "uniform or normal")
    dist = dist_node.string()
    if dist not in DISTRIBUTIONS:
        raise dist_node.error(f"unknown distribution '{dist}'"
                              f"{did_you_mean(dist, DISTRIBUTIONS, list_choices=True)}")
    a, b = (node.require(k, f"needed by a {dist} distribution").number() for k in DISTRIBUTIONS[dist])
    extra = [k for k in ("low", "high", "mean", "std") if k not in DISTRIBUTIONS[dist] and node.get(k) is not None]
    if extra:
        raise node.get(extra[0]).error(f"a {dist} distribution takes {' and '.join(DISTRIBUTIONS[dist])}")
    if dist == "uniform" and not b > a:
        raise node.error(f"high must be above low, got low {a:g}, high {b:g}")
    if dist == "normal" and not b > 0:
        raise node.get("std").error(f"std must be > 0, got {b:g}")
    seed = node.require("seed", "a seed makes the sweep repeatable").number(nonnegative=True)
    if seed != int(seed):
        raise node.get("seed").error(f"expected a whole number, got {seed:g}")
    rng = np.random.default_rng(int(seed))
    count = _count(node.require("count"))
    draws = rng.uniform(a, b, count) if dist == "uniform" else rng.normal(a, b, count)
    return tuple(float(x) for x in draws)


def _values(node: Node) -> tuple:
    given = [k for k in ("values", "linspace", "random") if node.get(k) is not None]
    if len(given) != 1:
        raise node.error("give exactly one of 'values' (a list), 'linspace' or 'random'")
    kind = given[0]
    if kind == "values":
        items = node.get("values").sequence("a list of values")
        if not items:
            raise node.get("values").error("the list of values is empty")
        return tuple(_scalar(item) for item in items)
    return _linspace(node.get(kind)) if kind == "linspace" else _random(node.get(kind))


def _parameter(node: Node, document: Node | None) -> Parameter:
    node.check_keys(("name", "path", "values", "linspace", "random"))
    path_node = node.require("path", "where the value goes, e.g. bodies.camera.mass")
    path_nodes = path_node.sequence() if isinstance(path_node.value, list) else [path_node]
    if not path_nodes:
        raise path_node.error("the list of paths is empty")
    paths = tuple(parse_path(p, document) for p in path_nodes)
    name = node.get("name").string() if node.get("name") is not None else paths[0].text
    if len(paths) > 1 and node.get("name") is None:
        raise node.error("a parameter with several paths needs a 'name'")
    return Parameter(name, paths, _values(node))


def _input_document(inputs) -> Node | None:
    if len(inputs) != 1:
        return None
    path = Path(inputs[0])
    return load_yaml(path) if path.suffix.lower() in (".yaml", ".yml") else None


def parse_sweep(node: Node, inputs, has_simulation: bool) -> SweepConfig:
    """The validated ``sweep:`` section; ``inputs`` are the pipeline's input files (exactly one)."""
    node.check_keys(("parameters", "combine", "record"))
    if len(inputs) != 1:
        raise node.error("a sweep varies one input: give 'input', not 'inputs'")
    document = _input_document(inputs)
    items = node.require("parameters", "a list of parameters").sequence("a list of parameters")
    if not items:
        raise node.get("parameters").error("the list of parameters is empty")
    parameters = tuple(_parameter(item, document) for item in items)
    names = [p.name for p in parameters]
    for item, p in zip(items, parameters):
        if names.count(p.name) > 1:
            raise item.error(f"two parameters are named '{p.name}'")
    combine = "grid"
    if node.get("combine") is not None:
        combine = node.get("combine").string()
        if combine not in ("grid", "zip"):
            raise node.get("combine").error(f"expected grid or zip, got '{combine}'")
    if combine == "zip" and len({len(p.values) for p in parameters}) > 1:
        raise node.error("combine: zip needs as many values for each parameter, got "
                         + ", ".join(f"{p.name}: {len(p.values)}" for p in parameters))
    record = DEFAULT_RECORD + (("simulation",) if has_simulation else ())
    if node.get("record") is not None:
        record = _record(node.get("record"), has_simulation)
    return SweepConfig(parameters, combine, record)


def _record(node: Node, has_simulation: bool) -> tuple[str, ...]:
    out = []
    for item in node.sequence(f"a list of: {', '.join(RECORDABLE)}"):
        name = item.string()
        if name not in RECORDABLE:
            raise item.error(f"unknown output '{name}'{did_you_mean(name, RECORDABLE, list_choices=True)}")
        if name == "simulation" and not has_simulation:
            raise item.error("recording simulation metrics needs outputs.simulation")
        out.append(name)
    return tuple(out)


def parse_executor(node: Node | None) -> ExecutorConfig:
    """The validated ``executor:`` section (default: local processes, one per core)."""
    if node is None:
        return ExecutorConfig()
    node.check_keys(("kind", "scheduler", "workers"))
    kind = node.require("kind", "local or dask").string()
    if kind not in EXECUTORS:
        hint = did_you_mean(kind, EXECUTORS, list_choices=True)
        raise node.get("kind").error(f"unknown executor '{kind}'{hint}")
    scheduler = node.get("scheduler").string() if node.get("scheduler") is not None else None
    if scheduler is not None and kind != "dask":
        raise node.get("scheduler").error("a scheduler address needs kind: dask")
    workers = _count(node.get("workers")) if node.get("workers") is not None else None
    return ExecutorConfig(kind, scheduler, workers)
