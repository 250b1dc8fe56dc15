"""Real STEP assemblies nobody here wrote (issue 24, reading): they read, with the right parts, names and masses.

The corpus (tests/data/cad/README.md: sources, licences) is looked for in ``$MBCOMPOSE_CAD_CORPUS``,
else ``<repo>/../shared/cad``, else ``/work/cadcorpus-data/cad``; the tests that need it skip,
naming those places, when it is absent.

References: part counts from the README's inventory of each file (leaf parts with a closed solid,
listed with OCP when the corpus was staged); densities from the files' own text (Fusion 360's
``POSITIVE_RATIO_MEASURE(7850.)`` in kg/m^3, every material of both Koch files is that Steel) or
the documented default 2700 kg/m^3; every mass against BRepGProp called here directly on the part's
solid times that density; analytic volumes for the written test parts.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

pytest.importorskip("OCP")

import cad_shapes as S  # noqa: E402

from mbcompose.dynamics.tolerances import STEP_DENSITY_RTOL  # noqa: E402
from mbcompose.parsers.step import brep, reader  # noqa: E402
from mbcompose.parsers.step.writer import Node, Product, write_step  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PLACES = [os.environ.get("MBCOMPOSE_CAD_CORPUS"), str(REPO.parent / "shared" / "cad"), "/work/cadcorpus-data/cad"]
STEEL = 7850.0                       # kg/m^3, Fusion 360's Steel as the files write it
DEFAULT = 2700.0                     # kg/m^3, reader.DEFAULT_DENSITY as documented

#: name -> (file, leaf parts with a closed solid, leaves skipped without one, density of the file's material)
CASES = {
    "chrono_pendulum": ("assembly.stp", 2, 0, None),
    "freecad_bearing": ("bearing_20x37x9.stp", 16, 0, None),
    "koch_follower": ("arm.step", 115, 46, STEEL),
    "koch_leader": ("leader_arm.step", 97, 36, STEEL),
    "koch_v1_1_follower": ("Follower_Arm.STEP", 16, 9, None),
    "tflex_bearing": ("bearing_20x37x9.stp", 16, 0, None),
    "koch_v1_1_leader": ("Leader_Arm.STEP", 11, 6, None),
    "creo_box": ("AutMobRos_Box_Komplett.stp", 6, 0, None),
}


def _corpus() -> Path | None:
    for place in PLACES:
        if place and (Path(place) / "chrono_pendulum").is_dir():
            return Path(place)
    return None


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture(scope="module")
def corpus():
    """name -> (parts, warnings, info messages); each file read once, by a path relative to the corpus' parent."""
    root = _corpus()
    if root is None:
        pytest.skip(f"the real-CAD corpus is absent (looked in {', '.join(p for p in PLACES if p)}); "
                    "see tests/data/cad/README.md")
    log = logging.getLogger("mbcompose.parsers.step")
    out, cwd, level = {}, os.getcwd(), log.level
    log.setLevel(logging.INFO)
    try:
        os.chdir(root.parent)        # relative paths: multi-file assemblies must still find their parts
        for name, (file, *_rest) in CASES.items():
            handler = _Records()
            log.addHandler(handler)
            try:
                parts = reader.read_parts(Path(root.name) / name / file)
            finally:
                log.removeHandler(handler)
            warnings = [r.getMessage() for r in handler.records if r.levelno >= logging.WARNING]
            infos = [r.getMessage() for r in handler.records if r.levelno == logging.INFO]
            out[name] = (parts, warnings, infos)
    finally:
        os.chdir(cwd)
        log.setLevel(level)
    return out


