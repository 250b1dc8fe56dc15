"""OpenCascade helpers of the STEP reader: the XCAF tree, B-rep mass properties, meshes, faces.

Everything that touches OCP (the ``cadquery-ocp-novtk`` wheel, the ``cad``
extra) lives here; :mod:`.step` and :mod:`.mating` see plain numpy data.
Supported: OCP 7.8, 7.9 and 8.x.  The spellings that differ between them are
resolved here: label and string sequences (``OCP.TDF.TDF_LabelSequence`` in 7.x,
``OCP.collections.Sequence_TDF_Label`` in 8.x; :func:`_sequences`) and the
downcast ``TopoDS.Face_s`` (7.x) / ``TopoDS.Face`` (8.x) (:func:`_as_face`).
Tested with OCP 8.0.1.

Lengths: OpenCascade converts the file's geometry to the document unit, which
:func:`read_document` sets to millimetres; everything returned here is in mm.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

log = logging.getLogger(__name__)

#: the one line printed when OCP is missing
CAD_EXTRA_HINT = "reading STEP needs OpenCascade: install the 'cad' extra (pip install 'mbcompose[cad]')"

#: STEP length unit name (lower case, as OpenCascade reports it) -> metres
LENGTH_UNITS = {
    "millimetre": 1e-3, "millimeter": 1e-3, "mm": 1e-3,
    "metre": 1.0, "meter": 1.0, "m": 1.0,
    "centimetre": 1e-2, "centimeter": 1e-2, "cm": 1e-2,
    "micrometre": 1e-6, "micrometer": 1e-6, "micron": 1e-6,
    "kilometre": 1e3, "kilometer": 1e3,
    "inch": 0.0254, "foot": 0.3048,
}


def require_ocp(file=None):
    """Import OCP or raise the InputError naming ``file`` and the ``cad`` extra (never an ImportError)."""
    try:
        import OCP  # noqa: F401
        from OCP.STEPCAFControl import STEPCAFControl_Reader  # noqa: F401
    except ImportError:
        raise InputError(CAD_EXTRA_HINT, file=None if file is None else str(file)) from None
    return OCP


def _sequences():
    """(label sequence, ascii-string sequence) classes in this OCP version."""
    try:
        from OCP.collections import Sequence_TCollection_AsciiString, Sequence_TDF_Label
        return Sequence_TDF_Label, Sequence_TCollection_AsciiString
    except ImportError:  # OCP 7.x
        from OCP.TColStd import TColStd_SequenceOfAsciiString
        from OCP.TDF import TDF_LabelSequence
        return TDF_LabelSequence, TColStd_SequenceOfAsciiString


def silence_opencascade() -> None:
    """Remove OpenCascade's console printers (library code logs, never prints)."""
    from OCP.Message import Message
    Message.DefaultMessenger_s().ChangePrinters().Clear()


@dataclass
class LeafPart:
    """A leaf solid of the XCAF tree, placed in the assembly frame (mm).

    name : instance name (else product name), made unique later by its path.
    path : names from the root down to this instance.
    shape : TopoDS_Shape moved to its composed placement.
    placement : (4, 4) composed placement of the instance (mm).
    color : (3,) RGB in [0, 1] or None.
    density : kg/m^3 from the file's material, or None.
    """

    name: str
    path: tuple[str, ...]
    shape: object
    placement: np.ndarray
    color: tuple[float, float, float] | None
    density: float | None


def read_document(path) -> tuple[object, float]:
    """Read a STEP file with XCAF; (document, file length unit in metres).

    Raises InputError for a file that is not STEP, a truncated one, or an unknown unit.
    """
    require_ocp(path)
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.STEPCAFControl import STEPCAFControl_Reader
    from OCP.TCollection import TCollection_ExtendedString
    from OCP.TDocStd import TDocStd_Document
    from OCP.UnitsMethods import UnitsMethods_LengthUnit
    from OCP.XCAFDoc import XCAFDoc_DocumentTool
    silence_opencascade()
    doc = TDocStd_Document(TCollection_ExtendedString("XmlOcaf"))
    XCAFDoc_DocumentTool.SetLengthUnit_s(doc, 1.0, UnitsMethods_LengthUnit.UnitsMethods_LengthUnit_Millimeter)
    reader = STEPCAFControl_Reader()
    for mode in ("SetColorMode", "SetNameMode", "SetMatMode"):
        getattr(reader, mode)(True)
    if reader.ReadFile(str(path)) != IFSelect_RetDone:
        raise InputError("not a readable STEP file (AP203/AP214/AP242 expected)", file=str(path))
    unit = file_length_unit(reader, path)
    if not reader.Transfer(doc):
        raise InputError("the STEP file holds no transferable shape (truncated?)", file=str(path))
    return doc, unit


