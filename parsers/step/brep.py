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
import re
from dataclasses import dataclass, field

import numpy as np

from mbcompose.dynamics.tolerances import STEP_DENSITY_RTOL, STEP_SEWING_TOL

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


#: SI prefixes of STEP (``StepBasic_SiPrefix``) -> factor
SI_PREFIXES = {"Exa": 1e18, "Peta": 1e15, "Tera": 1e12, "Giga": 1e9, "Mega": 1e6, "Kilo": 1e3, "Hecto": 1e2,
               "Deca": 1e1, "Deci": 1e-1, "Centi": 1e-2, "Milli": 1e-3, "Micro": 1e-6, "Nano": 1e-9,
               "Pico": 1e-12, "Femto": 1e-15, "Atto": 1e-18}

#: instance or product names that CAD systems and OpenCascade generate (not chosen by a person):
#: empty, SolidWorks' ``NAUO12`` (next_assembly_usage_occurrence ids), OpenCascade's ``=>[0:1:1:4]``
#: (label entries, build123d and OCC exports), unnamed ``$``
GENERATED_NAME = re.compile(r"^(|\$|NAUO\d+|=>\[[0-9:]+\])$")


@dataclass
class LeafPart:
    """A leaf solid of the XCAF tree, placed in the assembly frame (mm).

    name : the part's name before numbering: the instance name unless it is generated
        (:data:`GENERATED_NAME`), else the product name (:func:`part_name`).
    path : the names (same rule) from the root down to this instance.
    shape : TopoDS_Shape moved to its composed placement.
    placement : (4, 4) composed placement of the instance (mm).
    color : (3,) RGB in [0, 1] or None.
    density : kg/m^3 from the file's material (in the unit the file declares), or None.
    """

    name: str
    path: tuple[str, ...]
    shape: object
    placement: np.ndarray
    color: tuple[float, float, float] | None
    density: float | None
    product: str = field(default="")


