"""Reading XML elements, shared by the URDF, SDFormat and MJCF readers.

The helpers ``required``, ``attr_floats``, ``text_floats`` ... read attributes or
element text and raise InputError naming the file, the line of the element
(:mod:`parsers.xmltree`, which parses the files) and the key
(``joint[elbow].origin@xyz``).  Every number must be finite and within the
``magnitude`` limit (:mod:`parsers.limits`).  Also: writing XML, and choosing
the reader of a ``.xml`` file by its root element.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from itertools import chain
from xml.parsers import expat

import numpy as np

from . import limits
from .errors import InputError
from .xmltree import file_of, line_of, parse_expat


def error(el: ET.Element, message: str, key: str | None = None) -> InputError:
    """An InputError located at element ``el``."""
    return InputError(message, file=file_of(el), line=line_of(el), key=key)


def required(el: ET.Element, attr: str, key: str | None = None) -> str:
    """The value of a required attribute; InputError at ``el``'s line when missing."""
    value = el.get(attr)
    if value is None:
        raise error(el, f"<{el.tag}> needs attribute {attr!r}", key)
    return value


def child_text(el: ET.Element, tag: str) -> str | None:
    """Stripped text of the first child ``tag``, or None."""
    c = el.find(tag)
    if c is None or c.text is None:
        return None
    return c.text.strip()


def parse_floats(text: str, el: ET.Element, what: str, n: int | tuple[int, ...] | None = None,
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


def _floats_error(text: str, el: ET.Element, what: str, n, key) -> InputError:
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


def attr_floats(el: ET.Element, attr: str, n=None, default=None, key: str | None = None):
    """Attribute ``attr`` of ``el`` as a float array (or ``default`` when absent)."""
    vals = attr_float_list(el, attr, n, default, key)
    return None if vals is None else np.array(vals, dtype=float)


def attr_float_list(el: ET.Element, attr: str, n=None, default=None, key: str | None = None):
    """:func:`attr_floats` as a list of floats (``default`` as given when absent)."""
    value = el.get(attr)
    if value is None:
        return default
    vals = _checked_floats(value, n)
    if vals is None:
        raise _floats_error(value, el, f"{el.tag}@{attr}", n, key)
    return vals


def attr_float(el: ET.Element, attr: str, default=None, key: str | None = None):
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


def attr_float_values(el: ET.Element, attrs) -> list[float] | None:
    """Attributes ``attrs`` of ``el``, each one finite number within ``magnitude``, as floats;
    None when one is missing or is not such a number (read them one by one with
    :func:`attr_float` for the message).  One check for several numbers."""
    try:
        vals = list(map(float, map(el.get, attrs)))  # float(None): TypeError; float("1 2"): ValueError
    except (TypeError, ValueError):
        return None
    return vals if _within_magnitude(vals) else None


def float_rows(texts, width: int) -> np.ndarray | None:
    """The numbers of several texts, each exactly ``width`` finite numbers within ``magnitude``,
    as one read-only (len(texts), width) array; None when one text is not such (or a text is
    None): then read them one by one (:func:`attr_floats`) for the message.  One conversion for
    a whole document's origins instead of one per element."""
    try:
        split = list(map(str.split, texts))
        if set(map(len, split)) != {width}:
            return None
        vals = np.array(list(map(float, chain.from_iterable(split))), dtype=float).reshape(-1, width)
    except (TypeError, ValueError):
        return None
    if not np.abs(vals).max() <= limits.active().magnitude:  # nan and inf fail too
        return None
    vals.setflags(write=False)
    return vals


def text_floats(el: ET.Element, n=None, key: str | None = None) -> np.ndarray:
    """The text of ``el`` as a float array."""
    return parse_floats(el.text or "", el, f"<{el.tag}>", n, key)


def text_float(el: ET.Element, key: str | None = None) -> float:
    return float(text_floats(el, 1, key)[0])


def text_bool(el: ET.Element, key: str | None = None) -> bool:
    t = (el.text or "").strip().lower()
    if t in ("1", "true"):
        return True
    if t in ("0", "false"):
        return False
    raise error(el, f"<{el.tag}>: expected true/false, got {t!r}", key)


def attr_bool(el: ET.Element, attr: str, default: bool, key: str | None = None) -> bool:
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
XML_ROOTS = {"robot": "mbcompose.parsers.urdf.reader:read_urdf", "sdf": "mbcompose.parsers.sdf.reader:read_sdf", "mujoco": "mbcompose.parsers.mjcf.reader:read_mjcf"}


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
                parse_expat(parser, chunk, not chunk, str(path))
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
