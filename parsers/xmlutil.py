"""XML with line numbers, shared by the URDF, SDFormat and MJCF readers.

The tree is built by :class:`xml.etree.ElementTree.TreeBuilder` fed from an
expat parser, so every element is an ``ElementTree`` element (``find``,
``findall``, ``iter``, ``get`` work as usual) that also carries ``line`` (the
1-based line of its start tag) and ``file``.  Syntax errors become
:class:`~parsers.errors.InputError` with expat's line number.

The helpers ``floats``, ``floatval``, ``required`` ... read attributes or
element text and raise InputError naming the file, the line of the element and
the key (``joint[elbow].origin@xyz``).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

import numpy as np

from .errors import InputError


class Element(ET.Element):
    """An ElementTree element that knows its file and the line of its start tag."""

    line: int | None = None
    file: str | None = None


def parse_xml(path=None, text: str | None = None) -> Element:
    """Parse an XML file (or ``text``) into a tree of :class:`Element` with line numbers.

    Raises InputError (with the line) for a syntax error or an unreadable file.
    """
    name = None if path is None else str(path)
    if text is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read file: {exc.strerror}", file=name) from None
    else:
        data = text.encode("utf-8") if isinstance(text, str) else text
    builder = ET.TreeBuilder(element_factory=Element)
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def start(tag, attrs):
        el = builder.start(tag, attrs)
        el.line = parser.CurrentLineNumber
        el.file = name

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        msg = expat.ErrorString(exc.code)
        raise InputError(f"XML syntax error: {msg} (column {exc.offset + 1})", file=name,
                         line=exc.lineno) from None
    root = builder.close()
    return root


def error(el: Element, message: str, key: str | None = None) -> InputError:
    """An InputError located at element ``el``."""
    return InputError(message, file=getattr(el, "file", None), line=getattr(el, "line", None), key=key)


def required(el: Element, attr: str, key: str | None = None) -> str:
    """The value of a required attribute; InputError at ``el``'s line when missing."""
    value = el.get(attr)
    if value is None:
        raise error(el, f"<{el.tag}> needs attribute {attr!r}", key)
    return value


def child_text(el: Element, tag: str) -> str | None:
    """Stripped text of the first child ``tag``, or None."""
    c = el.find(tag)
    if c is None or c.text is None:
        return None
    return c.text.strip()


def parse_floats(text: str, el: Element, what: str, n: int | tuple[int, ...] | None = None,
                 key: str | None = None) -> np.ndarray:
    """Whitespace-separated numbers in ``text`` (what: the attribute or tag, for messages).

    n : the accepted count(s); None accepts any count >= 1.
    """
    parts = text.split()
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise error(el, f"{what}: expected numbers, got {text.strip()!r}", key) from None
    if not all(math.isfinite(v) for v in vals):
        raise error(el, f"{what}: values must be finite, got {text.strip()!r}", key)
    counts = (n,) if isinstance(n, int) else n
    if counts is not None and len(vals) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise error(el, f"{what}: expected {want} numbers, got {len(vals)} ({text.strip()!r})", key)
    if counts is None and not vals:
        raise error(el, f"{what}: expected numbers, got nothing", key)
    return np.array(vals, dtype=float)


def attr_floats(el: Element, attr: str, n=None, default=None, key: str | None = None):
    """Attribute ``attr`` of ``el`` as a float array (or ``default`` when absent)."""
    value = el.get(attr)
    if value is None:
        return None if default is None else np.array(default, dtype=float)
    return parse_floats(value, el, f"{el.tag}@{attr}", n, key)


def attr_float(el: Element, attr: str, default=None, key: str | None = None):
    """Attribute ``attr`` as one float (or ``default`` when absent)."""
    value = el.get(attr)
    if value is None:
        return default
    return float(parse_floats(value, el, f"{el.tag}@{attr}", 1, key)[0])


def text_floats(el: Element, n=None, key: str | None = None) -> np.ndarray:
    """The text of ``el`` as a float array."""
    return parse_floats(el.text or "", el, f"<{el.tag}>", n, key)


def text_float(el: Element, key: str | None = None) -> float:
    return float(text_floats(el, 1, key)[0])


def text_bool(el: Element, key: str | None = None) -> bool:
    t = (el.text or "").strip().lower()
    if t in ("1", "true"):
        return True
    if t in ("0", "false"):
        return False
    raise error(el, f"<{el.tag}>: expected true/false, got {t!r}", key)


def attr_bool(el: Element, attr: str, default: bool, key: str | None = None) -> bool:
    v = el.get(attr)
    if v is None:
        return default
    t = v.strip().lower()
    if t in ("1", "true"):
        return True
    if t in ("0", "false"):
        return False
    raise error(el, f"{el.tag}@{attr}: expected true/false, got {v!r}", key)


def write_xml(root: ET.Element, path) -> None:
    """Write an ElementTree element, indented, with an XML declaration."""
    tree = ET.ElementTree(root)
    ET.indent(tree, space="  ")
    tree.write(str(path), encoding="utf-8", xml_declaration=True)


def fmt(values) -> str:
    """Numbers as text with full precision (repr of floats, round-trips exactly)."""
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    return " ".join(repr(float(v)) if v != 0 else "0" for v in arr)


#: root element -> "module:function" of the reader for ``.xml`` files.
XML_ROOTS = {"robot": "mbcompose.parsers.urdf:read_urdf", "sdf": "mbcompose.parsers.sdf:read_sdf", "mujoco": "mbcompose.parsers.mjcf:read_mjcf"}


def xml_root_tag(path) -> tuple[str, int | None]:
    """The tag and line of the root element of an XML file (reads only up to it)."""
    found = []
    parser = expat.ParserCreate()

    def start(tag, attrs):
        found.append((tag, parser.CurrentLineNumber))
        raise StopIteration

    parser.StartElementHandler = start
    try:
        with open(path, "rb") as fh:
            while not found:
                chunk = fh.read(65536)
                parser.Parse(chunk, not chunk)
                if not chunk:
                    break
    except StopIteration:
        pass
    except expat.ExpatError as exc:
        raise InputError(f"XML syntax error: {expat.ErrorString(exc.code)} (column {exc.offset + 1})",
                         file=str(path), line=exc.lineno) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", file=str(path)) from None
    if not found:
        raise InputError("no root element", file=str(path))
    return found[0]


def read_xml(path, **options):
    """Read a ``.xml`` file with the reader its root element asks for.

    ``<robot>``: URDF, ``<sdf>``: SDFormat, ``<mujoco>``: MJCF.
    """
    import importlib

    tag, line = xml_root_tag(path)
    if tag not in XML_ROOTS:
        raise InputError(f"root element <{tag}> is not <robot> (URDF), <sdf> (SDFormat) or "
                         "<mujoco> (MJCF)", file=str(path), line=line)
    module, func = XML_ROOTS[tag].split(":")
    return getattr(importlib.import_module(module), func)(path, **options)
