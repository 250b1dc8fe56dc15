"""XML with line numbers, shared by the URDF, SDFormat and MJCF readers.

The tree is built by :class:`xml.etree.ElementTree.TreeBuilder` fed from an
expat parser, so every element is an ``ElementTree`` element (``find``,
``findall``, ``iter``, ``get`` work as usual) that also carries ``line`` (the
1-based line of its start tag) and ``file``.  Syntax errors become
:class:`~parsers.errors.InputError` with expat's line number.

The helpers ``floats``, ``floatval``, ``required`` ... read attributes or
element text and raise InputError naming the file, the line of the element and
the key (``joint[elbow].origin@xyz``).  Every number must be finite and within
the ``magnitude`` limit; element nesting is bounded by ``nesting_depth`` and the
file is read only if it is a regular file within ``input_bytes``
(:mod:`parsers.limits`).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from . import limits
from .errors import InputError
from .gc_pause import paused_gc


class Element(ET.Element):
    """An ElementTree element that knows its file and the line of its start tag (``line``,
    ``file``: set on every element the parsers here make; slots, no ``__dict__`` per element)."""

    __slots__ = ("line", "file")


def parse_xml(path=None, text: str | None = None) -> Element:
    """Parse an XML file (or ``text``) into a tree of :class:`Element` with line numbers.

    Raises InputError (with the line) for a syntax error, an element nested deeper
    than ``nesting_depth`` or an unreadable file.

    Two ways to the same tree: :func:`_parse_fast` lets expat call the C
    ``TreeBuilder`` directly and takes the lines from a scan of the start tags;
    :func:`_parse_tracked` reads ``CurrentLineNumber`` in a Python callback per
    element.  The fast one is tried first; anything it cannot map exactly (a
    DOCTYPE, whose entities may expand into elements; another encoding than
    UTF-8; a syntax error; too deep a nesting) is parsed by the tracked one,
    which also makes the error messages.
    """
    name = None if path is None else str(path)
    if text is None:
        data = limits.read_input_bytes(path)
    else:
        data = text.encode("utf-8") if isinstance(text, str) else text
    data = _declaration_first(data)
    root = _parse_fast(data, name)
    return root if root is not None else _parse_tracked(data, name)


#: what the fast path steps over: comments, CDATA, processing instructions
_SKIPPED = re.compile(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>", re.S)
_UTF8_NAMES = (b"utf-8", b"utf8", b"us-ascii", b"ascii")
_ENCODING = re.compile(rb"^<\?xml[^>]*?encoding\s*=\s*[\"']([^\"']*)[\"']", re.I)


def _parse_fast(data: bytes, name: str | None) -> Element | None:
    """The tree with lines, or None when this way cannot be sure of them (see :func:`parse_xml`).

    Outside comments, CDATA and processing instructions every ``<`` of a
    well-formed document without DOCTYPE opens a start or an end tag, so the
    n-th start tag of the text is the n-th element in document order
    (:func:`_start_tags`).  That needs no comparison of names: a ``/>`` that
    closes no tag (in an attribute value or in text) makes the closers one more
    than the start tags, which :func:`_start_tags` refuses, and the number of
    start tags is compared with the number of elements.
    """
    if b"<!DOCTYPE" in data or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return None
    enc = _ENCODING.match(data)
    if enc is not None and enc.group(1).lower() not in _UTF8_NAMES:
        return None
    lines = _start_tags(data, limits.active().nesting_depth)
    if lines is None:
        return None
    builder = ET.TreeBuilder(element_factory=Element)
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    with paused_gc():
        try:
            parser.Parse(data, True)
        except (expat.ExpatError, LookupError, ValueError):
            return None
        root = builder.close()
        elements = list(root.iter())
        if len(lines) != len(elements):
            return None
        for el, line in zip(elements, lines):
            el.line = line
            el.file = name
    return root


def _start_tags(data: bytes, max_depth: int) -> list[int] | None:
    """1-based line of every start tag in document order, from the positions of ``<`` and ``/>``
    outside comments, CDATA and processing instructions (numpy, no Python loop per tag).

    None when an element is nested deeper than ``max_depth`` (the root has depth 1),
    or when the closers do not add up to one per start tag (a ``/>`` inside an
    attribute value or in text; or not well-formed): the caller then parses the slow way.
    """
    text = np.frombuffer(data, dtype=np.uint8)
    spans = np.array([m.span() for m in _SKIPPED.finditer(data)] if b"<!" in data or b"<?" in data else [],
                     dtype=np.int64).reshape(-1, 2)

    def outside(pos):
        if not len(spans):
            return pos
        k = np.searchsorted(spans[:, 0], pos, side="right") - 1
        return pos[(k < 0) | (pos >= spans[np.maximum(k, 0), 1])]

    opens = outside(np.flatnonzero(text[:-1] == 60))  # "<"
    after = text[opens + 1]
    if ((after == 33) | (after == 63)).any():  # "<!" or "<?" left: a DOCTYPE part or not well-formed
        return None
    is_end = after == 47  # "</"
    starts, n_ends = opens[~is_end], int(np.count_nonzero(is_end))
    self_closing = outside(np.flatnonzero((text[:-1] == 47) & (text[1:] == 62)))  # "/>"
    if len(self_closing) + n_ends != len(starts):
        return None
    if len(starts) > max_depth and _max_depth(starts, opens[is_end], self_closing) > max_depth:
        return None
    newlines = np.flatnonzero(text == 10)
    return (np.searchsorted(newlines, starts) + 1).tolist()


def _max_depth(starts, ends, self_closing) -> int:
    """The deepest nesting of elements, from the positions of their start tags and closers."""
    events = np.concatenate([starts, ends, self_closing])
    steps = np.concatenate([np.ones(len(starts), np.int64), -np.ones(len(events) - len(starts), np.int64)])
    order = np.argsort(events, kind="stable")
    depth = np.cumsum(steps[order])
    return int(depth[steps[order] > 0].max())


def _parse_tracked(data: bytes, name: str | None) -> Element:
    """The tree with lines from expat's ``CurrentLineNumber`` (a Python callback per element)."""
    builder = ET.TreeBuilder(element_factory=Element)
    parser = expat.ParserCreate()
    parser.buffer_text = True
    max_depth, depth = limits.active().nesting_depth, [0]

    def start(tag, attrs):
        depth[0] += 1
        if depth[0] > max_depth:
            raise InputError(limits.exceeded("element nesting depth", depth[0], "nesting_depth"), file=name,
                             line=parser.CurrentLineNumber)
        el = builder.start(tag, attrs)
        el.line = parser.CurrentLineNumber
        el.file = name

    def end(tag):
        depth[0] -= 1
        builder.end(tag)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    _parse_expat(parser, data, True, name)
    return builder.close()