def file_length_unit(reader, path) -> float:
    """The file's length unit in metres (the first unit of its shape representations)."""
    _, strings = _sequences()
    lengths, angles, solid = strings(), strings(), strings()
    reader.Reader().FileUnits(lengths, angles, solid)
    names = [lengths.Value(i + 1).ToCString().strip().lower() for i in range(lengths.Length())]
    if not names:
        raise InputError("the STEP file declares no length unit (truncated?)", file=str(path))
    if len(set(names)) > 1:
        log.info("%s: several length units %s; the first is reported as the file's unit", path, names)
    if names[0] not in LENGTH_UNITS:
        raise InputError(f"unknown length unit {names[0]!r} (known: {', '.join(sorted(LENGTH_UNITS))})",
                         file=str(path))
    return LENGTH_UNITS[names[0]]


def _label_name(label) -> str | None:
    from OCP.TDataStd import TDataStd_Name
    attr = TDataStd_Name()
    if label.FindAttribute(TDataStd_Name.GetID_s(), attr):
        text = attr.Get().ToExtString().strip()
        return text or None
    return None


def _label_color(label) -> tuple[float, float, float] | None:
    from OCP.Quantity import Quantity_Color
    from OCP.XCAFDoc import XCAFDoc_ColorGen, XCAFDoc_ColorSurf, XCAFDoc_ColorTool
    c = Quantity_Color()
    for kind in (XCAFDoc_ColorGen, XCAFDoc_ColorSurf):
        if XCAFDoc_ColorTool.GetColor_s(label, kind, c):
            return (c.Red(), c.Green(), c.Blue())
    return None


def _label_density(label) -> float | None:
    """kg/m^3; XCAF reports g/mm^3 (its stored g/cm^3 times 1e-3), 0 when there is none."""
    from OCP.XCAFDoc import XCAFDoc_MaterialTool
    d = XCAFDoc_MaterialTool.GetDensityForShape_s(label)
    return None if d == 0.0 else d * 1e6


def _location_matrix(loc) -> np.ndarray:
    t = loc.Transformation()
    m = np.eye(4)
    for i in range(3):
        for j in range(4):
            m[i, j] = t.Value(i + 1, j + 1)
    return m


def leaf_parts(doc) -> list[LeafPart]:
    """The leaf shapes of the XCAF tree, depth first, with composed placements, names, colours, densities."""
    from OCP.TDF import TDF_Label
    from OCP.TopLoc import TopLoc_Location
    from OCP.XCAFDoc import XCAFDoc_DocumentTool, XCAFDoc_ShapeTool
    labels, _ = _sequences()
    tool = XCAFDoc_DocumentTool.ShapeTool_s(doc.Main())
    roots = labels()
    tool.GetFreeShapes(roots)
    out: list[LeafPart] = []

    def walk(label, loc, path, inherited_color, inherited_density):
        product = label
        if XCAFDoc_ShapeTool.IsReference_s(label):
            product = TDF_Label()
            XCAFDoc_ShapeTool.GetReferredShape_s(label, product)
            loc = loc.Multiplied(XCAFDoc_ShapeTool.GetLocation_s(label))
        name = _label_name(label) or _label_name(product) or "part"
        color = _label_color(label) or _label_color(product) or inherited_color
        density = _label_density(product) or inherited_density
        if XCAFDoc_ShapeTool.IsAssembly_s(product):
            comps = labels()
            XCAFDoc_ShapeTool.GetComponents_s(product, comps, False)
            for i in range(comps.Length()):
                walk(comps.Value(i + 1), loc, path + (name,), color, density)
            return
        shape = XCAFDoc_ShapeTool.GetShape_s(product)
        if _is_empty(shape):        # an empty assembly or sub-assembly
            return
        out.append(LeafPart(name=name, path=path + (name,), shape=shape.Moved(loc),
                            placement=_location_matrix(loc), color=color, density=density))

    for i in range(roots.Length()):
        walk(roots.Value(i + 1), TopLoc_Location(), (), None, None)
    return out


def _is_empty(shape) -> bool:
    from OCP.TopoDS import TopoDS_Iterator
    return shape is None or shape.IsNull() or not TopoDS_Iterator(shape).More()


def solid_problem(shape) -> str | None:
    """Why ``shape`` is not a closed solid ('open shell', 'no solid'), or None."""
    from OCP.BRep import BRep_Tool
    from OCP.TopAbs import TopAbs_SHELL, TopAbs_SOLID
    from OCP.TopExp import TopExp_Explorer
    shells = TopExp_Explorer(shape, TopAbs_SHELL)
    if not TopExp_Explorer(shape, TopAbs_SOLID).More():
        if shells.More() and not BRep_Tool.IsClosed_s(shells.Current()):
            return "open shell (surfaces that do not close a solid)"
        return "no solid (surfaces or wires only)"
    while shells.More():
        if not BRep_Tool.IsClosed_s(shells.Current()):
            return "open shell (the solid is not closed)"
        shells.Next()
    return None