def _volume(shape) -> float:
    """BRepGProp volume (mm^3), called here directly."""
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(shape, props)
    return props.Mass()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_assembly_reads_with_its_part_count(corpus, name):
    parts, warnings, _ = corpus[name]
    assert len(parts) == CASES[name][1]
    assert len({p.name for p in parts}) == len(parts)
    skipped = CASES[name][2]
    said = [w for w in warnings if "without a closed solid" in w]
    assert len(said) == (1 if skipped else 0)
    if skipped:
        assert f": {skipped} parts without a closed solid" in said[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_mass_is_the_brep_volume_times_the_density_that_applies(corpus, name):
    parts, _, _ = corpus[name]
    material = CASES[name][3]
    for p in parts:
        rho = DEFAULT if p.leaf.density is None else material
        assert rho is not None, f"{p.name}: the file has no material, yet the part has one"
        mp, _, _ = reader.part_mass("x.step", p)
        expected = rho * _volume(p.leaf.shape) * 1e-9
        assert expected > 0.0
        assert abs(mp.mass - expected) <= STEP_DENSITY_RTOL * expected, p.name


def test_fusion_steel_reads_as_7850_kg_per_m3_on_nearly_every_part(corpus):
    for name in ("koch_follower", "koch_leader"):
        parts, warnings, _ = corpus[name]
        steel = [p for p in parts if p.leaf.density is not None]
        assert len(steel) >= len(parts) - 2
        for p in steel:
            assert abs(p.density - STEEL) <= STEP_DENSITY_RTOL * STEEL
            assert p.density_from == "the file's material"
        assert not [w for w in warnings if "density outside" in w]


def test_names_are_instance_names_else_product_names_numbered_in_file_order(corpus):
    assert [p.name for p in corpus["chrono_pendulum"][0]] == ["body1", "body2"]      # instances '=>[0:1:1:2]'
    bearing = [p.name for p in corpus["freecad_bearing"][0]]
    assert bearing == [f"Ball_{k}" for k in range(1, 15)] + ["Outer_Ring", "Inner_Ring"]
    koch11 = [p.name for p in corpus["koch_v1_1_follower"][0]]      # SolidWorks: NAUO1..NAUO25
    assert not [n for n in koch11 if n.startswith("NAUO")]
    assert [n for n in koch11 if "Spacer" in n] == [f"Robotis_DYNAMIXEL_XL430_Spacer_{k}" for k in range(1, 9)]
    assert koch11[:3] == ["Robotis_DYNAMIXEL_XL430_Spacer_1", "Robotis_HN11_I101", "Robotis_DYNAMIXEL_XL430_Spacer_2"]
    for name in ("koch_follower", "koch_leader"):
        names = [p.name for p in corpus[name][0]]
        assert not [n for n in names if n.startswith("=>[")]
    assert "shoulder_rotation:1" in [p.name for p in corpus["koch_leader"][0]]
    assert [p.name for p in corpus["creo_box"][0]] == ["KOFFER_T1_V2", "KOFFER_T2", "LAGER_1", "LAGER_2",
                                                       "VERSCHRAUBUNG_1", "VERSCHRAUBUNG_2"]   # Creo: products


def test_the_skipped_part_warning_counts_names_the_first_and_says_how_to_list_all(corpus):
    _, warnings, infos = corpus["koch_follower"]
    (line,) = [w for w in warnings if "without a closed solid" in w]
    assert "46 parts without a closed solid" in line
    assert "Robot Arm v14/XL-430_new v1:1/DX124_SCREW-COVER:1/SHELL" in line
    assert "and 41 more" in line and "--verbose" in line
    assert len([i for i in infos if "skipped part" in i]) == 46          # --verbose lists them all


# ------------------------------------------------------------------ written files (no corpus needed)

def _box_faces(lo, hi):
    """The six faces of a box as a compound: no shell, no solid (as a surface model is exported)."""
    from OCP.BRep import BRep_Builder
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS_Compound
    compound, builder = TopoDS_Compound(), BRep_Builder()
    builder.MakeCompound(compound)
    faces = TopExp_Explorer(S.box(lo, hi), TopAbs_FACE)
    while faces.More():
        builder.Add(compound, faces.Current())
        faces.Next()
    return compound


def _sheet():
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
    from OCP.gp import gp_Dir, gp_Pln, gp_Pnt
    return BRepBuilderAPI_MakeFace(gp_Pln(gp_Pnt(0, 0, 50), gp_Dir(0, 0, 1)), -5.0, 5.0, -5.0, 5.0).Face()


def test_a_surface_model_that_sewing_closes_is_healed_and_an_open_one_skipped_with_one_warning(tmp_path, caplog):
    root = Node("top", children=[Node("block", Product("block", S.box((0, 0, 0), (10, 20, 30)), density=1000.0)),
                                 Node("skin", Product("skin", _box_faces((40, 0, 0), (50, 10, 10)))),
                                 Node("sheet", Product("sheet", _sheet()))])
    write_step(tmp_path / "h.step", root)
    with caplog.at_level(logging.INFO, logger="mbcompose.parsers.step"):
        parts = reader.read_parts(tmp_path / "h.step", densities={"skin": 1000.0})
    assert [p.name for p in parts] == ["block", "skin"]
    skin = parts[1]
    assert brep.solid_problem(skin.leaf.shape) is None
    mp, _, volume = reader.part_mass("h.step", skin)
    assert abs(volume - 1000.0) <= STEP_DENSITY_RTOL * 1000.0                 # 10 x 10 x 10 mm
    assert abs(mp.mass - 1e-3) <= STEP_DENSITY_RTOL * 1e-3
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    (line,) = [w for w in warnings if "without a closed solid" in w]
    assert ": 1 parts without a closed solid" in line and "top/sheet" in line and "--verbose" in line
    assert any("top/skin" in r.getMessage() and "healed by sewing" in r.getMessage() for r in caplog.records)


def test_a_file_with_only_non_solid_parts_is_an_error(tmp_path):
    from mbcompose.parsers import InputError
    write_step(tmp_path / "s.step", Node("top", children=[Node("sheet", Product("sheet", _sheet()))]))
    with pytest.raises(InputError, match="no part has a closed solid: part sheet: open shell"):
        reader.read_parts(tmp_path / "s.step")


def _two_materials(tmp_path, unit: str) -> Path:
    root = Node("top", children=[
        Node("steel_block", Product("steel_block", S.box((0, 0, 0), (10, 20, 30)), density=7850.0)),
        Node("pla_block", Product("pla_block", S.box((10, 0, 0), (20, 10, 10)), density=1240.0))])
    path = tmp_path / f"m_{unit.replace('/', '_').replace('^', '')}.step"
    write_step(path, root, density_unit=unit)
    return path


@pytest.mark.parametrize("unit", ["opencascade", "g/cm^3", "kg/m^3"])
def test_the_density_unit_is_read_from_the_file(tmp_path, unit):
    """OpenCascade's own g/cm^3 (exponents 3 and 2), g/cm^3 as Inventor writes it, kg/m^3 as Fusion 360 does."""
    path = _two_materials(tmp_path, unit)
    text = path.read_text(encoding="latin-1")
    assert ("POSITIVE_RATIO_MEASURE(7850.0)" in text) == (unit == "kg/m^3")
    assert ("SI_UNIT(.CENTI.,.METRE.)" in text) == (unit != "kg/m^3")
    parts = {p.name: p for p in reader.read_parts(path)}
    for name, rho, volume in (("steel_block", 7850.0, 6000.0), ("pla_block", 1240.0, 1000.0)):
        assert abs(parts[name].density - rho) <= STEP_DENSITY_RTOL * rho
        mp, _, _ = reader.part_mass(path, parts[name])
        assert abs(mp.mass - rho * volume * 1e-9) <= STEP_DENSITY_RTOL * rho * volume * 1e-9


def test_overrides_win_over_the_file_material_and_the_source_says_so(tmp_path):
    path = _two_materials(tmp_path, "kg/m^3")
    parts = {p.name: p for p in reader.read_parts(path, densities={"pla_*": 1000.0}, density=2000.0)}
    assert parts["pla_block"].density == 1000.0
    assert parts["pla_block"].density_from == "densities['pla_*'] (over the file's material, 1240 kg/m^3)"
    assert parts["steel_block"].density == 2000.0
    assert parts["steel_block"].density_from == "the density option (over the file's material, 7850 kg/m^3)"
    from mbcompose.parsers import read_assembly
    a = read_assembly(path, mesh_dir=tmp_path / "m", densities={"pla_*": 1000.0}, density=2000.0)
    note = str(a.body("pla_block").sources["mass"])
    assert "densities['pla_*'] (over the file's material, 1240 kg/m^3)" in note


def test_the_wrapper_density_and_parts_win_over_the_file(tmp_path):
    from mbcompose.parsers import read_assembly
    _two_materials(tmp_path, "kg/m^3")
    (tmp_path / "w.yaml").write_text("assembly: m_kg_m3.step\ndensity: 2000\nparts:\n  pla_*: {material: pla}\n")
    a = read_assembly(tmp_path / "w.yaml")
    steel, pla = a.body("steel_block"), a.body("pla_block")
    assert abs(steel.mass.mass - 2000.0 * 6000.0 * 1e-9) <= STEP_DENSITY_RTOL * 2000.0 * 6000.0 * 1e-9
    assert "the density option (over the file's material, 7850 kg/m^3)" in str(steel.sources["mass"])
    assert "densities['pla_*'] (over the file's material, 1240 kg/m^3)" in str(pla.sources["mass"])


def test_an_implausible_density_is_named_in_a_warning(tmp_path, caplog):
    root = Node("top", children=[Node("light", Product("light", S.box((0, 0, 0), (10, 10, 10)), density=7.85)),
                                 Node("ok", Product("ok", S.box((20, 0, 0), (30, 10, 10)), density=1240.0))])
    write_step(tmp_path / "d.step", root)
    with caplog.at_level(logging.WARNING, logger="mbcompose.parsers.step"):
        reader.read_parts(tmp_path / "d.step")
    (line,) = [r.getMessage() for r in caplog.records if "density outside" in r.getMessage()]
    assert "light (7.85)" in line and "ok (" not in line and "300-22000 kg/m^3" in line


@pytest.mark.parametrize("written", [r"Engrenagem_\X2\00E7\X0\ ", r"Engrenagem_\X\E7 ", r"Engrenagem_\S\g ",
                                     "Engrenagem_\u00e7 "])
def test_step_string_encodings_become_unicode(tmp_path, written):
    root = Node("top", children=[Node("gear", Product("gear", S.box((0, 0, 0), (10, 10, 10)), density=1240.0))])
    write_step(tmp_path / "u.step", root)
    text = (tmp_path / "u.step").read_text(encoding="latin-1").replace("'gear'", f"'{written.strip()}'")
    (tmp_path / "u.step").write_bytes(text.encode("utf-8") if "\u00e7" in written else text.encode("latin-1"))
    (part,) = reader.read_parts(tmp_path / "u.step")
    assert part.name == "Engrenagem_\u00e7"


def test_escapes_that_reach_the_reader_verbatim_are_decoded():
    d = brep.decode_step_string
    assert d("a\\X2\\00E7\\X0\\b") == "a\u00e7b"
    assert d("a\\X2\\00E700E3\\X0\\b") == "a\u00e7\u00e3b"
    assert d("a\\X4\\0001F600\\X0\\b") == "a\U0001F600b"
    assert d("a\\X\\E7b") == "a\u00e7b"
    assert d("a\\S\\gb") == "a\u00e7b"
    assert d("\\PA\\a\\\\b") == "a\\b"
    assert brep.part_name("NAUO12", "bracket") == "bracket"
    assert brep.part_name("=>[0:1:1:4]", "pin") == "pin"
    assert brep.part_name("", "=>[0:1:1:4]") == "part"
    assert brep.part_name("Link 1", "link") == "Link 1"


def test_the_mesh_cache_is_in_the_users_cache_folder(tmp_path, monkeypatch):
    (tmp_path / "a.step").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert reader._cache_dir(tmp_path / "a.step").parent == tmp_path / "xdg" / "mbcompose" / "step-meshes"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert reader._cache_dir(tmp_path / "a.step").parent == tmp_path / "home" / ".cache" / "mbcompose" / "step-meshes"


def test_file_densities_pair_with_the_stored_ones_by_one_ratio_or_not_at_all():
    paired = brep.DensityUnits._paired
    assert paired([1240.0, 7850.0], [1.24e-6, 7.85e-6]) == pytest.approx(1e9, rel=STEP_DENSITY_RTOL)
    assert paired([1000.0, 1240.0, 7850.0], [1.24e-6, 7.85e-6]) == pytest.approx(1e9, rel=STEP_DENSITY_RTOL)
    assert paired([1240.0, 7850.0], [7.85e-6]) is None                  # either ratio fits: ambiguous
    assert paired([1240.0, 7850.0], [1.0, 3.0]) is None                 # no common ratio
