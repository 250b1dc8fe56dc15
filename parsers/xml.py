"""XML for the URDF, SDFormat and MJCF readers: one parse with lines (lxml), and reading values.

:func:`parse_xml` reads a file (or a text) into an ``lxml.etree`` tree.  Every element
carries the line libxml2 read it on (``el.sourceline``: the line on which its start tag
ends, which for a start tag spread over several lines is its last) and the file it came
from (:func:`file_of`: the document's, or for elements MJCF splices in from another file,
that file, kept as ``xml:base`` as XInclude keeps it).  Comments and processing
instructions are dropped while parsing and whitespace-only text between elements is not
kept, so the readers iterate elements only.

What the parser may read is bounded (:mod:`parsers.limits`): the file must be a regular
file within ``input_bytes``; elements may nest no deeper than ``nesting_depth`` (libxml2
itself reads no deeper than 256 without ``huge_tree``); entities are never expanded and
nothing is fetched from the network (``resolve_entities=False``, ``no_network=True``), and
a document whose DOCTYPE declares entities, or that refers to one, is refused.  Errors are
:class:`~parsers.errors.InputError` with the file and the line; the words of a syntax
error are expat's (the standard library's parser, which read these files before lxml),
so that messages do not change with the parser.  Documents expat and tinyxml2 read and
libxml2 alone refuses are read as they read them: whitespace before the XML declaration,
a declared version other than 1.x, an encoding Python knows and libxml2 does not, an
undeclared namespace prefix (read as part of the name).

The helpers that read attributes or element text (``required``, ``attr_floats``,
``text_floats`` ...) raise InputError naming the file, the line and the key
(``joint[elbow].origin@xyz``); every number must be finite and within the ``magnitude``
limit.  Also: writing XML, and choosing the reader of a ``.xml`` file by its root element.
"""

from __future__ import annotations

import math
import re
import threading
import xml.etree.ElementTree as ET
from functools import lru_cache
from itertools import chain
from xml.parsers import expat

import numpy as np
from lxml import etree

from . import limits
from .errors import InputError

#: an lxml element (the type of every element :func:`parse_xml` returns)
Element = etree._Element

#: the attribute that names the file of an element spliced in from another document
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"

#: what the parser may do (module docstring): no entities, no network, no huge trees; no
#: comments, processing instructions or whitespace-only text in the tree; no table of ids
_PARSER_OPTIONS = dict(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                       remove_comments=True, remove_pis=True, remove_blank_text=True, collect_ids=False)

#: this thread's parser of :data:`_PARSER_OPTIONS` (made once: an lxml parser may parse many documents,
#: one at a time, in the thread that made it; making one costs as much as parsing a small file)
_THREAD = threading.local()


def _parser() -> etree.XMLParser:
    parser = getattr(_THREAD, "parser", None)
    if parser is None:
        parser = _THREAD.parser = etree.XMLParser(**_PARSER_OPTIONS)
    return parser


#: the deepest nesting libxml2 reads without ``huge_tree``
PARSER_MAX_DEPTH = 256


def parse_xml(path=None, text: str | bytes | None = None) -> Element:
    """The root element of an XML file (or of ``text``, which ``path`` then only names).

    Raises InputError (with the line) for a syntax error, an element nested deeper than
    ``nesting_depth``, entities, or a file that is not a regular file within ``input_bytes``.
    """
    name = None if path is None else str(path)
    if text is None:
        data = limits.read_input_bytes(path)
    else:
        data = text.encode("utf-8") if isinstance(text, str) else text
    root = _parsed(_prolog_as_read(data), name)
    _refuse_entities(root, data, name)
    _check_depth(root, name)
    return root


def _parsed(data: bytes, name: str | None) -> Element:
    """lxml's tree of ``data``.  (lxml reports the errors of its thread's log, which keeps those of earlier
    documents: it is cleared first, so that the errors are this document's.)"""
    etree.clear_error_log()
    try:
        return etree.fromstring(data, _parser(), base_url=name)
    except etree.XMLSyntaxError as exc:
        # (libxml2 logs every error it raises; the exception's own words if it did not)
        errors = list(exc.error_log) or [_Entry(str(exc), exc.lineno)]
    if all(e.domain == etree.ErrorDomains.NAMESPACE for e in errors):
        # undeclared prefixes only (no other error): the same tree, each prefix kept in its name
        return etree.fromstring(data, etree.XMLParser(recover=True, **_PARSER_OPTIONS), base_url=name)
    if any(e.type == etree.ErrorTypes.ERR_UNSUPPORTED_ENCODING for e in errors):
        utf8 = _as_utf8(data)
        if utf8 is not None:
            return _parsed(utf8, name)
    raise _parse_error(data, name, errors)


