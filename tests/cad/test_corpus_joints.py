"""The real corpus' mechanisms (issue 24, joints): dof, rigid bodies and joint axes against the hand-written answers.

References: tests/data/cad/expected.yaml, written by hand from each project's documentation and
models (never from mbcompose's output): the real rigid bodies as part patterns, the real joints with
their axes and a point on each, the real dof.  Masses against BRepGProp volume x the density the
wrapper gives.  The wrappers tests/data/cad/<name>.yaml hold at most one line per real joint; their
``assembly:`` points at ``../shared/cad`` and is redirected here to wherever the corpus is.  Skips,
naming the places looked in, when the corpus is absent (see test_real_assemblies.py).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("OCP")

from test_real_assemblies import PLACES, _corpus  # noqa: E402

from mbcompose.graph import analyse  # noqa: E402
from mbcompose.parsers import read_assembly  # noqa: E402
from mbcompose.parsers.step import brep, reader, rules  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "cad"
EXPECTED = yaml.safe_load((DATA / "expected.yaml").read_text())["assemblies"]
#: what reading each file with no declaration gives (docs/assembly-format.md's table): the dof
NO_DECLARATION = {"koch_follower": 6, "koch_leader": 6, "chrono_pendulum": 1, "freecad_bearing": 1,
                  "koch_v1_1_follower": 6, "tflex_bearing": 1, "koch_v1_1_leader": 6, "creo_box": 0}
#: the assemblies whose rigid bodies and joint axes the rules find with no declaration (seven of eight:
#: the Creo box is published closed, its lid resting on the housing, and is read welded)
RULES_ALONE = tuple(n for n, dof in NO_DECLARATION.items() if dof == EXPECTED[n]["dof_real"])
#: those whose real bodies and joints come from their wrapper's one line per real joint
ONE_LINE_EACH = ("creo_box",)
#: real bodies the rules lump with another (expected.yaml allows the bearing's balls to ride with a ring)
LUMPED = {"freecad_bearing": {"balls": "outer_ring"}, "tflex_bearing": {"balls": "outer_ring"}}
#: those whose wrapper declares no joint but says which servos are actuated (the servo rule marks every
#: servo actuated, an XL330-M077 not; koch_leader's file does not name its M077, the trigger of both
#: leaders is driven): read through it
SERVOS = ("koch_follower", "koch_leader", "koch_v1_1_leader")
#: wrappers that say only which joints are actuated, read as SERVOS; the others declare joints
ACTUATION_ONLY = {"koch_v1_1_leader": "koch_v1_1_leader_actuation"}
AXIS_TOL = 1e-3                      # rad: the expected axes are written to 3 decimals where not exact
POINT_TOL = 2e-5                     # m: the expected points are written to 0.01 mm


@pytest.fixture(scope="module")
def root():
    found = _corpus()
    if found is None:
        pytest.skip(f"the real-CAD corpus is absent (looked in {', '.join(p for p in PLACES if p)}); "
                    "see tests/data/cad/README.md")
    return found


def _wrapper(root: Path, name: str, tmp: Path) -> Path:
    """tests/data/cad/<name>.yaml with its assembly path redirected to the corpus found."""
    text = (DATA / f"{name}.yaml").read_text().replace("../../../../shared/cad", str(root))
    out = tmp / f"{name}.yaml"
    out.write_text(text)
    return out


@pytest.fixture(scope="module")
def declared(root, tmp_path_factory):
    """name -> the assembly read through its wrapper ``<name>.yaml`` (each once, when first asked for)."""
    tmp, cache = tmp_path_factory.mktemp("wrappers"), {}

    def read(name):
        if name not in cache:
            cache[name] = read_assembly(_wrapper(root, name, tmp))
        return cache[name]
    return read


@pytest.fixture(scope="module")
def undeclared(root, tmp_path_factory):
    """name -> the assembly read with no declaration at all (each once, when first asked for)."""
    tmp, cache = tmp_path_factory.mktemp("undeclared"), {}

    def read(name):
        if name not in cache:
            cache[name] = read_assembly(root / name / EXPECTED[name]["file"], mesh_dir=tmp / name)
        return cache[name]
    return read


def _moving(assembly):
    return [j for j in assembly.joints if not j.implicit and not j.source.note.startswith("rigid group")]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_with_at_most_one_line_per_real_joint_the_dof_is_the_real_one(declared, name):
    doc = yaml.safe_load((DATA / f"{name}.yaml").read_text())
    lines = len(doc.get("joints") or []) + len(doc.get("rigid") or [])
    assert lines <= len(EXPECTED[name]["joints"])
    assert analyse(declared(name)).dof == EXPECTED[name]["dof_real"]


def _truth(name: str, root: Path) -> dict[str, str]:
    """part name -> its real rigid body, from the expected patterns on the parts' instance paths."""
    parts = reader.read_parts(root / name / EXPECTED[name]["file"])
    out = {}
    for p in parts:
        full, named = "/".join(p.leaf.path), "/".join((*p.leaf.path[:-1], p.name))   # the latter: 'Top/NAME_2'
        groups = [g for g, pats in EXPECTED[name]["groups"].items()
                  if any(fnmatch.fnmatchcase(x, pat) for x in (full, named, p.name) for pat in pats)]
        assert len(groups) == 1, (p.name, full, groups)
        out[p.name] = LUMPED.get(name, {}).get(groups[0], groups[0])
    return out


