"""XML trees with line numbers, shared by the URDF, SDFormat and MJCF readers.

Every element of a parsed file is an ``ElementTree`` element (``find``,
``findall``, ``iter``, ``get`` work as usual) whose file and start-tag line
(1-based) :func:`line_of` and :func:`file_of` give; every message of a reader
names them.  :func:`parse_xml` makes the tree one of two ways:

- **attached** (the default): each element is an :class:`Element` carrying
  ``line`` and ``file``.  Readers that edit the tree (MJCF's ``<include>``,
  ``<attach>``, ``<replicate>``) use it and give the elements they make a line.
- **on demand** (``on_demand_lines=True``): plain C elements, as expat and the C
  ``TreeBuilder`` make them, 2.5x faster to build; their lines are found from
  the text the first time one is asked (:class:`_Document`), which a file read
  without a warning never does.  The tree must not be edited.  The URDF reader
  uses it.  A :class:`~parsers.assembly.Source` keeps the element's place (the
  n-th ``<tag>`` under the root) and the document's bytes (:func:`line_refs`), not the tree, which goes
  when the reader is done (so that the collector does not scan it again and
  again); its line comes from the bytes parsed again, when first read.

Syntax errors become :class:`~parsers.errors.InputError` with expat's line number.

Element nesting is bounded by ``nesting_depth`` and the file is read only if
it is a regular file within ``input_bytes`` (:mod:`parsers.limits`).  The
helpers that read numbers and names from the elements are in :mod:`parsers.xml`.
"""

from __future__ import annotations

import re
import weakref
import xml.etree.ElementTree as ET
from functools import partial
from itertools import islice
from operator import attrgetter
from xml.parsers import expat

import numpy as np

from . import limits
from .errors import InputError
from .gc_pause import paused_gc


class Element(ET.Element):
    """An ElementTree element that knows its file and the line of its start tag (``line``,
    ``file``: set on every element of an attached tree; slots, no ``__dict__`` per element)."""

    __slots__ = ("line", "file")


def parse_xml(path=None, text: str | None = None, *, on_demand_lines: bool = False,
              text_of: tuple[str, ...] | None = None) -> ET.Element:
    """Parse an XML file (or ``text``) into a tree whose elements have lines (see the module docstring).

    Raises InputError (with the line) for a syntax error, an element nested deeper
    than ``nesting_depth`` or an unreadable file.

    text_of : with ``on_demand_lines``, the tags whose text the caller reads: a document
        where none of them can occur (no ``<tag`` in its UTF-8 bytes, no DOCTYPE) is built
        without character data, every element's ``text`` and ``tail`` None (a tenth faster
        to build and to free).  None keeps all text.

    Attached lines come one of two ways: :func:`_parse_fast` lets expat call the C
    ``TreeBuilder`` directly and takes the lines from a scan of the start tags;
    :func:`_parse_tracked` reads ``CurrentLineNumber`` in a Python callback per
    element.  The fast one is tried first; anything it cannot map exactly (a
    DOCTYPE, whose entities may expand into elements; another encoding than
    UTF-8; a syntax error; too deep a nesting) is parsed by the tracked one,
    which also makes the error messages.  On-demand lines are mapped the same
    way, when first asked (:meth:`_Document.line`).
    """
    name = None if path is None else str(path)
    if text is None:
        data = limits.read_input_bytes(path)
    else:
        data = text.encode("utf-8") if isinstance(text, str) else text
    data = _declaration_first(data)
    if on_demand_lines:
        return _parse_on_demand(data, name, text_of is None or _may_hold(data, text_of))
    root = _parse_fast(data, name)
    return root if root is not None else _parse_tracked(data, name)


def line_of(el: ET.Element) -> int | None:
    """The line of ``el``'s start tag (None for an element no parsed file holds)."""
    line = getattr(el, "line", None)
    if line is None and type(el) is ET.Element:
        doc = _document_of(el)
        line = None if doc is None else doc.line(el)
    return line


def file_of(el: ET.Element) -> str | None:
    """The file ``el`` was read from (None for text without a file name, or an element no parsed file holds)."""
    if type(el) is not ET.Element:
        return getattr(el, "file", None)
    doc = _document_of(el)
    return None if doc is None else doc.file


def line_refs(root: ET.Element):
    """The function ``(tag=None, index=0, child=None) -> line`` for the
    :class:`~parsers.assembly.Source` of the elements of ``root``'s tree: the line of the
    ``index``-th ``<tag>`` child of the root (the root itself when ``tag`` is None), or of that
    element's first ``<child>``.  For an on-demand tree it is a :class:`_LineRef` that finds the
    line when called (the reader passes the index it counted, so nothing is looked up while
    reading); for an attached tree, the number itself."""
    doc = _DOCUMENTS.get(id(root)) if type(root) is ET.Element else None
    return partial(_LineRef, doc) if doc is not None else partial(_line_in, root, {})