def line_of(el: Element) -> int | None:
    """The line of ``el``'s start tag (its last line when it spans several; None for an element
    no parsed file holds)."""
    return el.sourceline


def file_of(el: Element) -> str | None:
    """The file ``el`` was read from: the nearest ``xml:base`` of it and its ancestors (an element
    spliced in from another file), else its document's (None for text without a file name)."""
    e = el
    while e is not None:
        base = e.get(XML_BASE)
        if base is not None:
            return base
        e = e.getparent()
    return el.getroottree().docinfo.URL


def mark_file(el: Element, file: str | None) -> Element:
    """``el`` marked as read from ``file`` (``xml:base``), before it is moved or copied into
    another file's tree; returns ``el``."""
    if file is not None:
        el.set(XML_BASE, file)
    return el


def new_element(tag: str, attrib: dict, like: Element) -> Element:
    """A new element with the line and the file of ``like`` (a reader writes it in ``like``'s place)."""
    el = etree.Element(tag, attrib)
    el.sourceline = like.sourceline
    return mark_file(el, file_of(like))


class where:
    """``file:line`` of an element for a log message, formatted only when the message is written."""

    __slots__ = ("el",)

    def __init__(self, el: Element):
        self.el = el

    def __str__(self) -> str:
        return f"{file_of(self.el)}:{self.el.sourceline}"


def error(el: Element, message: str, key: str | None = None) -> InputError:
    """An InputError located at element ``el``."""
    return InputError(message, file=file_of(el), line=el.sourceline, key=key)


# ---------------------------------------------------------------------- limits and errors
@lru_cache(maxsize=8)
def _deeper_than(depth: int) -> etree.XPath:
    """The XPath of the first element at nesting depth ``depth + 1`` (the root has depth 1)."""
    return etree.XPath("(" + "/*" * (depth + 1) + ")[1]")


def _check_depth(root: Element, name: str | None) -> None:
    """InputError at the first element (in document order) nested deeper than ``nesting_depth``
    (one XPath in C; libxml2 refused anything deeper than :data:`PARSER_MAX_DEPTH` already)."""
    limit = limits.active().nesting_depth
    if limit >= PARSER_MAX_DEPTH:
        return
    found = _deeper_than(limit)(root)
    if found:
        raise InputError(limits.exceeded("element nesting depth", limit + 1, "nesting_depth"), file=name,
                         line=found[0].sourceline)


def _refuse_entities(root: Element, data: bytes, name: str | None) -> None:
    """InputError for a DOCTYPE that declares entities or a reference to an entity (never expanded)."""
    docinfo = root.getroottree().docinfo
    if not docinfo.doctype:
        return
    dtd = docinfo.internalDTD
    if (dtd is not None and next(dtd.iterentities(), None) is not None) or next(root.iter(etree.Entity), None) is not None:
        at = data.find(b"<!DOCTYPE")
        raise InputError("the DOCTYPE declares entities or the document refers to one: entities are not "
                         "expanded (expand them first)", file=name, line=data.count(b"\n", 0, at) + 1 if at >= 0 else 1)


class _Entry:
    """An error as libxml2's log holds it (``message``, ``line``, ``level``, ``domain``, ``type``)."""

    def __init__(self, message: str, line: int | None):
        self.message, self.line, self.level = message, line, etree.ErrorLevels.FATAL
        self.domain, self.type = etree.ErrorDomains.PARSER, None


class _TooDeep(Exception):
    def __init__(self, depth: int, line: int):
        super().__init__(depth, line)
        self.depth, self.line = depth, line


def _parse_error(data: bytes, name: str | None, errors) -> InputError:
    """The InputError for a document libxml2 refused (``errors``: its error log).  Worded by expat as
    before lxml read the files: the syntax error and its line, an unknown encoding, or the first
    element nested deeper than ``nesting_depth``; in libxml2's words when expat reads the text."""
    parser = expat.ParserCreate()
    max_depth, depth = limits.active().nesting_depth, [0]

    def start(tag, attrs):
        depth[0] += 1
        if depth[0] > max_depth:
            raise _TooDeep(depth[0], parser.CurrentLineNumber)

    def end(tag):
        depth[0] -= 1

    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(data, True)
    except _TooDeep as deep:
        return InputError(limits.exceeded("element nesting depth", deep.depth, "nesting_depth"), file=name,
                          line=deep.line)
    except expat.ExpatError as exc:
        return InputError(f"XML syntax error: {expat.ErrorString(exc.code)} (column {exc.offset + 1})", file=name,
                          line=exc.lineno)
    except (LookupError, ValueError) as exc:  # encoding="..." that Python does not know
        return InputError(f"XML declaration names an unsupported encoding ({exc})", file=name, line=1)
    first = next((e for e in errors if e.level >= etree.ErrorLevels.ERROR), errors[0])  # an error, not a warning
    if first.message.startswith("Excessive depth"):
        return InputError(f"element nesting depth exceeds {PARSER_MAX_DEPTH}, the most the XML parser reads",
                          file=name, line=first.line)
    return InputError(f"XML syntax error: {first.message}", file=name, line=first.line)