def volume_properties(shape) -> tuple[float, np.ndarray, np.ndarray]:
    """BRepGProp volume properties at unit density, in the shape's frame (mm).

    Returns volume (mm^3), centre of mass (3,) mm and inertia about it (3, 3) mm^5
    (multiply by a density to get mass units times mm^2).
    """
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(shape, props)
    com = np.array(props.CentreOfMass().Coord())
    mat = props.MatrixOfInertia()
    inertia = np.array([[mat.Value(i + 1, j + 1) for j in range(3)] for i in range(3)])
    return float(props.Mass()), com, 0.5 * (inertia + inertia.T)


def _as_face(topods, shape):
    """TopoDS.Face_s (OCP 7.x) or TopoDS.Face (OCP 8.x)."""
    return (getattr(topods, "Face_s", None) or topods.Face)(shape)


def tessellate_faces(shape, deflection: float, angular: float = 0.3) -> list[tuple[object, np.ndarray, np.ndarray]]:
    """Mesh ``shape`` (BRepMesh: linear deflection in mm, angular deflection in rad).

    Returns per face (face, vertices (n, 3), triangles (m, 3)).

    Triangles are ordered so that their normals point out of the solid.
    """
    from OCP.BRep import BRep_Tool
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.TopAbs import TopAbs_FACE, TopAbs_REVERSED
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS
    BRepMesh_IncrementalMesh(shape, deflection, False, angular, True)
    out = []
    faces = TopExp_Explorer(shape, TopAbs_FACE)
    while faces.More():
        face = _as_face(TopoDS, faces.Current())
        faces.Next()
        loc = TopLoc_Location()
        tri = BRep_Tool.Triangulation_s(face, loc)
        if tri is None:
            out.append((face, np.zeros((0, 3)), np.zeros((0, 3), dtype=int)))
            continue
        trsf = loc.Transformation()
        verts = np.array([tri.Node(i + 1).Transformed(trsf).Coord() for i in range(tri.NbNodes())])
        tris = np.array([tri.Triangle(i + 1).Get() for i in range(tri.NbTriangles())], dtype=int) - 1
        if face.Orientation() == TopAbs_REVERSED:
            tris = tris[:, ::-1]
        out.append((face, verts, tris))
    return out


def _outward_normal(face, u: float, v: float) -> tuple[np.ndarray, np.ndarray]:
    """(point, unit normal pointing out of the material) at (u, v) of ``face``."""
    from OCP.BRepGProp import BRepGProp_Face
    from OCP.gp import gp_Pnt, gp_Vec
    p, n = gp_Pnt(), gp_Vec()
    BRepGProp_Face(face).Normal(u, v, p, n)
    n = np.array(n.Coord())
    return np.array(p.Coord()), n / np.linalg.norm(n)


def face_surface(face) -> dict | None:
    """The analytic surface of ``face`` if it is a plane, cylinder or sphere, else None.

    Returns a dict (mm, assembly frame): ``kind``; ``point`` (plane: a point of
    the face; cylinder: a point of the axis; sphere: the centre); ``direction``
    (plane: outward normal; cylinder: unit axis); ``radius``; ``convex`` (the
    material is on the axis' side: a shaft or a ball; False for a bore or socket);
    ``extent`` (cylinder: (lo, hi) of the face along the axis from ``point``).
    """
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.GeomAbs import GeomAbs_Cylinder, GeomAbs_Plane, GeomAbs_Sphere
    s = BRepAdaptor_Surface(face, True)
    kind = s.GetType()
    u = 0.5 * (s.FirstUParameter() + s.LastUParameter())
    v = 0.5 * (s.FirstVParameter() + s.LastVParameter())
    p, n = _outward_normal(face, u, v)
    if kind == GeomAbs_Plane:
        return {"kind": "plane", "point": p, "direction": n, "radius": 0.0, "convex": True, "extent": (0.0, 0.0)}
    if kind == GeomAbs_Cylinder:
        cyl = s.Cylinder()
        ax = cyl.Axis()
        origin, axis = np.array(ax.Location().Coord()), np.array(ax.Direction().Coord())
        radial = (p - origin) - np.dot(p - origin, axis) * axis
        return {"kind": "cylinder", "point": origin, "direction": axis, "radius": cyl.Radius(),
                "convex": bool(np.dot(radial, n) > 0.0),
                "extent": (s.FirstVParameter(), s.LastVParameter())}
    if kind == GeomAbs_Sphere:
        sph = s.Sphere()
        centre = np.array(sph.Location().Coord())
        return {"kind": "sphere", "point": centre, "direction": np.array([0.0, 0.0, 1.0]), "radius": sph.Radius(),
                "convex": bool(np.dot(p - centre, n) > 0.0), "extent": (0.0, 0.0)}
    return None
