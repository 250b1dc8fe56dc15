"""Simplified collision geometry of the exports (issue 27, "What to build": exports): ``mbcompose convert
--collision mesh|hull|none`` and the pipeline's ``outputs.collision``.

References: Pinocchio's URDF parser (its VISUAL and COLLISION geometry models, its ``crba``), MuJoCo's
compiler (geom classes, meshes, ``mj_fullM``), and trimesh's ``is_convex`` and triangle distances on the
files as written, read back with trimesh directly (not through our mesh loader).  Sources: the YAML seeker
(STL parts in millimetres, every part one mesh), the STEP seeker (meshes tessellated from the B-rep, the
``cad`` extra) and example-robot-data's panda URDF (STL collision meshes, DAE visual meshes, box
collision shapes on the fingers).

* ``hull``: one collision geometry per part (one per colliding shape of the input), each a mesh
  ``assets/STEM_hull.stl`` that contains every vertex of its part's mesh (signed distance <= 1e-9 m) and
  is convex; primitives stay primitives; the VISUAL model is the one of the export without ``--collision``;
  MuJoCo's colliding geoms are the hulls; the mass matrix is unchanged.
* ``none``: no collision geometry, the visual geometry unchanged.
"""

import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import trimesh
from click.testing import CliRunner

import mbcompose
from mbcompose.composer.cli.commands import main
from mbcompose.composer.exports import export_writers
from mbcompose.dynamics.tolerances import DECLARED_GEOMETRY_ATOL, INERTIA_ROUNDING_RTOL
from mbcompose.parsers.exporters import ExportError
from mbcompose.parsers.exporters.collision import COLLISION_MODES

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

ROOT = Path(__file__).resolve().parents[2]
SEEKER_YAML = ROOT / "samples" / "seeker" / "seeker.yaml"
SEEKER_STEP = ROOT / "samples" / "seeker_cad" / "seeker.step"
PANDA_URDF = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
              / "panda_description" / "urdf" / "panda.urdf")
FORMATS = ("urdf", "xml", "sdf")


def _source(name: str) -> Path:
    if name == "seeker_step":
        pytest.importorskip("OCP")
        return SEEKER_STEP
    if name == "panda" and not PANDA_URDF.exists():
        pytest.skip(f"example-robot-data's panda not found at {PANDA_URDF}")
    return {"seeker_yaml": SEEKER_YAML, "panda": PANDA_URDF}[name]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """``exports(source)`` -> {mode: folder}: the lumped model of ``source`` written as ``m.urdf``,
    ``m.xml`` and ``m.sdf`` once per collision mode (convert's writers), each mode in its own folder."""
    made = {}

    def make(name: str) -> dict:
        if name not in made:
            composition = mbcompose.compose(str(_source(name)), loops="embed")
            made[name] = {}
            for mode in COLLISION_MODES:
                folder = tmp_path_factory.mktemp(f"{name}_{mode}")
                writers = export_writers(composition.lumped, [f"m.{f}" for f in FORMATS], folder, collision=mode)
                for rel, write in writers.items():
                    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                    write(folder / rel)
                made[name][mode] = folder
        return made[name]
    return make


def _pinocchio(folder: Path):
    return pin.buildModelsFromUrdf(str(folder / "m.urdf"), str(folder))


def _mesh_in_metres(path: str, scale) -> trimesh.Trimesh:
    mesh = trimesh.load(path, force="mesh")
    mesh.apply_scale(np.asarray(scale, float))
    return mesh


def _distance_outside(convex: trimesh.Trimesh, points) -> np.ndarray:
    """The signed distance (m, > 0 outside) of each of ``points`` (n, 3) to the convex polytope ``convex``,
    where it is outside or on its boundary (else the largest of its face-plane distances, <= 0): a point
    is inside a convex polytope when it is on the inner side of every face plane; for one that is not,
    the exact distance to the nearest triangle (``trimesh.triangles.closest_point``)."""
    planes = np.einsum("fk,nk->nf", convex.face_normals, points) - np.einsum(
        "fk,fk->f", convex.face_normals, convex.triangles[:, 0])[None, :]
    out = planes.max(axis=1)
    for i in np.flatnonzero(out > 0):
        tri = convex.triangles
        nearest = trimesh.triangles.closest_point(tri, np.repeat(points[i][None, :], len(tri), axis=0))
        out[i] = np.linalg.norm(nearest - points[i], axis=1).min()
    return out


