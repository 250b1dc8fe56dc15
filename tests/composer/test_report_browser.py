"""The HTML report in headless Chromium: tables shown, every image loaded, no console error.

Needs Debian's ``chromium`` (``.ci/run`` installs it); without a browser the
test is skipped and says so.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mbcompose.composer.config import load_pipeline
from mbcompose.composer.pipeline import run_pipeline

ROOT = Path(__file__).resolve().parents[2]
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND"]

# Instrumentation added to a copy of the report: records errors (script errors,
# failed resources, console.error) and, on load, the state of every image.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  __errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || 'error'));
}, true);
var __consoleError = console.error;
console.error = function () { __errors.push(Array.prototype.join.call(arguments, ' '));
                              __consoleError.apply(console, arguments); };
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.body.setAttribute('data-check', JSON.stringify({
    images: imgs.length,
    loaded: imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    errors: __errors,
    tables: document.querySelectorAll('table').length,
    headings: Array.prototype.map.call(document.querySelectorAll('h2'), function (h) { return h.textContent; })
  }));
});
</script>"""


def sample_report(tmp, sample: str, duration: float):
    doc = yaml.safe_load((ROOT / f"samples/{sample}/pipeline.yaml").read_text())
    doc["input"] = str(ROOT / f"samples/{sample}/{sample}.yaml")
    doc["outputs"]["directory"] = str(tmp / "out")
    doc["outputs"]["exports"] = []
    doc["outputs"]["simulation"]["duration"] = duration
    (tmp / "pipeline.yaml").write_text(yaml.safe_dump(doc))
    [result] = run_pipeline(load_pipeline(tmp / "pipeline.yaml"))
    assert result.ok, result.error
    return tmp / "out" / f"{sample}.report.html"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return sample_report(tmp_path_factory.mktemp("report"), "seeker", 0.2)


def run_browser(args, tmp_path):
    if BROWSER is None:
        pytest.skip("no Chromium found (install Debian's 'chromium'; .ci/run does)")
    cmd = [BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_report_is_self_contained(report):
    html = report.read_text()
    assert not re.search(r'<img[^>]+src="(?!data:image/png;base64,)', html)
    assert "<link" not in html and "http://" not in html and "https://" not in html


def test_report_loads_in_chromium_with_images_and_tables_and_no_console_error(report, tmp_path):
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace("<head>", "<head>" + PROBE, 1))
    proc = run_browser(["--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], tmp_path)
    m = re.search(r'data-check="([^"]*)"', proc.stdout)
    assert m, f"the page did not finish loading: {proc.stderr[-2000:]}"
    check = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert check["errors"] == []
    assert check["images"] >= 4 and check["loaded"] == check["images"]
    assert check["tables"] >= 8
    for heading in ("Table 1: kinematic description", "Table 2: composite bodies", "Removed joints",
                    "Loops", "Pictures", "Simulation"):
        assert any(h.startswith(heading) for h in check["headings"]), heading


def test_report_screenshot_is_a_rendered_page(report, tmp_path):
    shot = tmp_path / "report.png"
    proc = run_browser(["--window-size=1200,2400", f"--screenshot={shot}", report.as_uri()], tmp_path)
    assert shot.exists(), proc.stderr[-2000:]
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[0] == 2400 and pixels.shape[1] == 1200
    # a blank page is one colour; a rendered report has text, tables and pictures
    assert len({tuple(p) for p in pixels[::20, ::20, :3].reshape(-1, 3).round(2)}) > 20
