"""Small valid models of each format (templates with ``$name`` slots) for the hostile corpus.

``yaml_model(mass="nan")`` is the native assembly with one value replaced;
likewise ``urdf_model``, ``mjcf_model``, ``sdf_model`` and ``pipeline``.  With
no argument each composes (a two-joint arm).
"""

from __future__ import annotations

import struct
from string import Template

SECRET = "TOP-SECRET-CONTENT-42"

YAML = Template("""\
format: mbcompose-assembly/1
name: arm
units: {length: m, mass: kg, angle: rad}
gravity: [0, 0, -9.81]
bodies:
  - name: link1
    inertial:
      mass: $mass
      com: [0, 0, -0.25]
      inertia: {ixx: $ixx, iyy: 0.021, izz: 0.0003, ixy: 0, ixz: 0, iyz: 0}
  - name: link2
    pose: {xyz: [0, 0, $z]}
    inertial:
      mass: 0.8
      com: [0, 0, -0.2]
      inertia: {ixx: 0.011, iyy: 0.011, izz: 0.0002, ixy: 0, ixz: 0, iyz: 0}
joints:
  - name: shoulder
    type: $type
    reference: ground
    secondary: link1
    origin: [0, 0, 0]
    axis: $axis
  - name: elbow
    type: revolute
    reference: $ref
    secondary: link2
    origin: [0, 0, -0.5]
    axis: [0, 1, 0]
""")
YAML_DEFAULTS = dict(mass="1.0", ixx="0.021", z="-0.5", type="revolute", axis="[0, 1, 0]", ref="link1")

URDF = Template("""\
<?xml version="1.0"?>
<robot name="arm">
  <link name="base">
    <inertial><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>
  <link name="upper">
    <inertial>
      <origin xyz="$com" rpy="0 0 0"/>
      <mass value="$mass"/>
      <inertia ixx="$ixx" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/>
    </inertial>
    $geometry
  </link>
  <joint name="shoulder" type="$type">
    <parent link="$parent"/>
    <child link="upper"/>
    <origin xyz="$xyz" rpy="0 0 0"/>
    <axis xyz="$axis"/>
    <limit lower="$lower" upper="2" effort="10" velocity="3"/>
  </joint>
</robot>
""")
URDF_DEFAULTS = dict(com="0.2 0 0", mass="1.5", ixx="0.001", geometry="", type="revolute", parent="base",
                     xyz="0 0 0.1", axis="0 0 1", lower="-1")

MJCF = Template("""\
<mujoco model="arm">
  <compiler angle="radian" $compiler/>
  $head
  <worldbody>
    <body name="upper" pos="$pos">
      <joint name="shoulder" type="$type" axis="$axis"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="$size" mass="$mass" group="$group"/>
      <body name="fore" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 0" mass="1" diaginertia="$diag"/>
      </body>
    </body>
  </worldbody>
</mujoco>
""")
MJCF_DEFAULTS = dict(compiler="", head="", pos="0 0 0.1", type="hinge", axis="0 0 1", size="0.03", mass="1",
                     group="0", diag="0.01 0.01 0.01")

SDF = Template("""\
<?xml version="1.0"?>
<sdf version="$version">
  <model name="arm">
    <link name="upper">
      <pose>$pose</pose>
      <inertial>
        <mass>$mass</mass>
        <inertia><ixx>0.001</ixx><iyy>0.004</iyy><izz>0.004</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
      </inertial>
    </link>
    <joint name="shoulder" type="$type">
      <parent>$parent</parent>
      <child>upper</child>
      <axis><xyz>$axis</xyz></axis>
    </joint>
    $extra
  </model>
</sdf>
""")
SDF_DEFAULTS = dict(version="1.7", pose="0 0 0.1 0 0 0", mass="1.5", type="revolute", parent="world",
                    axis="0 0 1", extra="")

PIPELINE = Template("""\
input: $input
$options
outputs:
  directory: $directory
  model: true
  exports: $exports
  graphs: []
  report: false
  simulation:
    duration: $duration
    samples: $samples
    integrator: $integrator
    rtol: $rtol
    atol: 1.0e-8
    initial: {q: $q}
    format: $format
""")
PIPELINE_DEFAULTS = dict(input="arm.yaml", options="", directory="out", exports="[]", duration="0.1",
                         samples="11", integrator="RK45", rtol="1.0e-8", q="{shoulder: 0.1}", format="csv")


def _fill(template: Template, defaults: dict, **values) -> str:
    return template.substitute({**defaults, **values})


def yaml_model(**values) -> str:
    return _fill(YAML, YAML_DEFAULTS, **values)


def urdf_model(**values) -> str:
    return _fill(URDF, URDF_DEFAULTS, **values)


def mjcf_model(**values) -> str:
    return _fill(MJCF, MJCF_DEFAULTS, **values)


def sdf_model(**values) -> str:
    return _fill(SDF, SDF_DEFAULTS, **values)


def pipeline(**values) -> str:
    return _fill(PIPELINE, PIPELINE_DEFAULTS, **values)


def tetra_stl(faces: int = 4) -> bytes:
    """A binary STL of a unit tetrahedron (closed, outward normals)."""
    v = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    tris = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    out = bytearray(b"tetra".ljust(80, b" ") + struct.pack("<I", faces))
    for t in tris[:faces]:
        out += struct.pack("<3f", 0, 0, 0)
        for i in t:
            out += struct.pack("<3f", *v[i])
        out += b"\0\0"
    return bytes(out)
