"""The 3-D view of the report: a self-contained HTML section with a small WebGL viewer.

The scene (:func:`composer.report.scene.build_scene`) is embedded as JSON with base64
float32 arrays; the viewer script (``composer/report/assets/viewer.js``, written for
mbcompose, no library) is inlined, so the report stays one file that works
offline.  Mouse drag rotates, the wheel zooms; play/pause and a time slider
replay the simulated motion.
"""

from __future__ import annotations

import base64
import json
from importlib import resources

import numpy as np

from .scene import GROUND_COLOR

VIEW_STYLE = """
#mbc-view{border:1px solid #ddd;margin:1em 0}#mbc-canvas{width:100%;height:480px;display:block;cursor:grab}
#mbc-controls{display:flex;gap:.8em;align-items:center;padding:.4em .6em;background:#f4f6f9}
#mbc-time{flex:1}#mbc-note{color:#666;font-size:.85em;padding:0 .6em .4em}
"""


def _b64(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def scene_json(scene) -> str:
    """The scene as the JSON the viewer script reads (see ``viewer.js``)."""
    poses = np.concatenate([scene.R.reshape(len(scene.times), -1, 9), scene.p], axis=-1)
    doc = {"nbodies": len(scene.body_names), "times": [round(float(t), 6) for t in scene.times],
           "center": scene.center.tolist(), "radius": scene.radius, "poses": _b64(poses),
           "bodies": [{"name": s.name, "body": s.body, "color": [round(float(c), 3) for c in s.color],
                       "grounded": bool(np.array_equal(s.color, GROUND_COLOR)),
                       "pos": _b64(s.positions), "nrm": _b64(s.normals)} for s in scene.shapes],
           "axes": [{"name": a.name, "body": a.body, "a": a.a.tolist(), "b": a.b.tolist()} for a in scene.axes]}
    return json.dumps(doc, separators=(",", ":")).replace("</", "<\\/")


def viewer_script() -> str:
    """The viewer's JavaScript (package data)."""
    return resources.files("mbcompose.composer.report").joinpath("assets/viewer.js").read_text(encoding="utf-8")


def legend(scene) -> list[tuple[str, str]]:
    """(body name, CSS colour) of every moving body that has shapes (grounded ones are grey)."""
    seen = {}
    for s in scene.shapes:
        if s.body >= 0 and s.body not in seen and not np.array_equal(s.color, GROUND_COLOR):
            r, g, b = (int(round(255 * c)) for c in s.color)
            seen[s.body] = (scene.body_names[s.body], f"#{r:02x}{g:02x}{b:02x}")
    return [seen[k] for k in sorted(seen)]


def view_html(scene) -> str:
    """The ``<section>`` of the 3-D view: canvas, controls, colour legend, data and script."""
    import html

    keys = "".join(f'<span style="color:{c}">&#9632;</span> {html.escape(n)} ' for n, c in legend(scene))
    moving = len(scene.times) > 1
    note = ("Drag to rotate, wheel to zoom; Play replays the simulated motion. Red lines: joint axes. "
            if moving else "Drag to rotate, wheel to zoom (reference configuration). Red lines: joint axes. ")
    return (f'<div id="mbc-view" data-state="loading"><canvas id="mbc-canvas" width="960" height="480"></canvas>'
            f'<div id="mbc-controls"><button id="mbc-play" type="button">Play</button>'
            f'<input id="mbc-time" type="range" min="0" max="0" value="0" aria-label="time">'
            f'<span id="mbc-time-label">t = 0 s</span></div>'
            f'<div id="mbc-note">{note}Colours: {keys}by moving composite body; the parts fixed to the ground '
            f'grey and see-through.</div></div>'
            f'<script type="application/json" id="mbc-scene">{scene_json(scene)}</script>'
            f"<script>{viewer_script()}</script>")