def _assert_same_geometries(a, b) -> None:
    """Two Pinocchio geometry models with the same shapes at the same placements (mesh files by name)."""
    assert a.ngeoms == b.ngeoms
    for x, y in zip(a.geometryObjects, b.geometryObjects):
        assert (x.name, Path(x.meshPath).name, type(x.geometry)) == (y.name, Path(y.meshPath).name, type(y.geometry))
        np.testing.assert_allclose(x.placement.homogeneous, y.placement.homogeneous, rtol=0, atol=0)
        np.testing.assert_array_equal(x.meshScale, y.meshScale)


@pytest.mark.parametrize("source", ["seeker_yaml", "seeker_step", "panda"])
def test_urdf_hull_export_has_one_convex_hull_per_part_containing_its_mesh(source, exports):
    folders = exports(source)
    _, collision_mesh, visual_mesh = _pinocchio(folders["mesh"])
    _, collision_hull, visual_hull = _pinocchio(folders["hull"])
    _assert_same_geometries(visual_hull, visual_mesh)
    assert collision_hull.ngeoms == collision_mesh.ngeoms > 0
    hulls = 0
    for original, hull in zip(collision_mesh.geometryObjects, collision_hull.geometryObjects):
        np.testing.assert_allclose(hull.placement.homogeneous, original.placement.homogeneous, rtol=0, atol=0)
        if not original.meshPath.endswith(".stl"):            # a primitive stays as it was
            assert type(hull.geometry) is type(original.geometry) and hull.meshPath == original.meshPath
            continue
        hulls += 1
        assert Path(hull.meshPath).name.endswith("_hull.stl") and Path(hull.meshPath).parent.name == "assets"
        part = _mesh_in_metres(original.meshPath, original.meshScale)
        convex = _mesh_in_metres(hull.meshPath, hull.meshScale)
        assert convex.is_convex and convex.is_volume
        outside = _distance_outside(convex, part.vertices)
        assert outside.max() <= DECLARED_GEOMETRY_ATOL, (hull.meshPath, outside.max())
        assert len(convex.vertices) <= len(np.unique(part.vertices, axis=0))
    assert hulls == {"seeker_yaml": 9, "seeker_step": 9, "panda": 9}[source]


@pytest.mark.parametrize("source", ["seeker_yaml", "panda"])
def test_hull_and_no_collision_exports_keep_the_mass_matrix(source, exports):
    folders = exports(source)
    models = {mode: _pinocchio(folders[mode])[0] for mode in COLLISION_MODES}
    rng = np.random.default_rng(27)
    for _ in range(3):
        q = pin.randomConfiguration(models["mesh"], -np.ones(models["mesh"].nq), np.ones(models["mesh"].nq))
        M = {}
        for mode, model in models.items():
            M[mode] = pin.crba(model, model.createData(), q)
        scale = np.abs(M["mesh"]).max()
        for mode in ("hull", "none"):
            np.testing.assert_allclose(M[mode], M["mesh"], rtol=0, atol=INERTIA_ROUNDING_RTOL * scale)
    mj = {mode: mujoco.MjModel.from_xml_path(str(folders[mode] / "m.xml")) for mode in COLLISION_MODES}
    q = rng.uniform(-1, 1, mj["mesh"].nq)
    full = {}
    for mode, m in mj.items():
        d = mujoco.MjData(m)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        full[mode] = np.zeros((m.nv, m.nv))
        try:
            mujoco.mj_fullM(m, d, full[mode])              # MuJoCo >= 4
        except TypeError:
            mujoco.mj_fullM(m, full[mode], d.qM)           # MuJoCo 3
    for mode in ("hull", "none"):
        np.testing.assert_allclose(full[mode], full["mesh"], rtol=0, atol=INERTIA_ROUNDING_RTOL * np.abs(full["mesh"]).max())