def _line_in(root: ET.Element, children: dict, tag: str | None = None, index: int = 0,
             child: str | None = None) -> int | None:
    """The line :func:`line_refs` names, in the attached tree ``root`` (``children``: tag ->
    the root's children of that tag, filled as asked)."""
    el = root
    if tag is not None:
        found = children.get(tag)
        if found is None:
            found = children[tag] = root.findall(tag)
        el = found[index]
    if child is not None:
        el = el.find(child)
    return line_of(el)


def first_tag_with_prefix(root: ET.Element, prefix: str) -> ET.Element | None:
    """The first element of ``root``'s tree, in document order, whose tag starts with ``prefix``
    (None when there is none).  For an on-demand tree the text is searched first: when every
    ``<prefix`` of it lies inside a comment, no element can have such a tag and none is walked."""
    doc = _DOCUMENTS.get(id(root)) if type(root) is ET.Element else None
    if doc is not None and _mappable(doc.data) and not _outside_comments(doc.data, b"<" + prefix.encode()):
        return None
    if not any(tag.startswith(prefix) for tag in set(map(attrgetter("tag"), root.iter()))):
        return None
    return next(el for el in root.iter() if el.tag.startswith(prefix))


def _outside_comments(data: bytes, needle: bytes) -> bool:
    """True unless every occurrence of ``needle`` in ``data`` (UTF-8, no DOCTYPE) is inside a
    ``<!-- -->`` comment: then the last comment opened before it is not closed before it.
    Conservative: CDATA or an odd comment counts as outside (the caller then walks the tree)."""
    i = data.find(needle)
    while i >= 0:
        if data.rfind(b"<!--", 0, i) <= data.rfind(b"-->", 0, i):
            return True
        i = data.find(needle, i + len(needle))
    return False


class where:
    """``file:line`` of an element for a log message, found only when the message is written."""

    __slots__ = ("el",)

    def __init__(self, el: ET.Element):
        self.el = el

    def __str__(self) -> str:
        return f"{file_of(self.el)}:{line_of(self.el)}"


class _Document:
    """A file parsed with on-demand lines: its name, its bytes and (once asked) the line of each
    element.  It holds its tree weakly: the tree goes when the reader is done with it, and a
    :class:`_LineRef` keeps only the element's place in it and this document's bytes."""

    __slots__ = ("file", "data", "root", "_lines", "_attached", "_children")

    def __init__(self, file: str | None, data: bytes, root: ET.Element):
        # the weak reference's callback takes the document out of the registry when the tree goes
        self.file, self.data, self.root = file, data, weakref.ref(root, partial(_forget, id(root)))
        self._lines = self._attached = self._children = None

    def line(self, el: ET.Element) -> int | None:
        """The line of element ``el`` of this tree (None when it is not one of them).  The
        tree is alive when this is asked (the caller holds it), and not edited, so no id of
        the table is another object's."""
        if self._lines is None:
            root = self.root()
            if root is None:
                return None
            self._lines = self._line_table(root)
        return self._lines.get(id(el))

    def _line_table(self, root: ET.Element) -> dict:
        """id(element) -> line, for every element of the tree."""
        elements = list(root.iter())
        lines = _start_tags(self.data, None) if _mappable(self.data) else None
        if lines is None or len(lines) != len(elements):
            lines = [el.line for el in _parse_tracked(self.data, self.file).iter()]
        return dict(zip(map(id, elements), lines))

    def line_at(self, tag: str | None, index: int, child: str | None) -> int | None:
        """The line :func:`line_refs` names, from the document's bytes parsed again with
        attached lines (once)."""
        if self._attached is None:
            try:
                root = _parse_fast(self.data, self.file)
                self._attached = root if root is not None else _parse_tracked(self.data, self.file)
            except InputError:  # limits made tighter since the file was read
                return None
            self._children = {}
        return _line_in(self._attached, self._children, tag, index, child)

    def forget_tree(self) -> None:
        """Drop what refers to the tree by id (called when the tree goes)."""
        self._lines = None


class _LineRef:
    """The line of an element of an on-demand tree (see :func:`line_refs`), found when called
    from the element's place (``tag``, ``index``, ``child``) and the document's bytes: the tree
    itself is not kept."""

    __slots__ = ("doc", "tag", "index", "child")

    def __init__(self, doc: _Document, tag: str | None = None, index: int = 0, child: str | None = None):
        self.doc, self.tag, self.index, self.child = doc, tag, index, child

    def __call__(self) -> int | None:
        return self.doc.line_at(self.tag, self.index, self.child)


#: id(root) -> its _Document, for every on-demand tree alive (dropped with the root)
_DOCUMENTS: dict[int, _Document] = {}


