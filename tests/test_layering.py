"""Structure rules of the library (DESIGN.md, issue 10), read from the source with ``ast``.

* imports point one way: ``composer -> graph, parsers, dynamics``; ``graph -> parsers, dynamics``;
  ``parsers -> dynamics``; ``dynamics`` imports none of the others;
* tolerances are defined once, in ``dynamics/tolerances.py`` (other modules import or alias them);
* no function over 80 lines, except the ones listed below, each with its reason.  Modules have no
  size limit (issue 23): a module is as long as its topic needs;
* no inline tolerance literal: a float literal of magnitude at most 1e-6 stands only in a module-level
  constant (a name says what it bounds or converts).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("composer", "parsers", "graph", "dynamics")
ALLOWED = {
    "composer": {"graph", "parsers", "dynamics"},
    "graph": {"parsers", "dynamics"},
    "parsers": {"dynamics"},
    "dynamics": set(),
}
#: functions over the limit, with why they are kept
SIZE_EXCEPTIONS = {
    "parsers/mjcf/reader.py:assemble": "the MJCF reader's assembly step; split with its owner",
}


#: the magnitude at or below which a float literal is taken for a tolerance (or a unit that deserves a name)
SMALL_LITERAL = 1e-6


def library_modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield pkg, path


def imported_packages(source: str, rel_parts: tuple, pkg: str) -> set[str]:
    """The top-level packages of the library that a module (its source and its path parts under the
    repository root) imports, absolute (``mbcompose.graph...``) or relative (``from ..x``)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level > len(rel_parts) - 1:
                    out.add("outside")
                names = [rel_parts[0]]
            elif node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "mbcompose" and len(parts) > 1 and parts[1] in PACKAGES:
                out.add(parts[1])
            elif parts[0] in PACKAGES:
                out.add(parts[0])
    return out - {pkg}


@pytest.mark.parametrize("pkg", PACKAGES)
def test_no_package_imports_a_higher_one(pkg):
    bad = {}
    for p, path in library_modules():
        if p == pkg:
            rel = path.relative_to(ROOT)
            wrong = imported_packages(path.read_text(), rel.parts, pkg) - ALLOWED[pkg]
            if wrong:
                bad[str(rel)] = sorted(wrong)
    assert not bad, f"imports against the layering {ALLOWED[pkg]}: {bad}"


def test_the_import_scan_sees_upward_imports():
    src = ("import numpy\nfrom mbcompose.composer.tree import TreeModel\nfrom mbcompose import graph\n"
           "from . import spatial\nfrom ...x import y\n")
    assert imported_packages(src, ("dynamics", "probe.py"), "dynamics") == {"composer", "graph", "outside"}
    assert imported_packages("from .. import errors\n", ("parsers", "exporters", "m.py"), "parsers") == set()


def test_tolerances_are_defined_only_in_the_tolerances_module():
    owners = {}
    for _, path in library_modules():
        rel = str(path.relative_to(ROOT))
        if rel == "dynamics/tolerances.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    name = getattr(t, "id", "")
                    literal = isinstance(node.value, ast.Constant) and isinstance(node.value.value, float)
                    if literal and any(k in name for k in ("TOL", "RCOND", "EPS")):
                        owners.setdefault(rel, []).append(name)
    assert not owners, f"tolerance constants outside dynamics/tolerances.py: {owners}"


def test_functions_stay_within_the_size_limit():
    over = []
    for _, path in library_modules():
        rel = str(path.relative_to(ROOT))
        src = path.read_text()
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 80 and f"{rel}:{node.name}" not in SIZE_EXCEPTIONS:
                    over.append(f"{rel}:{node.name}: {n} lines")
    assert not over, over
    stale = [k for k in SIZE_EXCEPTIONS if k not in over_limit(k)]
    assert not stale, f"size exceptions that no longer apply (remove them): {stale}"


def over_limit(key: str) -> set:
    """{key} when the function ``key`` (``path:function``) is over the limit."""
    path, _, func = key.partition(":")
    src = (ROOT / path).read_text()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func:
            if node.end_lineno - node.lineno + 1 > 80:
                return {key}
    return set()


def inline_small_literals(source: str) -> list[int]:
    """Lines of float literals of magnitude in (0, SMALL_LITERAL] outside module-level assignments."""
    tree = ast.parse(source)
    named = {id(n) for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
             for n in ast.walk(node.value)}
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is float
            and 0 < abs(n.value) <= SMALL_LITERAL and id(n) not in named]


def test_no_inline_tolerance_literals():
    found = {}
    for _, path in library_modules():
        rel = str(path.relative_to(ROOT))
        if rel != "dynamics/tolerances.py":
            lines = inline_small_literals(path.read_text())
            if lines:
                found[rel] = lines
    assert not found, f"inline tolerance literals (name them in dynamics/tolerances.py): {found}"


def test_the_literal_scan_skips_named_constants():
    src = "TOL = 1e-9\nUNITS = {'mm': 1e-3, 'um': 1e-6}\ndef f(x, atol=1e-12):\n    return x < 2e-7 or x > 0.5\n"
    assert inline_small_literals(src) == [3, 4]