def _colliding(m) -> np.ndarray:
    return np.flatnonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0))


def _shown(m, folder: Path) -> list:
    """(body, type, mesh file, size) of each geom MuJoCo shows by default (groups 0 to 2; the class
    ``collision`` of the exports is group 3)."""
    files = {el.get("name"): el.get("file") for el in ET.parse(folder / "m.xml").getroot().iter("mesh")}
    return [(int(m.geom_bodyid[i]), int(m.geom_type[i]),
             files[m.mesh(m.geom_dataid[i]).name] if m.geom_dataid[i] >= 0 else None, tuple(m.geom_size[i]))
            for i in np.flatnonzero(m.geom_group <= 2)]


@pytest.mark.parametrize("source", ["seeker_yaml", "panda"])
def test_mujoco_loads_the_hull_export_and_its_colliding_geoms_are_the_hulls(source, exports):
    folders = exports(source)
    m_mesh = mujoco.MjModel.from_xml_path(str(folders["mesh"] / "m.xml"))
    m_hull = mujoco.MjModel.from_xml_path(str(folders["hull"] / "m.xml"))
    assert _shown(m_hull, folders["hull"]) == _shown(m_mesh, folders["mesh"])
    assert not any(str(f).endswith("_hull.stl") for _, _, f, _ in _shown(m_hull, folders["hull"]))
    assert len(_colliding(m_hull)) == len(_colliding(m_mesh))
    root = ET.parse(folders["hull"] / "m.xml").getroot()
    files = {el.get("name"): el.get("file") for el in root.iter("mesh")}
    meshes = 0
    for i in _colliding(m_hull):
        if m_hull.geom_type[i] != mujoco.mjtGeom.mjGEOM_MESH:
            continue
        meshes += 1
        name = m_hull.mesh(m_hull.geom_dataid[i]).name
        assert files[name].endswith("_hull.stl")
        hull = trimesh.load(str(folders["hull"] / files[name]), force="mesh")
        assert m_hull.mesh_vertnum[m_hull.geom_dataid[i]] == len(hull.vertices)
    assert meshes == 9


@pytest.mark.parametrize("source", ["seeker_yaml", "panda"])
def test_no_collision_export_writes_visual_shapes_only(source, exports):
    folders = exports(source)
    _, collision, visual = _pinocchio(folders["none"])
    _, _, visual_mesh = _pinocchio(folders["mesh"])
    assert collision.ngeoms == 0
    _assert_same_geometries(visual, visual_mesh)
    m = mujoco.MjModel.from_xml_path(str(folders["none"] / "m.xml"))
    assert len(_colliding(m)) == 0
    assert _shown(m, folders["none"]) == _shown(mujoco.MjModel.from_xml_path(str(folders["mesh"] / "m.xml")),
                                                folders["mesh"])
    sdf = {mode: ET.parse(folders[mode] / "m.sdf").getroot() for mode in ("none", "mesh")}
    assert not list(sdf["none"].iter("collision"))
    assert len(list(sdf["none"].iter("visual"))) == len(list(sdf["mesh"].iter("visual")))
    assert not list((folders["none"] / "assets").glob("*_hull.stl"))


def test_sdf_hull_export_references_the_hulls(exports):
    folders = exports("seeker_yaml")
    root = ET.parse(folders["hull"] / "m.sdf").getroot()
    uris = [u.text for c in root.iter("collision") for u in c.iter("uri")]
    assert len(uris) == 9 and all(u.endswith("_hull.stl") and (folders["hull"] / u).exists() for u in uris)
    visual_uris = {u.text for c in root.iter("visual") for u in c.iter("uri")}
    assert len(visual_uris) == 9 and not any(u.endswith("_hull.stl") for u in visual_uris)


PRIMITIVES_YAML = """
format: mbcompose-assembly/1
name: primitives
bodies:
  - name: base
    inertial: {mass: 1.0, com: [0, 0, 0], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
    geometry:
      - box: {size: [0.1, 0.2, 0.3]}
      - sphere: {radius: 0.05}
  - name: bare
    inertial: {mass: 0.5, com: [0, 0, 0.1], inertia: {ixx: 0.001, iyy: 0.001, izz: 0.001}}
joints:
  - {name: fix, type: fixed, reference: ground, secondary: base}
  - {name: hinge, type: revolute, reference: base, secondary: bare, origin: [0, 0, 0], axis: [0, 1, 0]}
"""