def read_document(path) -> tuple[object, float, DensityUnits]:
    """Read a STEP file with XCAF; (document, file length unit in metres, its density units).

    The path is made absolute first: OpenCascade looks for the files an assembly references
    (SolidWorks' multi-file exports) relative to the working folder, not the top file's folder.
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
    from pathlib import Path
    if reader.ReadFile(str(Path(path).resolve())) != IFSelect_RetDone:
        raise InputError("not a readable STEP file (AP203/AP214/AP242 expected)", file=str(path))
    unit = file_length_unit(reader, path)
    if not reader.Transfer(doc):
        raise InputError("the STEP file holds no transferable shape (truncated?)", file=str(path))
    return doc, unit, DensityUnits.of(reader, doc, path)


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


def _named_unit(unit) -> tuple[str, float] | None:
    """('mass', kg per unit) or ('length', m per unit) of a STEP named unit (SI or conversion based), else None."""
    import OCP.StepBasic as SB
    kinds = ((SB.StepBasic_SiUnitAndMassUnit, "mass", 1e-3), (SB.StepBasic_SiUnitAndLengthUnit, "length", 1.0))
    for cls, kind, base in kinds:          # SI names: GRAM (1e-3 kg), METRE
        if isinstance(unit, cls):
            prefix = str(unit.Prefix()).rsplit("_sp", 1)[-1] if unit.HasPrefix() else ""
            return kind, base * SI_PREFIXES.get(prefix, 1.0)
    converted = ((SB.StepBasic_ConversionBasedUnitAndMassUnit, "mass"),
                 (SB.StepBasic_ConversionBasedUnitAndLengthUnit, "length"))
    for cls, kind in converted:            # pound, inch...: a factor times another named unit
        if isinstance(unit, cls):
            factor = unit.ConversionFactor()
            inner = _named_unit(factor.UnitComponent().NamedUnit())
            return None if inner is None or inner[0] != kind else (kind, factor.ValueComponent() * inner[1])
    return None


def density_unit(item) -> tuple[float | None, str]:
    """(kg/m^3 per unit of a density measure item's value, or None when it has no usable unit; a note).

    The unit is the item's DERIVED_UNIT: a mass unit over a length unit cubed.  Exponents other
    than (1, -3) are read as mass / length^3 with a note: OpenCascade's own writer (7.x, 8.0)
    writes its g/cm^3 as ``GRAM^3 CENTI.METRE^2``.
    """
    unit = item.Measure().UnitComponent()
    derived = unit.DerivedUnit() if unit is not None else None
    if derived is None:
        return None, "no unit"
    found: dict[str, tuple[float, float]] = {}
    for k in range(derived.NbElements()):
        element = derived.ElementsValue(k + 1)
        named = _named_unit(element.Unit())
        if named is not None:
            found[named[0]] = (named[1], element.Exponent())
    if set(found) != {"mass", "length"}:
        return None, "a derived unit without a mass and a length"
    (mass, m_exp), (length, l_exp) = found["mass"], found["length"]
    note = "" if (m_exp, l_exp) == (1.0, -3.0) else f"exponents ({m_exp:g}, {l_exp:g}) read as (1, -3)"
    return mass / length ** 3, note


@dataclass
class DensityUnits:
    """How to turn the densities OpenCascade stored in the XCAF document into kg/m^3.

    OpenCascade (7.x, 8.0) converts a STEP density to its own g/cm^3 only for conversion-based
    units and treats SI units otherwise (Fusion 360's 7850 kg/m^3 comes back as 7.85e-6 per
    ``GetDensityForShape``, Inventor's 1 g/cm^3 as 1e-3).  So the file's own density items
    (MEASURE_REPRESENTATION_ITEMs named ``density...``) are read with their units
    (:func:`density_unit`) and paired with the stored values: when all of them share one unit,
    one common ratio must take every stored value to one of the file's (to ``STEP_DENSITY_RTOL``,
    :meth:`_paired`); it then converts every stored value.  Without a unit in
    the file, XCAF's g/cm^3 is assumed; mixed units fall back to it with a warning.

    scale : kg/m^3 per unit of ``XCAFDoc_MaterialTool.GetDensityForShape``.
    how : where the scale comes from (for the mass ``Source``).
    """

    scale: float = 1e6
    how: str = "no unit in the file: g/cm^3 assumed"

    @classmethod
    def of(cls, reader, doc, path) -> DensityUnits:
        from OCP.StepRepr import StepRepr_MeasureRepresentationItem
        model = reader.Reader().WS().Model()
        items = []
        for i in range(model.NbEntities()):
            e = model.Value(i + 1)
            if isinstance(e, StepRepr_MeasureRepresentationItem) and "densit" in _text(e.Name()).lower():
                items.append((e.Measure().ValueComponent(), *density_unit(e)))
        stored = _stored_densities(doc)
        if not items or not stored:
            return cls()
        factors = {f for _, f, _ in items}
        notes = sorted({n for _, _, n in items if n})
        if factors == {None}:
            return cls()
        if len(factors) == 1:
            f = factors.pop()
            found = cls._paired(sorted({v * f for v, _, _ in items}), stored)
            if found is not None:
                unit = f"the file's density unit ({f:g} kg/m^3 per unit{'; ' + notes[0] if notes else ''})"
                return cls(found, unit)
        log.warning("%s: the density values of the file's materials (%d, in %d units) could not be paired with "
                    "OpenCascade's; they are read as g/cm^3 (check the masses, or give densities)", path,
                    len(items), len(factors))
        return cls(1e6, "OpenCascade's value read as g/cm^3 (the file's units could not be paired)")

    @staticmethod
    def _paired(si: list[float], stored: list[float]) -> float | None:
        """The one ratio c with every stored value times c among the file's values (kg/m^3), or None.

        ``si`` and ``stored`` are sorted and distinct.  Materials OpenCascade did not attach to a
        solid are not stored, so ``stored`` may be shorter; when several ratios fit, the one
        pairing the sorted lists one to one is taken if the counts agree, else there is none.
        """

        def close(x: float, y: float) -> bool:
            return abs(x - y) <= STEP_DENSITY_RTOL * max(abs(x), abs(y))

        if not stored or not all(s > 0 for s in stored):
            return None
        fits = [c for c in (v / stored[0] for v in si) if all(any(close(s * c, v) for v in si) for s in stored)]
        if len(fits) == 1:
            return fits[0]
        if len(si) == len(stored) and si[0] / stored[0] in fits:
            return si[0] / stored[0]
        return None

    def kg_per_m3(self, label) -> float | None:
        """The density of a shape label in kg/m^3, or None when it has no material."""
        from OCP.XCAFDoc import XCAFDoc_MaterialTool
        d = XCAFDoc_MaterialTool.GetDensityForShape_s(label)
        return None if d == 0.0 else d * self.scale


def _stored_densities(doc) -> list[float]:
    """The sorted distinct densities of the document's materials, as ``GetDensityForShape`` reports them."""
    from OCP.XCAFDoc import XCAFDoc_DocumentTool, XCAFDoc_Material
    labels, _ = _sequences()
    found = labels()
    XCAFDoc_DocumentTool.MaterialTool_s(doc.Main()).GetMaterialLabels(found)
    out = set()
    for i in range(found.Length()):
        attr = XCAFDoc_Material()
        if found.Value(i + 1).FindAttribute(XCAFDoc_Material.GetID_s(), attr) and attr.GetDensity() > 0:
            out.add(attr.GetDensity() * 1e-3)    # GetDensityForShape's g/cm^3 -> "g/mm^3"
    return sorted(out)


def _text(h) -> str:
    """A Python string of an OCP handle string (HAsciiString or None)."""
    return "" if h is None else h.ToCString()


def _label_name(label) -> str | None:
    from OCP.TDataStd import TDataStd_Name
    attr = TDataStd_Name()
    if label.FindAttribute(TDataStd_Name.GetID_s(), attr):
        text = decode_step_string(_utf8_from_bytes(attr.Get().ToExtString())).strip()
        return text or None
    return None


def _utf8_from_bytes(text: str) -> str:
    """``text`` whose characters are the bytes of UTF-8 (one character per byte), decoded; else ``text``.

    OpenCascade (7.x, 8.0) decodes a name's STEP escapes (``\\X2\\00E7\\X0\\``, ``\\X\\E7``,
    ``\\S\\g``) and raw UTF-8 to UTF-8 bytes, then hands them back one character per byte
    ("Engrenagem_\u00c3\u00a7" for "Engrenagem_\u00e7").  A string that is not such bytes is kept.
    """
    if all(ord(c) < 128 for c in text) or any(ord(c) > 255 for c in text):
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return text


_STEP_ESCAPE = re.compile(r"\\X2\\((?:[0-9A-Fa-f]{4})*)\\X0\\|\\X4\\((?:[0-9A-Fa-f]{8})*)\\X0\\"
                          r"|\\X\\([0-9A-Fa-f]{2})|\\S\\(.)|\\P[A-I]\\|\\\\")


def decode_step_string(text: str) -> str:
    """A STEP (ISO 10303-21, 6.4.3) string with its escapes decoded to Unicode.

    ``\\X2\\00E7\\X0\\`` (UTF-16 code units), ``\\X4\\...\\X0\\`` (UTF-32), ``\\X\\E7``
    (one ISO 8859-1 byte), ``\\S\\g`` (the character + 128 of the current page, ISO 8859-1 here),
    ``\\PA\\`` (page switches, dropped) and ``\\\\`` (a backslash).  OCP 8.0.1 decodes them itself
    (to UTF-8 bytes, repaired by :func:`_utf8_from_bytes`); this decodes any that reach the
    reader verbatim (other OpenCascade versions or settings).
    """
    if "\\" not in text:
        return text

    def one(m: re.Match) -> str:
        x2, x4, x1, s = m.groups()
        if x2 is not None:
            units = bytes.fromhex(x2)
            return units.decode("utf-16-be", errors="replace")
        if x4 is not None:
            return bytes.fromhex(x4).decode("utf-32-be", errors="replace")
        if x1 is not None:
            return bytes.fromhex(x1).decode("latin-1")
        if s is not None:
            return chr(ord(s) + 128)
        return "\\" if m.group(0) == "\\\\" else ""
    return _STEP_ESCAPE.sub(one, text)


def part_name(instance: str | None, product: str | None) -> str:
    """The instance name unless it is generated (:data:`GENERATED_NAME`), else the product name, else 'part'."""
    for name in (instance, product):
        if name is not None and not GENERATED_NAME.match(name):
            return name
    return "part"


def _label_color(label) -> tuple[float, float, float] | None:
    from OCP.Quantity import Quantity_Color
    from OCP.XCAFDoc import XCAFDoc_ColorGen, XCAFDoc_ColorSurf, XCAFDoc_ColorTool
    c = Quantity_Color()
    for kind in (XCAFDoc_ColorGen, XCAFDoc_ColorSurf):
        if XCAFDoc_ColorTool.GetColor_s(label, kind, c):
            return (c.Red(), c.Green(), c.Blue())
    return None


def _location_matrix(loc) -> np.ndarray:
    t = loc.Transformation()
    m = np.eye(4)
    for i in range(3):
        for j in range(4):
            m[i, j] = t.Value(i + 1, j + 1)
    return m


def leaf_parts(doc, densities: DensityUnits | None = None) -> list[LeafPart]:
    """The leaf shapes of the XCAF tree, depth first, with composed placements, names, colours, densities.

    Names follow :func:`part_name`; ``densities`` converts the stored material densities (default:
    XCAF's g/cm^3).
    """
    densities = densities or DensityUnits()
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
        product_name = _label_name(product)
        name = part_name(_label_name(label) if product != label else None, product_name)
        color = _label_color(label) or _label_color(product) or inherited_color
        density = densities.kg_per_m3(product) or inherited_density
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
                            placement=_location_matrix(loc), color=color, density=density,
                            product=product_name or ""))

    for i in range(roots.Length()):
        walk(roots.Value(i + 1), TopLoc_Location(), (), None, None)
    return out


