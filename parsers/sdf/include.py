"""SDFormat ``<include>``: ``model://`` URIs over the search paths gz-sim uses, ``model.config``, overrides.

Search (the first folder that holds ``NAME`` wins), for ``<uri>model://NAME</uri>``:

1. the folders given by the caller (``model_paths``; the CLI's ``--model-path DIR``);
2. the folders in ``$GZ_SIM_RESOURCE_PATH``, ``$IGN_GAZEBO_RESOURCE_PATH``,
   ``$SDF_PATH`` and ``$GAZEBO_MODEL_PATH`` (``os.pathsep``-separated, in that order);
3. the including file's folder.

``DIR/NAME`` is a model folder: its ``model.config`` names the model file
(``<sdf version="...">file.sdf</sdf>``; the highest version listed wins); a
folder without ``model.config`` uses ``model.sdf``.  A ``<uri>`` may also be a
path (absolute, ``file://``, or relative to the including file) to a model
folder or to an SDFormat file.  Network URIs (Fuel, ``http(s)://``) are not
fetched: an InputError says so.

The include's ``<name>``, ``<pose>``, ``<static>`` and ``<placement_frame>``
override the included model's.  ``<include merge="true">`` (SDFormat 1.9) is
refused.  A world's include of a light or an actor (``model://sun``) brings no
body.  The included file's ``<sdf version>`` governs its own frame semantics.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import FOREIGN_TEXT
from ..xml import attr_bool, child_text, error, file_of, parse_xml, text_bool

log = logging.getLogger(__name__)
log.addFilter(FOREIGN_TEXT)  # (warnings about a file outside the model folder say where, not what)

ENV_PATHS = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH")


@dataclass
class ModelSpec:
    """One ``<model>`` as placed by its parent: inline, or through an ``<include>``.

    el : the ``<model>`` element.
    name : the model's name (an include's ``<name>`` overrides it).
    placed_by : the element whose ``<pose>`` places the model (the include, when it has a pose).
    static : the ``<static>`` value in force.
    placement : the ``placement_frame`` (the include's overrides the model's), or None.
    version : (major, minor) of the file holding ``el``.
    base_dir : folder of that file (mesh and relative URIs start there).
    """

    el: object
    name: str
    placed_by: object
    static: bool
    placement: str | None
    version: tuple[int, int]
    base_dir: Path
    stack: tuple = ()


def sdf_version(el) -> tuple[int, int]:
    """``<sdf version="MAJOR.MINOR">`` as a tuple."""
    v = el.get("version")
    if v is None:
        raise error(el, "<sdf> needs attribute 'version'")
    try:
        major, minor = (int(x) for x in v.strip().split(".")[:2])
    except ValueError:
        raise error(el, f"<sdf> version {v!r} is not MAJOR.MINOR") from None
    return major, minor


def search_paths(model_paths=()) -> list[Path]:
    """The folders ``model://`` URIs are looked up in (module docstring, items 1 and 2)."""
    out = [Path(p) for p in model_paths]
    for var in ENV_PATHS:
        out += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return out


def inline_spec(el, version, base_dir) -> ModelSpec:
    """A ``<model>`` written in place."""
    name = el.get("name")
    if not name:
        raise error(el, "<model> needs attribute 'name'")
    st = el.find("static")
    return ModelSpec(el, name, el, st is not None and text_bool(st), el.get("placement_frame"), version, base_dir)


def include_spec(inc, base_dir: Path, model_paths, stack=(), in_world=False) -> ModelSpec | None:
    """The model an ``<include>`` brings in, with the include's overrides applied.

    In a ``<world>`` (``in_world``), a file with no ``<model>`` but a ``<light>`` or an
    ``<actor>`` (``model://sun``) brings no body: None.
    """
    if attr_bool(inc, "merge", False):
        raise error(inc, "<include merge='true'> (SDFormat 1.9) is not supported; include without merge")
    uri = child_text(inc, "uri")
    if not uri:
        raise error(inc, "<include> needs <uri>")
    path = _model_file(uri, inc, base_dir, model_paths)
    key = str(path.resolve())
    if key in stack:
        raise error(inc, f"<include> of {uri!r} includes itself: {' -> '.join(stack + (key,))}")
    root = parse_xml(path)
    if root.tag != "sdf":
        raise error(root, f"included file's root element is <{root.tag}>, expected <sdf>")
    models = root.findall("model")
    if in_world and not models and (root.find("light") is not None or root.find("actor") is not None):
        log.info("%s:%s: <include> of %r brings a light or an actor, no body", file_of(inc), inc.sourceline, uri)
        return None
    if len(models) != 1:
        raise error(root, f"an included file must hold exactly one <model>, found {len(models)}")
    spec = inline_spec(models[0], sdf_version(root), path.resolve().parent)
    spec.stack = stack + (key,)
    name, st = child_text(inc, "name"), inc.find("static")
    if name:
        spec.name = name
    if inc.find("pose") is not None:
        spec.placed_by = inc
    if st is not None:
        spec.static = text_bool(st)
    if inc.find("placement_frame") is not None:
        spec.placement = child_text(inc, "placement_frame")
    return spec


def _model_file(uri: str, inc, base_dir: Path, model_paths) -> Path:
    """The SDFormat file a ``<uri>`` names (module docstring)."""
    if "://" in uri and not uri.startswith(("model://", "file://")):
        raise error(inc.find("uri"), f"<include> URI {uri!r} is not fetched (network and Fuel URIs are not "
                                     "read); download the model and add its folder with --model-path")
    if uri.startswith("model://"):
        name, _, rel = uri[len("model://"):].partition("/")
        folders = search_paths(model_paths) + [base_dir]
        for d in folders:
            target = d / name / rel if rel else d / name
            if target.exists():
                return _in_folder(target, inc)
        raise error(inc.find("uri"), f"<include>: model {name!r} not found in the model search path "
                                     f"({', '.join(map(str, folders))}); add its parent folder with "
                                     f"--model-path or ${ENV_PATHS[0]}")
    target = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
    target = target if target.is_absolute() else base_dir / target
    if not target.exists():
        raise error(inc.find("uri"), f"<include>: {uri!r} not found ({target})")
    return _in_folder(target, inc)


def _in_folder(target: Path, inc) -> Path:
    """``target`` itself when a file; in a model folder, the file its ``model.config`` names."""
    if target.is_file():
        return target
    config = target / "model.config"
    if not config.is_file():
        if (target / "model.sdf").is_file():
            return target / "model.sdf"
        raise error(inc.find("uri"), f"<include>: model folder {target} has neither model.config nor model.sdf")
    root = parse_xml(config)
    best, best_v = None, None
    for s in root.findall("sdf"):
        v = tuple(int(x) for x in (s.get("version") or "0.0").split(".")[:2] if x.isdigit())
        if (s.text or "").strip() and (best_v is None or v > best_v):
            best, best_v = s, v
    if best is None:
        raise error(root, "model.config names no model file (<sdf version='...'>model.sdf</sdf>)")
    f = target / best.text.strip()
    if not f.is_file():
        raise error(best, f"model file {best.text.strip()!r} not found in {target}")
    return f