_DECLARATION = re.compile(rb"<\?xml[^>]*?\?>")
_VERSION = re.compile(rb"""(version\s*=\s*)(["'])(?!1\.)[^"']*\2""")
_ENCODING = re.compile(rb"""(encoding\s*=\s*)(["'])([^"']*)\2""")


def _prolog_as_read(data: bytes) -> bytes:
    """``data`` with its XML declaration as expat and tinyxml2 read it: whitespace before it moved
    after it (lines kept) and a version other than 1.x read as 1.0."""
    body = data if data.startswith(b"<?xml") else data.lstrip() if data[:1].isspace() else None
    decl = None if body is None else _DECLARATION.match(body)
    if decl is None:
        return data
    fixed = _VERSION.sub(rb'\g<1>"1.0"', decl.group())
    if body is data and fixed == decl.group():
        return data
    newlines = data.count(b"\n", 0, len(data) - len(body))
    return fixed + b"\n" * newlines + body[decl.end():]


def _as_utf8(data: bytes) -> bytes | None:
    """``data`` decoded by the Python codec its declaration names and encoded as UTF-8, its
    declaration saying so (same lines); None when Python does not know that encoding either."""
    decl = _DECLARATION.match(data)
    enc = None if decl is None else _ENCODING.search(decl.group())
    if enc is None:
        return None
    try:
        text = data.decode(enc.group(3).decode("ascii"))
    except (LookupError, UnicodeError, ValueError):
        return None
    return (decl.group()[:enc.start()] + enc.group(1) + b'"UTF-8"' + decl.group()[enc.end():]
            + text[len(decl.group()):].encode("utf-8"))


# ---------------------------------------------------------------------- values of elements
def first_children(el: Element) -> dict:
    """Tag -> the first child of ``el`` with that tag, from one pass over its children (lxml's ``find``
    parses its path on every call; a reader that asks for several children asks this once)."""
    out = {}
    for c in el:
        out.setdefault(c.tag, c)
    return out


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


def parse_float(text: str, el: Element, what: str, key: str | None = None) -> float:
    """The one number in ``text`` (:func:`parse_floats` with ``n=1``, as a float; no array)."""
    vals = _checked_floats(text, 1)
    if vals is None:
        raise _floats_error(text, el, what, 1, key)
    return vals[0]


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
    return float_values(map(el.get, attrs))


def float_values(texts) -> list[float] | None:
    """:func:`attr_float_values` of the attributes' texts ``texts`` (None: missing)."""
    try:
        vals = list(map(float, texts))  # float(None): TypeError; float("1 2"): ValueError
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
        vals = np.array(list(map(float, chain.from_iterable(split))), dtype=float)
    except (TypeError, ValueError):
        return None
    vals.shape = (-1, width)  # (in place: the array owns its data, and its rows are shared read-only)
    if not np.abs(vals).max() <= limits.active().magnitude:  # nan and inf fail too
        return None
    vals.setflags(write=False)
    return vals


def text_floats(el: Element, n=None, key: str | None = None) -> np.ndarray:
    """The text of ``el`` as a float array."""
    return parse_floats(el.text or "", el, f"<{el.tag}>", n, key)


def text_float(el: Element, key: str | None = None) -> float:
    """The text of ``el`` as one float."""
    return parse_float(el.text or "", el, f"<{el.tag}>", key)


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
XML_ROOTS = {"robot": "mbcompose.parsers.urdf.reader:read_urdf", "sdf": "mbcompose.parsers.sdf.reader:read_sdf",
             "mujoco": "mbcompose.parsers.mjcf.reader:read_mjcf"}


def xml_root_tag(path) -> tuple[str, int | None]:
    """The tag and line of the root element of an XML file (reads only up to it, with expat: a
    dispatch by the root, the file is parsed by the reader it names)."""
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
                parser.Parse(chunk, not chunk)
                if not chunk:
                    break
    except StopIteration:
        pass
    except expat.ExpatError as exc:
        raise InputError(f"XML syntax error: {expat.ErrorString(exc.code)} (column {exc.offset + 1})",
                         file=str(path), line=exc.lineno) from None
    except (LookupError, ValueError) as exc:  # encoding="..." that Python does not know
        raise InputError(f"XML declaration names an unsupported encoding ({exc})", file=str(path), line=1) from None
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
