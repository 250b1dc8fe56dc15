"""YAML loading that remembers line numbers, and typed access with key paths.

``load_yaml(path)`` returns :class:`Node` wrappers: every mapping, sequence
and scalar knows its file, line and key path, so validation errors read
``file:line: key.path: message``.  Duplicate keys are errors (PyYAML would
silently keep the last one).

Bounded: nesting deeper than the ``nesting_depth`` limit and alias expansion
beyond ``yaml_nodes`` values (alias bombs) are refused before any work that
grows with them (:mod:`parsers.limits`).  Besides YAML 1.1's ``1.0e+7``, the
YAML 1.2 spellings ``1.0e7`` and ``1e7`` are numbers.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

import yaml

from .. import limits
from ..errors import InputError, did_you_mean


def _looks_like_a_key(key) -> bool:
    """A name a format could have as a key: letters, digits, ``_``, ``-``, ``.``, at most 40 characters."""
    text = str(key)
    return 0 < len(text) <= 40 and all(c.isalnum() or c in "_-." for c in text)


class Node:
    """A YAML value with its location.

    value : the plain Python value (dict of Node, list of Node, or scalar).
    file, line : location (1-based line).
    path : key path such as ``bodies[2].inertial.mass``.
    """

    __slots__ = ("value", "file", "line", "path")

    def __init__(self, value: Any, file: str, line: int, path: str):
        self.value = value
        self.file = file
        self.line = line
        self.path = path

    def error(self, message: str) -> InputError:
        return InputError(message, file=self.file, line=self.line, key=self.path or None)

    def _child_path(self, key) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else str(key)

    # -- mappings -------------------------------------------------------
    def is_mapping(self) -> bool:
        return isinstance(self.value, dict)

    def mapping(self, what: str = "a mapping") -> dict[str, "Node"]:
        if not isinstance(self.value, dict):  # (the value is not quoted: the file may be no model at all)
            raise self.error(f"expected {what}, got {kind_of(self.value)}")
        return self.value

    def get(self, key: str) -> "Node | None":
        return self.mapping().get(key)

    def require(self, key: str, what: str = "") -> "Node":
        node = self.mapping().get(key)
        if node is None:
            hint = f" ({what})" if what else ""
            raise self.error(f"missing required key '{key}'{hint}")
        return node

    def check_keys(self, allowed) -> None:
        """InputError at the first key not in ``allowed``, with "did you mean".

        When no key is allowed or close to one, the file is probably no model
        at all: the keys are not echoed (they could be anybody's secrets).
        """
        allowed = set(allowed)
        items = self.mapping()
        if items and all(k not in allowed and not did_you_mean(k, allowed) for k in items):
            raise self.error(f"none of the keys is one of: {', '.join(sorted(allowed))}")
        for key, node in items.items():
            if key not in allowed and not _looks_like_a_key(key):
                # not a name at all (a stray line of text): located, not echoed
                raise InputError(f"a key that is not a name (expected one of: {', '.join(sorted(allowed))})",
                                 file=node.file, line=node.line, key=self.path or None)
            if key not in allowed:
                raise node.error(f"unknown key '{key}'{did_you_mean(key, allowed)} "
                                 f"(expected one of: {', '.join(sorted(allowed))})")

    # -- sequences ------------------------------------------------------
    def sequence(self, what: str = "a list") -> list["Node"]:
        if not isinstance(self.value, list):
            raise self.error(f"expected {what}, got {kind_of(self.value)}")
        return self.value

    def __iter__(self) -> Iterator["Node"]:
        return iter(self.sequence())

    # -- scalars --------------------------------------------------------
    def number(self, positive: bool = False, nonnegative: bool = False) -> float:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(f"expected a number, got {describe(v)}")
        try:
            v = float(v)
        except OverflowError:
            v = float("inf")
        if v != v or v in (float("inf"), float("-inf")):
            raise self.error(f"expected a finite number, got {v}")
        too_big = limits.check_magnitude(v, "number")
        if too_big:
            raise self.error(too_big)
        if positive and not v > 0:
            raise self.error(f"must be > 0, got {v:g}")
        if nonnegative and v < 0:
            raise self.error(f"must be >= 0, got {v:g}")
        return v

    def vector(self, n: int) -> list[float]:
        items = self.sequence(f"a list of {n} numbers")
        if len(items) != n:
            raise self.error(f"expected a list of {n} numbers, got {len(items)} items")
        return [item.number() for item in items]

    def string(self) -> str:
        if not isinstance(self.value, str) or not self.value:
            raise self.error(f"expected a non-empty string, got {describe(self.value)}")
        return self.value

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {describe(self.value)}")
        return self.value

    def plain(self) -> Any:
        """The value with all Node wrappers removed."""
        if isinstance(self.value, dict):
            return {k: n.plain() for k, n in self.value.items()}
        if isinstance(self.value, list):
            return [n.plain() for n in self.value]
        return self.value


def kind_of(value: Any) -> str:
    """What ``value`` is, without its content: 'a string', 'a number', 'a mapping' ..."""
    if isinstance(value, (dict, list)) or value is None:
        return describe(value)
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {value}"
    if isinstance(value, str):
        return f"string {_short(value)}"
    return f"{type(value).__name__} {_short(value)}"


def _short(value: Any, width: int = 40) -> str:
    """repr of ``value`` cut to ``width`` characters (messages never echo a whole file)."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 exponent floats and a bounded nesting depth."""

    file = "<string>"
    depth = 0

    def compose_node(self, parent, index):
        self.depth += 1
        try:
            if self.depth > limits.active().nesting_depth:
                mark = self.peek_event().start_mark
                raise InputError(limits.exceeded("nesting depth", self.depth, "nesting_depth"),
                                 file=self.file, line=mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_alias_expansion(root: yaml.Node, file: str) -> int:
    """Number of values of ``root`` with every alias expanded; InputError past ``yaml_nodes``.

    Linear in the distinct nodes (sizes are memoised per node), so an alias
    bomb is refused without being expanded; a value that contains itself
    (recursive alias) is refused too.
    """
    limit = limits.active().yaml_nodes
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > limit:
                raise InputError(limits.exceeded("YAML values after alias expansion", size[key], "yaml_nodes"),
                                 file=file, line=node.start_mark.line + 1)
            continue
        if key in size:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise InputError("recursive alias: a value contains itself", file=file,
                                 line=child.start_mark.line + 1)
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def _wrap(loader: _Loader, node: yaml.Node, file: str, path: str) -> Node:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise InputError(f"mapping keys must be strings, got {describe(key)}",
                                 file=file, line=key_node.start_mark.line + 1, key=path or None)
            child_path = f"{path}.{key}" if path else key
            if key in out:
                raise InputError(f"duplicate key '{key}' (first on line {out[key].line})", file=file,
                                 line=key_node.start_mark.line + 1, key=child_path)
            out[key] = _wrap(loader, value_node, file, child_path)
        return Node(out, file, line, path)
    if isinstance(node, yaml.SequenceNode):
        return Node([_wrap(loader, item, file, f"{path}[{i}]") for i, item in enumerate(node.value)],
                    file, line, path)
    return Node(loader.construct_object(node, deep=True), file, line, path)


def load_yaml(path) -> Node:
    """Parse a YAML file into a tree of :class:`Node`; InputError for syntax errors."""
    return loads_yaml(limits.read_input_text(path), str(path))


def loads_yaml(text: str, file: str = "<string>") -> Node:
    """Parse YAML text (see :func:`load_yaml`)."""
    loader = None
    try:
        loader = _Loader(text)
        loader.file = file
        root = loader.get_single_node()
        if root is None:
            raise InputError("the file is empty", file=file, line=1)
        check_alias_expansion(root, file)
        return _wrap(loader, root, file, "")
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1 if isinstance(exc.position, int) else None
        raise InputError(f"YAML error: special character {exc.character!r} is not allowed",
                         file=file, line=line) from None
    except RecursionError:
        raise InputError(limits.exceeded("nesting depth", limits.active().nesting_depth + 1, "nesting_depth"),
                         file=file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise InputError(f"YAML syntax error: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {exc}", file=file) from None
    finally:
        if loader is not None:
            loader.dispose()