def unlocated(shape) -> tuple[object, np.ndarray]:
    """(``shape`` without its location, i.e. in its product's own frame; (4, 4) matrix of that location, mm).

    The instances of one product share their B-rep (the same ``TShape``) and differ only by this
    location, so what is computed on the unlocated shape serves every instance once moved.
    """
    from OCP.TopLoc import TopLoc_Location
    return shape.Located(TopLoc_Location()), _location_matrix(shape.Location())


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


def closed_solid(shape, tolerance: float | None = None) -> tuple[object | None, str | None]:
    """(a closed solid of ``shape`` or None, what was wrong with it or None).

    A shape whose solids are closed is returned as it is.  Otherwise its faces are sewn
    (``BRepBuilderAPI_Sewing``, ``tolerance`` mm) and, when every sewn shell is closed, made into a
    solid (``BRepBuilderAPI_MakeSolid``, oriented by ``ShapeFix_Solid`` so its volume is positive):
    the returned problem then says it was healed.  Otherwise (open surfaces, wires, sketches) the
    solid is None and the problem says why.
    """
    problem = solid_problem(shape)
    if problem is None:
        return shape, None
    healed = _sewn_solid(shape, STEP_SEWING_TOL if tolerance is None else tolerance)
    if healed is None:
        return None, problem
    return healed, f"{problem}: healed by sewing its faces into a closed shell"