def _forget(root_id: int, _ref=None) -> None:
    """The tree of ``root_id`` is gone: its document leaves the registry and forgets its ids."""
    doc = _DOCUMENTS.pop(root_id, None)
    if doc is not None:
        doc.forget_tree()


def _document_of(el: ET.Element) -> _Document | None:
    """The document of the on-demand tree that holds ``el``, the newest first.  To look, the
    lines of each tree are mapped, which only a message asks."""
    docs = reversed(list(_DOCUMENTS.values()))
    return next((doc for doc in docs if doc.root() is el or doc.line(el) is not None), None)


def _may_hold(data: bytes, tags: tuple[str, ...]) -> bool:
    """False when no element of one of ``tags`` can occur in ``data``: UTF-8 (or ASCII) text
    without DOCTYPE (whose entities could make one) and without ``<tag`` anywhere."""
    return not _mappable(data) or any(b"<" + tag.encode() in data for tag in tags)


def _parse_on_demand(data: bytes, name: str | None, keep_text: bool = True) -> ET.Element:
    """The tree of plain C elements, registered with its text for :func:`line_of`; checks the nesting depth."""
    root = _built_tree(data, text=keep_text)
    if root is None:
        return _parse_tracked(data, name)  # raises the error with its line
    doc = _DOCUMENTS[id(root)] = _Document(name, data, root)
    too_deep = _first_deeper_than(root, limits.active().nesting_depth)
    if too_deep is not None:
        el, depth = too_deep
        raise InputError(limits.exceeded("element nesting depth", depth, "nesting_depth"), file=name,
                         line=doc.line(el))
    return root


def _built_tree(data: bytes, element_factory=None, text: bool = True) -> ET.Element | None:
    """The tree expat and the C ``TreeBuilder`` make of ``data`` (elements of ``element_factory``,
    plain C elements by default; without ``text``, no character data), the collector paused;
    None when expat refuses the text."""
    builder = ET.TreeBuilder() if element_factory is None else ET.TreeBuilder(element_factory=element_factory)
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    if text:
        parser.CharacterDataHandler = builder.data
    with paused_gc():
        try:
            parser.Parse(data, True)
        except (expat.ExpatError, LookupError, ValueError):
            return None
        return builder.close()


def _first_deeper_than(root: ET.Element, max_depth: int):
    """(an element at depth ``max_depth + 1``, that depth), or None when the tree is no deeper
    than ``max_depth`` (the root has depth 1).

    A subtree of fewer than ``max_depth`` elements is less deep than that, so only the children
    of the root with larger subtrees (counted in C, up to that size) are walked, one list of
    children per level."""
    if max_depth < 2:
        first = next(iter(root), None)
        return None if first is None else (first, 2)
    for child in root:
        if next(islice(child.iter(), max_depth - 1, None), None) is None:  # fewer than max_depth elements
            continue
        level = [child]
        for _ in range(max_depth - 2):
            level = [c for el in level for c in el]
            if not level:
                break
        else:
            deeper = [c for el in level for c in el]
            if deeper:
                return deeper[0], max_depth + 1
    return None


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
    if not _mappable(data):
        return None
    lines = _start_tags(data, limits.active().nesting_depth)
    if lines is None:
        return None
    root = _built_tree(data, Element)
    if root is None:
        return None
    with paused_gc():
        elements = list(root.iter())
        if len(lines) != len(elements):
            return None
        for el, line in zip(elements, lines):
            el.line = line
            el.file = name
    return root


def _mappable(data: bytes) -> bool:
    """False for text whose start tags :func:`_start_tags` cannot map to elements: a DOCTYPE
    (its entities may expand into elements), UTF-16, or another declared encoding than UTF-8."""
    if b"<!DOCTYPE" in data or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return False
    enc = _ENCODING.match(data)
    return enc is None or enc.group(1).lower() in _UTF8_NAMES


def _start_tags(data: bytes, max_depth: int | None) -> list[int] | None:
    """1-based line of every start tag in document order, from the positions of ``<`` and ``/>``
    outside comments, CDATA and processing instructions (numpy, no Python loop per tag).

    None when an element is nested deeper than ``max_depth`` (the root has depth 1; None: not checked),
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
    if max_depth is not None and len(starts) > max_depth and _max_depth(starts, opens[is_end], self_closing) > max_depth:
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
    parse_expat(parser, data, True, name)
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


def parse_expat(parser, data: bytes, final: bool, name: str | None) -> None:
    """``parser.Parse`` with expat's errors and unknown encodings as InputError."""
    try:
        parser.Parse(data, final)
    except expat.ExpatError as exc:
        msg = expat.ErrorString(exc.code)
        raise InputError(f"XML syntax error: {msg} (column {exc.offset + 1})", file=name,
                         line=exc.lineno) from None
    except (LookupError, ValueError) as exc:  # encoding="..." that Python does not know
        raise InputError(f"XML declaration names an unsupported encoding ({exc})", file=name, line=1) from None
