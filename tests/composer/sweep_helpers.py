"""Helpers shared by the sweep tests: sweep configs in a temporary folder, and
the independent reference (an edited copy of the seeker file composed on its own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

import mbcompose
from mbcompose import dynamics

ROOT = Path(__file__).resolve().parents[2]
SEEKER = ROOT / "samples" / "seeker" / "seeker.yaml"


def write_sweep(tmp_path: Path, parameters: list[dict], name: str = "sweep", **sections) -> Path:
    """A pipeline file sweeping the seeker, writing into ``tmp_path / 'out'``."""
    doc = {"input": str(SEEKER), "outputs": {"directory": str(tmp_path / "out"), "report": False},
           "sweep": {"parameters": parameters}}
    for key, value in sections.items():
        if key in ("record", "combine"):
            doc["sweep"][key] = value
        elif key in ("simulation", "report"):
            doc["outputs"][key] = value
        else:
            doc[key] = value
    tmp_path.mkdir(parents=True, exist_ok=True)
    target = tmp_path / f"{name}.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False))
    return target


def grid_3x3() -> list[dict]:
    return [{"path": "bodies.camera.mass", "values": [0.1, 0.2, 0.3]},
            {"name": "pitch_offset", "path": ["joints.pitch_a.origin[2]", "joints.pitch_b.origin[2]"],
             "values": [0.0, -3.0, -6.0]}]


def edited_seeker(tmp_path: Path, camera_mass: float, pitch_offset: float) -> Path:
    """The seeker file with the camera's density chosen to give ``camera_mass`` (kg) and both
    pitch bearings moved by ``pitch_offset`` (mm) along z, written as a new file.

    The density follows from the camera's mass at aluminium's density in the
    unmodified file (mass is proportional to density for a body made of one material).
    """
    base_mass = mbcompose.compose(SEEKER).assembly.body("camera").mass.mass
    doc = yaml.safe_load(SEEKER.read_text())
    for body in doc["bodies"]:
        for shape in body["geometry"]:
            shape["mesh"] = str(SEEKER.parent / shape["mesh"])
        if body["name"] == "camera":
            del body["material"]
            body["density"] = 2700.0 * camera_mass / base_mass
    for joint in doc["joints"]:
        if joint["name"] in ("pitch_a", "pitch_b"):
            joint["origin"][2] = pitch_offset
    target = tmp_path / f"seeker_{camera_mass:g}_{pitch_offset:g}.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False))
    return target


def reference_outputs(path: Path) -> dict:
    """dof, total mass, M, its eigenvalues and the gravity bias of ``path`` composed on its own."""
    c = mbcompose.compose(path)
    model = c.model
    q, zero = model.neutral(), np.zeros(model.nv)
    M = dynamics.mass_matrix(model, q)
    return {"dof": c.analysis.dof, "total_mass": sum(b.mass.mass for b in c.assembly.bodies),
            "names": [n for n in model.joint_names if model.v_slice(n).stop - model.v_slice(n).start == 1],
            "M": M, "eig": np.linalg.eigvalsh(M),
            "bias": dynamics.inverse_dynamics(model, q, zero, zero)}
