"""Write XCAF STEP assemblies (names, nested sub-assemblies, placements, colours, densities).

Used by the samples' generator scripts and the tests (with the solids of :mod:`parsers.step.solids`) to make real CAD
assemblies with OpenCascade (the ``cad`` extra), the same way a CAD program
exports them: one product per distinct shape, one named instance per use.

A tree is given as nested :class:`Node` objects::

    pin = Product("pin", shape, color=(0.7, 0.7, 0.7), density=7850.0)
    root = Node("linkage", children=[Node("pin_1", product=pin, placement=T1), ...])
    write_step("linkage.step", root, unit="MM")

Lengths of the shapes are millimetres; ``unit`` is the unit written in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .brep import require_ocp, silence_opencascade


@dataclass(eq=False)
class Product:
    """A part definition: name, OCP shape (mm), optional RGB colour and density (kg/m^3)."""

    name: str
    shape: object
    color: tuple[float, float, float] | None = None
    density: float | None = None


@dataclass(eq=False)
class Node:
    """An instance: a leaf (``product``) or a sub-assembly (``children``), placed by a 4x4 matrix (mm)."""

    name: str
    product: Product | None = None
    children: list["Node"] = field(default_factory=list)
    placement: np.ndarray = field(default_factory=lambda: np.eye(4))


def trsf(matrix) -> object:
    """gp_Trsf of a rigid 4x4 matrix (mm)."""
    from OCP.gp import gp_Trsf
    m = np.asarray(matrix, dtype=float)
    t = gp_Trsf()
    t.SetValues(*m[0, :4], *m[1, :4], *m[2, :4])
    return t


def _set_name(label, name: str) -> None:
    from OCP.TCollection import TCollection_ExtendedString
    from OCP.TDataStd import TDataStd_Name
    TDataStd_Name.Set_s(label, TCollection_ExtendedString(name))


def _add_product(tools, product: Product, cache: dict):
    from OCP.Quantity import Quantity_Color, Quantity_TOC_RGB
    from OCP.TCollection import TCollection_HAsciiString as H
    from OCP.XCAFDoc import XCAFDoc_ColorGen
    if id(product) in cache:
        return cache[id(product)]
    shape_tool, color_tool, material_tool = tools
    label = shape_tool.AddShape(product.shape, False)
    _set_name(label, product.name)
    if product.color is not None:
        color_tool.SetColor(label, Quantity_Color(*product.color, Quantity_TOC_RGB), XCAFDoc_ColorGen)
    if product.density is not None:   # XCAF keeps g/cm^3
        mat = material_tool.AddMaterial(H(f"{product.name}_material"), H(""), product.density * 1e-3,
                                        H("density"), H("POSITIVE_RATIO_MEASURE"))
        material_tool.SetMaterial(label, mat)
    cache[id(product)] = label
    return label


def _add_node(tools, node: Node, cache: dict):
    """The label of ``node``'s definition (a product, or a new assembly with its components)."""
    from OCP.TopLoc import TopLoc_Location
    if node.product is not None:
        return _add_product(tools, node.product, cache)
    shape_tool = tools[0]
    assembly = shape_tool.NewShape()
    _set_name(assembly, node.name)
    for child in node.children:
        definition = _add_node(tools, child, cache)
        component = shape_tool.AddComponent(assembly, definition, TopLoc_Location(trsf(child.placement)))
        _set_name(component, child.name)
    return assembly


