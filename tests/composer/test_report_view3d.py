"""The 3-D view of the report in headless Chromium (seeker and four-bar), and the GLB scene.

The view must work offline from the one HTML file: the page may request nothing but
``file:`` and ``data:`` URLs (Chromium also runs with every host name unresolvable);
the canvas shows more than one colour once drawn, and moving the time slider to the
last frame changes the picture.  Screenshots of the first and last frames are written
to ``MBCOMPOSE_SCREENSHOTS`` (default: the test's temporary folder) for a person to
look at.  Without Chromium the browser tests are skipped and say so.
"""

import json
import os
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from test_report_browser import ROOT, run_browser, sample_report

# Instrumentation added to a copy of the report: after load, the canvas pixels at the
# first frame and at the last frame (slider moved), every resource the page requested,
# and script errors, written into an attribute that --dump-dom shows.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { __errors.push(String(e.message || 'error')); }, true);
function __pixels() {
  var c = document.getElementById('mbc-canvas'), t = document.createElement('canvas');
  t.width = c.width; t.height = c.height;
  var g = t.getContext('2d'); g.drawImage(c, 0, 0);
  return g.getImageData(0, 0, t.width, t.height).data;
}
window.addEventListener('load', function () {
  var view = document.getElementById('mbc-view'), slider = document.getElementById('mbc-time');
  var a = __pixels(), colours = {};
  for (var i = 0; i < a.length; i += 4 * 5) colours[a[i] + ',' + a[i + 1] + ',' + a[i + 2]] = 1;
  slider.value = slider.max; slider.dispatchEvent(new Event('input'));
  var b = __pixels(), changed = 0;
  for (var j = 0; j < a.length; j += 4) if (a[j] !== b[j] || a[j + 1] !== b[j + 1] || a[j + 2] !== b[j + 2]) changed++;
  document.body.setAttribute('data-check', JSON.stringify({
    state: view.getAttribute('data-state'), frame: view.getAttribute('data-frame'), frames: slider.max,
    label: document.getElementById('mbc-time-label').textContent, colours: Object.keys(colours).length,
    changed: changed, pixels: a.length / 4, errors: __errors,
    requests: performance.getEntriesByType('resource').map(function (r) { return r.name; })
              .concat(Array.prototype.map.call(document.querySelectorAll('[src],[href]'),
                      function (e) { return e.src || e.href; }))}));
});
</script>"""

# Shows the 3-D view alone, at the frame named by the URL's fragment (#first, #last).
SHOT = """<style>body > *:not(#mbc-view){display:none !important}</style><script>
window.addEventListener('load', function () {
  var s = document.getElementById('mbc-time');
  s.value = location.hash === '#last' ? s.max : 0; s.dispatchEvent(new Event('input'));
});
</script>"""


@pytest.fixture(scope="module", params=[("seeker", 0.3), ("fourbar", 0.6)], ids=["seeker", "fourbar"])
def report(request, tmp_path_factory):
    sample, duration = request.param
    return sample_report(tmp_path_factory.mktemp(sample), sample, duration)


def with_script(report: Path, script: str, name: str) -> Path:
    page = report.with_name(name)
    page.write_text(report.read_text().replace("</body>", script + "</body>", 1))
    return page


def test_the_3d_view_draws_offline_and_the_time_slider_moves_the_mechanism(report, tmp_path):
    html = report.read_text()
    assert not re.search(r'(src|href)="(?!data:|#|[\w./-]+\.(png|md|csv|npz|glb|yaml|urdf|sdf|xml|stl|html)")', html)
    proc = run_browser(["--window-size=1100,1400", "--virtual-time-budget=10000", "--dump-dom",
                        with_script(report, PROBE, "probe.html").as_uri()], tmp_path)
    m = re.search(r'data-check="([^"]*)"', proc.stdout)
    assert m, f"the page did not finish loading: {proc.stderr[-2000:]}"
    check = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert check["errors"] == [] and check["state"] == "drawn"
    assert all(u.startswith(("file:", "data:")) for u in check["requests"]), check["requests"]
    assert check["colours"] > 10                       # shaded shapes, not a blank canvas
    assert check["frame"] == check["frames"] and int(check["frames"]) > 10
    assert check["label"] != "t = 0.000 s"
    assert check["changed"] > 100, check               # the mechanism moved between the frames


def test_screenshots_of_the_first_and_last_frames_for_a_person(report, tmp_path):
    import matplotlib.image as mpimg

    folder = Path(os.environ.get("MBCOMPOSE_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    page = with_script(report, SHOT, "shot.html")
    shots = []
    for frame in ("first", "last"):
        shot = folder / f"{report.name.split('.')[0]}-view-{frame}.png"
        proc = run_browser(["--window-size=1000,560", "--virtual-time-budget=5000", f"--screenshot={shot}",
                            f"{page.as_uri()}#{frame}"], tmp_path)
        assert shot.exists(), proc.stderr[-2000:]
        shots.append(mpimg.imread(shot)[40:500, 20:980, :3])
    for px in shots:
        assert len({tuple(p) for p in px[::8, ::8].reshape(-1, 3).round(2)}) > 10
    assert np.mean(np.any(np.abs(shots[0] - shots[1]) > 0.02, axis=-1)) > 1e-4


def test_the_scene_glb_holds_one_node_per_moving_body_and_their_animation(report):
    import trimesh

    glb = report.with_name(report.name.replace(".report.html", ".scene.glb"))
    data = glb.read_bytes()
    magic, version, length = struct.unpack("<4sII", data[:12])
    assert magic == b"glTF" and version == 2 and length == len(data)
    n_json = struct.unpack("<I", data[12:16])[0]
    doc = json.loads(data[20:20 + n_json])
    [anim] = doc["animations"]
    csv = report.with_name(report.name.replace(".report.html", ".simulation.csv"))
    times = np.genfromtxt(csv, delimiter=",", names=True)["time"]
    times_accessor = doc["accessors"][anim["samplers"][0]["input"]]
    assert times_accessor["count"] == len(times) and times_accessor["max"][0] == pytest.approx(times[-1])
    animated = {c["target"]["node"] for c in anim["channels"]}
    assert {doc["nodes"][k]["name"] for k in animated} <= {n["name"] for n in doc["nodes"]}
    scene = trimesh.load(glb)                        # an independent reader opens it
    from mbcompose import compose
    from mbcompose.parsers.massprops import load_mesh, primitive_mesh

    sample = report.name.split(".")[0]
    assembly = compose(ROOT / f"samples/{sample}/{sample}.yaml").assembly
    faces = sum(len(load_mesh(g.file, g.params.get("scale", 1.0)).faces if g.kind == "mesh" else
                    primitive_mesh(g.kind, g.params).faces) for b in assembly.bodies for g in b.geometry)
    assert len(scene.geometry) == len(doc["meshes"])
    assert sum(len(g.faces) for g in scene.geometry.values()) == faces