def _declaration_first(data: bytes) -> bytes:
    """Whitespace before the XML declaration moved after it (lines kept), as tinyxml2 and lxml accept it."""
    body = data.lstrip()
    if len(body) == len(data) or not body.startswith(b"<?xml"):
        return data
    end = body.find(b"?>")
    if end < 0:
        return data
    newlines = data[:len(data) - len(body)].count(b"\n")
    return body[:end + 2] + b"\n" * newlines + body[end + 2:]


def _parse_expat(parser, data: bytes, final: bool, name: str | None) -> None:
    """``parser.Parse`` with expat's errors and unknown encodings as InputError."""
    try:
        parser.Parse(data, final)
    except expat.ExpatError as exc:
        msg = expat.ErrorString(exc.code)
        raise InputError(f"XML syntax error: {msg} (column {exc.offset + 1})", file=name,
                         line=exc.lineno) from None
    except (LookupError, ValueError) as exc:  # encoding="..." that Python does not know
        raise InputError(f"XML declaration names an unsupported encoding ({exc})", file=name, line=1) from None


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
    vals = _checked_floats(text, n)
    if vals is None:
        raise _floats_error(text, el, what, n, key)
    return np.array(vals, dtype=float)


def _checked_floats(text: str, n) -> list[float] | None:
    """The numbers of ``text`` when they are all finite, within ``magnitude`` and as many as
    ``n`` asks (the common case, checked without building messages); else None."""
    try:
        vals = list(map(float, text.split()))
    except ValueError:
        return None
    count = len(vals)
    if not ((count >= 1) if n is None else (count == n) if type(n) is int else (count in n)):
        return None
    return vals if _within_magnitude(vals) else None