def _sewn_solid(shape, tolerance: float):
    from OCP.BRep import BRep_Tool
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid, BRepBuilderAPI_Sewing
    from OCP.ShapeFix import ShapeFix_Solid
    from OCP.TopAbs import TopAbs_FACE, TopAbs_SHELL
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS
    if not TopExp_Explorer(shape, TopAbs_FACE).More():
        return None
    sewing = BRepBuilderAPI_Sewing(tolerance)
    sewing.Add(shape)
    sewing.Perform()
    shells, make = TopExp_Explorer(sewing.SewedShape(), TopAbs_SHELL), BRepBuilderAPI_MakeSolid()
    count = 0
    while shells.More():
        shell = (getattr(TopoDS, "Shell_s", None) or TopoDS.Shell)(shells.Current())
        if not BRep_Tool.IsClosed_s(shell):
            return None
        make.Add(shell)
        count += 1
        shells.Next()
    if count == 0:
        return None
    fix = ShapeFix_Solid(make.Solid())
    fix.Perform()
    solid = fix.Solid()
    if solid_problem(solid) is not None or not volume_properties(solid)[0] > 0.0:
        return None
    return solid


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
        node = tri.Node
        verts = np.array([node(i).Coord() for i in range(1, tri.NbNodes() + 1)]).reshape(-1, 3)
        if not loc.IsIdentity():
            m = _location_matrix(loc)
            verts = verts @ m[:3, :3].T + m[:3, 3]
        triangle = tri.Triangle
        tris = np.array([triangle(i).Get() for i in range(1, tri.NbTriangles() + 1)], dtype=int).reshape(-1, 3) - 1
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
    """The analytic surface of ``face`` if it is a plane, cylinder, sphere or torus, else None.

    Returns a dict (mm, assembly frame): ``kind``; ``point`` (plane: a point of
    the face; cylinder: a point of the axis; sphere, torus: the centre); ``direction``
    (plane: outward normal; cylinder, torus: unit axis); ``radius`` (torus: the major
    radius, of the circle of its tube's centres); ``minor`` (torus: the tube's radius, else 0);
    ``convex`` (the material is on the axis' side, or inside a torus' tube: a shaft, a
    ball; False for a bore, a socket, a raceway groove); ``extent`` (cylinder: (lo, hi)
    of the face along the axis from ``point``).
    """
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    from OCP.GeomAbs import (
        GeomAbs_Cylinder,
        GeomAbs_Plane,
        GeomAbs_Sphere,
        GeomAbs_Torus,
    )
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
    if kind == GeomAbs_Torus:
        tor = s.Torus()
        ax = tor.Axis()
        centre, axis = np.array(ax.Location().Coord()), np.array(ax.Direction().Coord())
        radial = (p - centre) - np.dot(p - centre, axis) * axis
        tube = centre + tor.MajorRadius() * radial / np.linalg.norm(radial)
        return {"kind": "torus", "point": centre, "direction": axis, "radius": tor.MajorRadius(),
                "minor": tor.MinorRadius(), "convex": bool(np.dot(p - tube, n) > 0.0), "extent": (0.0, 0.0)}
    return None