def test_hull_export_keeps_primitives_and_a_part_without_shapes_gets_none(tmp_path):
    src = tmp_path / "primitives.yaml"
    src.write_text(PRIMITIVES_YAML)
    out = tmp_path / "out" / "p.urdf"
    out.parent.mkdir()
    r = CliRunner().invoke(main, ["convert", str(src), "-o", str(out), "--collision", "hull", "--no-lumping"])
    assert r.exit_code == 0, r.output
    _, collision, visual = pin.buildModelsFromUrdf(str(out), str(out.parent))
    assert [type(g.geometry).__name__ for g in collision.geometryObjects] == ["Box", "Sphere"]
    assert [type(g.geometry).__name__ for g in visual.geometryObjects] == ["Box", "Sphere"]
    assert not (out.parent / "assets").exists()


def test_convert_collision_option_writes_hulls_beside_the_export_and_refuses_unknown_modes(tmp_path):
    out = tmp_path / "seeker.urdf"
    r = CliRunner().invoke(main, ["convert", str(SEEKER_YAML), "-o", str(out), "--collision", "hull"])
    assert r.exit_code == 0, r.output
    hulls = sorted(p.name for p in (tmp_path / "assets").glob("*_hull.stl"))
    assert len(hulls) == 9 and "housing_hull.stl" in hulls
    assert ET.parse(out).getroot().find("link/collision/geometry/mesh").get("filename").startswith("assets/")
    r = CliRunner().invoke(main, ["convert", str(SEEKER_YAML), "-o", str(out), "--collision", "hul"])
    assert r.exit_code == 2 and "hull" in r.output
    r = CliRunner().invoke(main, ["convert", "--help"])
    assert "--collision" in r.output and "convex hull" in r.output
    with pytest.raises(ExportError, match="mesh, hull, none"):
        export_writers(mbcompose.compose(str(SEEKER_YAML)).lumped, ["m.urdf"], tmp_path, collision="hulls")


def test_pipeline_collision_option_hulls_the_exports_and_keeps_the_model_file(tmp_path):
    from mbcompose.composer.config import load_pipeline
    from mbcompose.parsers.errors import InputError

    config = tmp_path / "pipeline.yaml"
    config.write_text(f"input: {SEEKER_YAML}\noutputs:\n  directory: out\n  exports: [urdf, mjcf]\n"
                      "  collision: hull\n  report: false\n  graphs: []\n")
    r = CliRunner().invoke(main, ["run", str(config)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    assert len(list((out / "assets").glob("*_hull.stl"))) == 9
    _, collision, _ = pin.buildModelsFromUrdf(str(out / "seeker.urdf"), str(out))
    assert collision.ngeoms == 9 and all(g.meshPath.endswith("_hull.stl") for g in collision.geometryObjects)
    assert "_hull" not in (out / "seeker.model.yaml").read_text()
    config.write_text(config.read_text().replace("collision: hull", "collision: hul"))
    with pytest.raises(InputError, match="did you mean 'hull'"):
        load_pipeline(config)


def test_a_flat_mesh_has_no_hull_and_says_which_file(tmp_path):
    from mbcompose.parsers.errors import InputError
    from mbcompose.parsers.exporters.collision import convex_hull_mesh

    flat = tmp_path / "plate.stl"
    trimesh.Trimesh(vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], faces=[[0, 1, 2], [1, 3, 2]]).export(flat)
    with pytest.raises(InputError, match="plate.stl.*span no volume") as info:
        convex_hull_mesh(flat)
    assert info.value.file == str(flat)
    box = tmp_path / "box.stl"
    trimesh.creation.box(extents=(0.1, 0.2, 0.3)).export(box)
    assert np.isclose(convex_hull_mesh(box).volume, 0.1 * 0.2 * 0.3, rtol=INERTIA_ROUNDING_RTOL)