def _within_magnitude(vals) -> bool:
    """True when every float of ``vals`` is finite and within ``magnitude``.  The sum of the
    absolute values bounds each of them (rounding is monotone) and is nan or inf when one is:
    one comparison settles the common case; only a sum above the limit looks at each value."""
    limit = limits.active().magnitude
    return sum(map(abs, vals)) <= limit or all(map(limit.__ge__, map(abs, vals)))


def _floats_error(text: str, el: Element, what: str, n, key) -> InputError:
    """The InputError for numbers :func:`_checked_floats` refused, naming the first problem."""
    try:
        vals = [float(p) for p in text.split()]
    except ValueError:
        return error(el, f"{what}: expected numbers, got {_short(text)}", key)
    if not all(map(math.isfinite, vals)):
        return error(el, f"{what}: values must be finite, got {_short(text)}", key)
    too_big = next(filter(None, (limits.check_magnitude(v, what) for v in vals)), None)
    if too_big:
        return error(el, too_big, key)
    counts = (n,) if isinstance(n, int) else n
    if counts is not None:
        want = " or ".join(str(c) for c in counts)
        return error(el, f"{what}: expected {want} numbers, got {len(vals)} ({_short(text)})", key)
    return error(el, f"{what}: expected numbers, got nothing", key)


def _short(text: str, width: int = 40) -> str:
    """repr of stripped ``text`` cut to ``width`` characters (messages never echo a whole file)."""
    t = repr(text.strip())
    return t if len(t) <= width else t[:width - 3] + "..."


def attr_floats(el: Element, attr: str, n=None, default=None, key: str | None = None):
    """Attribute ``attr`` of ``el`` as a float array (or ``default`` when absent)."""
    vals = attr_float_list(el, attr, n, default, key)
    return None if vals is None else np.array(vals, dtype=float)


def attr_float_list(el: Element, attr: str, n=None, default=None, key: str | None = None):
    """:func:`attr_floats` as a list of floats (``default`` as given when absent)."""
    value = el.get(attr)
    if value is None:
        return default
    vals = _checked_floats(value, n)
    if vals is None:
        raise _floats_error(value, el, f"{el.tag}@{attr}", n, key)
    return vals


def attr_float(el: Element, attr: str, default=None, key: str | None = None):
    """Attribute ``attr`` as one float (or ``default`` when absent)."""
    value = el.get(attr)
    if value is None:
        return default
    try:
        v = float(value)  # as float(text.split()[0]) for one number; "1 2" raises
    except ValueError:
        v = None
    if v is None or not abs(v) <= limits.active().magnitude:
        raise _floats_error(value, el, f"{el.tag}@{attr}", 1, key)
    return v


def attr_float_values(el: Element, attrs) -> list[float] | None:
    """Attributes ``attrs`` of ``el``, each one finite number within ``magnitude``, as floats;
    None when one is missing or is not such a number (read them one by one with
    :func:`attr_float` for the message).  One check for several numbers."""
    try:
        vals = list(map(float, map(el.get, attrs)))  # float(None): TypeError; float("1 2"): ValueError
    except (TypeError, ValueError):
        return None
    return vals if _within_magnitude(vals) else None


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
    limits.check_input_file(path)
    try:
        with open(path, "rb") as fh:
            while not found:
                chunk = fh.read(65536)
                _parse_expat(parser, chunk, not chunk, str(path))
                if not chunk:
                    break
    except StopIteration:
        pass
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
