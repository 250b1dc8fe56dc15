"""The moving scene as a binary glTF 2.0 file (GLB) that common viewers open.

One node per moving body (its shapes as one mesh, one material per body
colour), ground shapes under the scene root, and, when the scene has more than
one frame, one animation whose channels sample every body's translation and
rotation (quaternion x, y, z, w) at the scene's times, linearly interpolated.
glTF is y-up; the assembly frame (z-up as a rule) is turned by -90 degrees about
x at the root node, so the model stands upright in glTF viewers.

Written by hand (the container is small): a JSON chunk and a BIN chunk, every
buffer view 4-byte aligned.  Reference: the Khronos glTF 2.0 specification.
"""

from __future__ import annotations

import json
import struct

import numpy as np

FLOAT, ARRAY_BUFFER = 5126, 34962
Z_UP_TO_Y_UP = [-0.7071067811865476, 0.0, 0.0, 0.7071067811865476]   # quaternion x, y, z, w


def _quat_xyzw(R) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of rotation matrices (..., 3, 3), continuous in sign along axis 0."""
    from mbcompose.dynamics.spatial import matrix_to_quat

    flat = np.asarray(R).reshape(-1, 3, 3)
    q = np.array([matrix_to_quat(r) for r in flat]).reshape(R.shape[:-2] + (4,))   # w, x, y, z
    q = np.concatenate([q[..., 1:], q[..., :1]], axis=-1)
    for k in range(1, q.shape[0]):
        flip = np.sum(q[k] * q[k - 1], axis=-1) < 0
        q[k][flip] *= -1
    return q


class _Buffer:
    def __init__(self):
        self.data = bytearray()
        self.views, self.accessors = [], []

    def add(self, array, kind: str, target=None, minmax: bool = False) -> int:
        a = np.ascontiguousarray(array, dtype="<f4")
        while len(self.data) % 4:
            self.data.append(0)
        view = {"buffer": 0, "byteOffset": len(self.data), "byteLength": a.nbytes}
        if target:
            view["target"] = target
        self.data += a.tobytes()
        self.views.append(view)
        acc = {"bufferView": len(self.views) - 1, "componentType": FLOAT, "count": int(a.shape[0]), "type": kind}
        if minmax:
            flat = a.reshape(a.shape[0], -1)
            acc["min"], acc["max"] = flat.min(axis=0).tolist(), flat.max(axis=0).tolist()
        self.accessors.append(acc)
        return len(self.accessors) - 1


def _mesh(buf, shapes, material: int) -> dict:
    pos = np.vstack([s.positions for s in shapes])
    nrm = np.vstack([s.normals for s in shapes])
    return {"primitives": [{"attributes": {"POSITION": buf.add(pos, "VEC3", ARRAY_BUFFER, minmax=True),
                                           "NORMAL": buf.add(nrm, "VEC3", ARRAY_BUFFER)},
                            "material": material, "mode": 4}]}


def _animation(buf, scene, body_nodes: dict) -> dict:
    times = buf.add(np.asarray(scene.times, float)[:, None], "SCALAR", minmax=True)
    quats = _quat_xyzw(scene.R)
    samplers, channels = [], []
    for k, node in body_nodes.items():
        for path, values, kind in (("translation", scene.p[:, k], "VEC3"), ("rotation", quats[:, k], "VEC4")):
            samplers.append({"input": times, "output": buf.add(values, kind), "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})
    return {"name": "simulation", "samplers": samplers, "channels": channels}


def scene_glb(scene) -> bytes:
    """The GLB bytes of a :class:`composer.report.scene.Scene`."""
    buf = _Buffer()
    groups: dict[int, list] = {}
    for s in scene.shapes:
        groups.setdefault(s.body, []).append(s)
    materials, meshes, nodes = [], [], [{"name": "assembly (z up)", "rotation": Z_UP_TO_Y_UP, "children": []}]
    body_nodes = {}
    for k in sorted(groups):
        color = [float(c) for c in groups[k][0].color] + [1.0]
        materials.append({"pbrMetallicRoughness": {"baseColorFactor": color, "metallicFactor": 0.1,
                                                   "roughnessFactor": 0.7}, "doubleSided": True})
        meshes.append(_mesh(buf, groups[k], len(materials) - 1))
        node = {"name": "ground" if k < 0 else scene.body_names[k], "mesh": len(meshes) - 1}
        if k >= 0:
            node["translation"] = scene.p[0, k].tolist()
            node["rotation"] = _quat_xyzw(scene.R[:1, k:k + 1])[0, 0].tolist()
            body_nodes[k] = len(nodes)
        nodes.append(node)
        nodes[0]["children"].append(len(nodes) - 1)
    doc = {"asset": {"version": "2.0", "generator": "mbcompose"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": nodes, "meshes": meshes, "materials": materials}
    if len(scene.times) > 1 and body_nodes:
        doc["animations"] = [_animation(buf, scene, body_nodes)]
    doc.update({"accessors": buf.accessors, "bufferViews": buf.views, "buffers": [{"byteLength": len(buf.data)}]})
    return _container(doc, bytes(buf.data))


def _container(doc: dict, binary: bytes) -> bytes:
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + 8 + len(binary)
    return (struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<I4s", len(text), b"JSON") + text
            + struct.pack("<I4s", len(binary), b"BIN\0") + binary)
