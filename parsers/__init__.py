"""Readers that turn input files into an :class:`Assembly`.

One reader per format, chosen by file suffix (:data:`READERS`).  Every reader
returns plain data in SI units and raises :class:`InputError` for bad input.
"""

from __future__ import annotations

import importlib
from pathlib import Path, PurePath

from .assembly import (AXIAL_JOINTS, GROUND, JOINT_TYPES, Assembly, Body, Coupling, Frame, Geometry, Joint, Limits,
                       MassProperties, Motor, Pose, Source, SpringDamper, ValueUnits)
from .errors import InputError
from .limits import check_input_file
from .units import warn_scale

#: file suffix -> "module:function"; the function is ``f(path, **options) -> Assembly``.
READERS: dict[str, str] = {
    ".yaml": "mbcompose.parsers.yaml:read_yaml",
    ".yml": "mbcompose.parsers.yaml:read_yaml",
    ".urdf": "mbcompose.parsers.urdf:read_urdf",
    ".xacro": "mbcompose.parsers.urdf.xacro:read_xacro",
    ".xml": "mbcompose.parsers.xml:read_xml",
    ".mjcf": "mbcompose.parsers.mjcf:read_mjcf",
    ".sdf": "mbcompose.parsers.sdf:read_sdf",
    ".world": "mbcompose.parsers.sdf:read_sdf",
    ".step": "mbcompose.parsers.step:read_step",
    ".stp": "mbcompose.parsers.step:read_step",
}


def input_suffix(path) -> str:
    """``path``'s suffix in lower case (``robot.URDF`` -> ``.urdf``): what chooses the reader and its options."""
    return (path if isinstance(path, PurePath) else PurePath(path)).suffix.lower()


def reader_for(path) -> "callable":
    """The reader function registered for ``path``'s suffix; InputError if none."""
    suffix = input_suffix(path)
    if suffix not in READERS:
        known = ", ".join(sorted(READERS))
        raise InputError(f"no reader for suffix {suffix!r} (known: {known})", file=str(path))
    module, func = READERS[suffix].split(":")
    return getattr(importlib.import_module(module), func)


def input_stem(path) -> str:
    """The model's name from its file: the name without its suffix, ``robot.urdf.xacro`` -> ``robot``."""
    p = PurePath(path)
    stem = p.stem
    return PurePath(stem).stem if p.suffix.lower() == ".xacro" and stem.lower().endswith(".urdf") else stem


def read_assembly(path, **options) -> Assembly:
    """Read any supported file into an Assembly (reader chosen by suffix)."""
    p = Path(path)
    check_input_file(p)
    assembly = reader_for(p)(p, **options)
    warn_scale(assembly, p)
    return assembly


__all__ = ["AXIAL_JOINTS", "GROUND", "JOINT_TYPES", "Assembly", "Body", "Coupling", "Frame", "Geometry",
           "InputError", "Joint", "Limits", "MassProperties", "Motor", "Pose", "READERS", "Source",
           "SpringDamper", "ValueUnits", "input_stem", "input_suffix", "read_assembly", "reader_for"]