def _bodies(assembly) -> dict[str, str]:
    """part -> the first part of its composite (parts joined by fixed joints)."""
    parent = {b.name: b.name for b in assembly.bodies}

    def find(n):
        while parent[n] != n:
            n = parent[n]
        return n
    for j in assembly.joints:
        if j.type == "fixed" and not j.implicit:
            parent[find(j.secondary)] = find(j.reference)
    return {n: find(n) for n in parent}


def _check_bodies_and_joints(name: str, root: Path, a) -> None:
    """``a``'s rigid bodies are expected.yaml's part for part; its moving joints are the real ones (type,
    actuation, axis within AXIS_TOL, a point on the axis within POINT_TOL)."""
    truth, ours = _truth(name, root), _bodies(a)
    partition = {frozenset(p for p in truth if ours[p] == rep) for rep in set(ours.values())}
    real = {frozenset(p for p in truth if truth[p] == g) for g in set(truth.values())}
    assert partition == real
    # a massless connector (a surface-model servo) belongs to the real body of the solids it is welded to
    real_of = {**{ours[p]: g for p, g in truth.items()}, **truth}
    joints = _moving(a)
    assert len(joints) == len(EXPECTED[name]["joints"])
    for want in EXPECTED[name]["joints"]:
        (j,) = [j for j in joints if {real_of.get(j.reference, real_of.get(ours[j.reference])),
                                      real_of.get(j.secondary, real_of.get(ours[j.secondary]))} == set(want["between"])]
        assert j.type == want["type"]
        assert j.actuated == want["actuated"]      # servos actuated; the leader's encoders not, its trigger yes
        axis = np.asarray(want["axis"], float) / np.linalg.norm(want["axis"])
        assert np.linalg.norm(np.cross(j.axis, axis)) < AXIS_TOL
        off = np.asarray(want["point"], float) * 1e-3 - j.origin
        assert np.linalg.norm(off - (off @ j.axis) * j.axis) < POINT_TOL


@pytest.mark.parametrize("name", RULES_ALONE)
def test_the_rules_alone_find_the_real_bodies_and_joints(root, declared, undeclared, name):
    a = declared(ACTUATION_ONLY.get(name, name)) if name in SERVOS else undeclared(name)
    assert analyse(a).dof == EXPECTED[name]["dof_real"] == NO_DECLARATION[name]
    _check_bodies_and_joints(name, root, a)


@pytest.mark.parametrize("name", ONE_LINE_EACH)
def test_one_line_per_real_joint_gives_the_real_bodies_and_joints(root, declared, undeclared, name):
    """The Creo box with no declaration reads welded (NO_DECLARATION); its one-line wrapper gives the real
    bodies (bearings and closures with the lid) and the hinge, axis and point as expected.yaml."""
    assert analyse(undeclared(name)).dof == NO_DECLARATION[name]
    a = declared(name)
    assert analyse(a).dof == EXPECTED[name]["dof_real"]
    _check_bodies_and_joints(name, root, a)


@pytest.mark.parametrize("name, density", [("chrono_pendulum", 1000.0), ("freecad_bearing", 7800.0),
                                           ("tflex_bearing", 7800.0)])
def test_masses_are_brep_volume_times_the_wrappers_density(root, declared, name, density):
    parts = {p.name: p for p in reader.read_parts(root / name / EXPECTED[name]["file"])}
    for body in declared(name).bodies:
        volume = brep.volume_properties(parts[body.name].leaf.shape)[0]        # mm^3, BRepGProp
        assert body.mass.mass == pytest.approx(density * volume * 1e-9, rel=1e-9)


@pytest.mark.parametrize("name", ["koch_v1_1_follower", "koch_v1_1_leader"])
def test_surface_model_servos_add_no_mass(root, undeclared, name):
    """Each solid body weighs its BRepGProp volume times the default density; the servo surface models
    kept for mating are bodies of zero mass, so the total is the solids' alone."""
    a = undeclared(name)
    parts = {p.name: p for p in reader.read_parts(root / name / EXPECTED[name]["file"])}
    connectors = [b for b in a.bodies if b.name not in parts]
    assert connectors and all(b.mass.mass == 0.0 for b in connectors)
    assert all(rules.connector_by_name(b.name) for b in connectors)
    total = 0.0
    for body in a.bodies:
        if body.name in parts:
            volume = brep.volume_properties(parts[body.name].leaf.shape)[0]        # mm^3, BRepGProp
            assert body.mass.mass == pytest.approx(reader.DEFAULT_DENSITY * volume * 1e-9, rel=1e-9)
            total += reader.DEFAULT_DENSITY * volume * 1e-9
    assert sum(b.mass.mass for b in a.bodies) == pytest.approx(total, rel=1e-9)
    assert {b.name for b in a.bodies} >= set(parts)
