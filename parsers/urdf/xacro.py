"""``.xacro`` files: expanded by the ``xacro`` package (the ``xacro`` extra), then read as URDF.

``xacro`` (PyPI, the same code ROS runs) does the macro language; this module gives it the
document's arguments (``$(arg NAME)``, :func:`read_xacro`'s ``xacro_args``) and answers its
``$(find PKG)`` from the same places a URDF's ``package://PKG`` meshes are looked up
(:mod:`parsers.urdf.geometry`: ``package_dirs``, ``$ROS_PACKAGE_PATH``, the folders above the file),
where ROS would ask its package index.  Errors of the expansion (a missing argument, an include
that is not there, a macro error) are one :class:`InputError` naming the file; errors in the
expanded URDF name the ``.xacro`` file and a line of the expanded document (``xacro FILE`` prints it).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager

from ..assembly import Assembly
from ..errors import InputError
from .geometry import MeshFiles, package_roots
from .reader import read_urdf

log = logging.getLogger(__name__)

#: what to install when the ``xacro`` package is missing
INSTALL_HINT = "pip install 'mbcompose[xacro]'"


def read_xacro(path, *, xacro_args=(), package_dirs=(), **urdf_options) -> Assembly:
    """Expand a ``.xacro`` file and read the URDF it gives.

    Parameters
    ----------
    path : str or Path
        The ``.xacro`` (or ``.urdf.xacro``) file; relative mesh paths start from its folder.
    xacro_args : mapping or sequence of (NAME, VALUE) pairs
        The document's ``<xacro:arg>`` values (``NAME:=VALUE`` on the ``xacro`` command line).
    package_dirs : as :func:`parsers.urdf.reader.read_urdf` (also used for ``$(find PKG)``).
    urdf_options : the other options of :func:`parsers.urdf.reader.read_urdf`.
    """
    text = expand_xacro(path, xacro_args, package_dirs)
    return read_urdf(path, package_dirs=package_dirs, text=text, **urdf_options)


def expand_xacro(path, xacro_args=(), package_dirs=()) -> str:
    """The URDF text ``xacro`` makes of ``path`` with ``xacro_args``; InputError for what it refuses."""
    xacro = _xacro_module(path)
    args = {str(k): str(v) for k, v in dict(xacro_args).items()}
    meshes = MeshFiles(package_dirs=package_dirs, document=str(path))
    try:
        with _finding_packages(meshes, path):
            doc = xacro.process_file(str(path), mappings=args)
    except InputError:
        raise
    except Exception as exc:  # xacro raises XacroException, NameError, XML errors, OSError ...
        raise InputError(f"xacro could not expand the file: {_message(exc)}", file=str(path)) from None
    return doc.toprettyxml(indent="  ")


def _xacro_module(path):
    try:
        import xacro
        import xacro.substitution_args  # noqa: F401  (the $(find) hook below)
    except ImportError:
        raise InputError(f"reading .xacro files needs the xacro package: {INSTALL_HINT}", file=str(path)) from None
    return xacro


@contextmanager
def _finding_packages(meshes: MeshFiles, path):
    """``$(find PKG)`` answered by :func:`find_package` while ``xacro`` runs (it asks ROS's
    ``ament_index`` otherwise, which a pip installation does not have)."""
    import xacro.substitution_args as substitution

    def find(pkg: str) -> str:
        folder = find_package(pkg, meshes)
        if folder is None:
            raise InputError(f"$(find {pkg}): package {pkg!r} not found{meshes.where_searched('package://' + pkg)}",
                             file=str(path))
        return folder

    saved = substitution._eval_find
    substitution._eval_find = find
    try:
        yield
    finally:
        substitution._eval_find = saved


def find_package(pkg: str, meshes: MeshFiles) -> str | None:
    """The folder of package ``pkg`` by the look-up order of ``package://`` URIs, or None."""
    for root in package_roots(pkg, meshes):
        if os.path.isdir(root):
            return os.path.normpath(root)
    return None


def _message(exc: Exception) -> str:
    """xacro's message in one line (an OSError's repeated ``[Errno ...]`` tail dropped)."""
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
    return text.split(" [Errno", 1)[0]