def write_step(path, root: Node, unit: str = "MM", density_unit: str = "opencascade") -> None:
    """Write the tree under ``root`` (an assembly node) as an AP214 STEP file in ``unit`` (MM, M, INCH...).

    ``density_unit``: 'opencascade' writes densities as OpenCascade does (g/cm^3, in a derived
    unit whose exponents it writes as ``GRAM^3 CENTI.METRE^2``); 'kg/m^3' writes them as Fusion 360
    does, in ``KILO.GRAM^1 METRE^-3``; 'g/cm^3' in ``GRAM^1 CENTI.METRE^-3`` (:func:`_rewrite_densities`).
    """
    if density_unit not in DENSITY_UNITS:
        raise ValueError(f"density_unit must be one of {sorted(DENSITY_UNITS)}, got {density_unit!r}")
    require_ocp()
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.Interface import Interface_Static
    from OCP.STEPCAFControl import STEPCAFControl_Writer
    from OCP.STEPControl import STEPControl_AsIs
    from OCP.TCollection import TCollection_ExtendedString
    from OCP.TDocStd import TDocStd_Document
    from OCP.XCAFDoc import XCAFDoc_DocumentTool
    silence_opencascade()
    doc = TDocStd_Document(TCollection_ExtendedString("XmlOcaf"))
    main = doc.Main()
    tools = (XCAFDoc_DocumentTool.ShapeTool_s(main), XCAFDoc_DocumentTool.ColorTool_s(main),
             XCAFDoc_DocumentTool.MaterialTool_s(main))
    _add_node(tools, root, {})
    tools[0].UpdateAssemblies()
    Interface_Static.SetCVal_s("write.step.unit", unit)
    writer = STEPCAFControl_Writer()
    for mode in ("SetColorMode", "SetNameMode", "SetMaterialMode"):
        getattr(writer, mode)(True)
    if not writer.Transfer(doc, STEPControl_AsIs) or writer.Write(str(path)) != IFSelect_RetDone:
        raise RuntimeError(f"OpenCascade could not write {path}")
    if DENSITY_UNITS[density_unit] is not None:
        _rewrite_densities(path, *DENSITY_UNITS[density_unit])


#: density_unit of :func:`write_step` -> (factor from g/cm^3, SI_UNIT of the mass, SI_UNIT of the length),
#: None for OpenCascade's own output
DENSITY_UNITS = {"opencascade": None, "kg/m^3": (1e3, ".KILO.,.GRAM.", "$,.METRE."),
                 "g/cm^3": (1.0, "$,.GRAM.", ".CENTI.,.METRE.")}


_ENTITY = r"#{}\s*=\s*"


def _rewrite_densities(path, factor: float, mass: str, length: str) -> None:
    """Rewrite the density items of a file OpenCascade wrote (g/cm^3) in another unit, as CAD systems write them.

    Each ``MEASURE_REPRESENTATION_ITEM('density', POSITIVE_RATIO_MEASURE(v), #u)`` gets the value
    ``factor v`` and its DERIVED_UNIT #u the elements ``mass``^1 and ``length``^-3 (SI_UNIT arguments).
    """
    import re
    from pathlib import Path
    text = Path(path).read_text(encoding="latin-1")
    item = re.compile(r"MEASURE_REPRESENTATION_ITEM\('density',\s*POSITIVE_RATIO_MEASURE\(\s*([^)\s]+)\s*\),\s*#(\d+)\)")
    units = set()

    def value(m):
        units.add(m.group(2))
        return f"MEASURE_REPRESENTATION_ITEM('density',POSITIVE_RATIO_MEASURE({float(m.group(1)) * factor!r}),#{m.group(2)})"
    text = item.sub(value, text)
    for u in units:
        elements = re.search(_ENTITY.format(u) + r"DERIVED_UNIT\(\(#(\d+),\s*#(\d+)\)\)", text).groups()
        for e, (exponent, si) in zip(elements, (("1.", mass), ("-3.", length))):
            m = re.search(_ENTITY.format(e) + r"DERIVED_UNIT_ELEMENT\(#(\d+),\s*[-0-9.E]+\)", text)
            text = text.replace(m.group(0), f"#{e} = DERIVED_UNIT_ELEMENT(#{m.group(1)},{exponent})")
            named = re.search(_ENTITY.format(m.group(1)) + r"\(([^;]*?)SI_UNIT\([^)]*\)", text)
            text = text.replace(named.group(0), f"#{m.group(1)} = ({named.group(1)}SI_UNIT({si})")
    Path(path).write_text(text, encoding="latin-1")
