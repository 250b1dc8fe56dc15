"""A bar over the meshes of a robot (issue 15): on stderr, only on a terminal, only when the
work is long (many mesh files, or many bytes: one big mesh and its inertia).

The terminal is a pseudo-terminal (``pty``) given to ``mbcompose inspect`` as its stderr;
the same command with stderr piped draws nothing.
"""

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios

import numpy as np
import pytest
import trimesh

from mbcompose import parsers
from mbcompose.parsers import mesh_progress
from mbcompose.parsers.mesh_progress import MeshWork, reporting_progress
from mbcompose.parsers.mjcf.reader import read_mjcf
from mbcompose.parsers.urdf.reader import read_urdf

N_MESHES = mesh_progress.MANY_MESHES + 5


def mjcf_with_meshes(folder, n):
    """A chain of n bodies, each a box mesh (its own file: a = 0.1 + 0.01 k)."""
    assets, bodies = [], ""
    for k in range(n):
        trimesh.creation.box(extents=[0.1 + 0.01 * k, 0.1, 0.1]).export(folder / f"box{k}.stl")
        assets.append(f'<mesh name="m{k}" file="box{k}.stl"/>')
    for k in range(n):
        bodies += f'<body name="b{k}" pos="0.2 0 0"><joint name="j{k}" axis="0 1 0"/><geom type="mesh" mesh="m{k}"/>'
    bodies += "</body>" * n
    path = folder / "chain.xml"
    path.write_text(f"<mujoco><asset>{''.join(assets)}</asset><worldbody>{bodies}</worldbody></mujoco>")
    return path


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, task, fraction):
        self.calls.append((task, fraction))


def test_many_meshes_report_the_share_of_bytes_done(tmp_path):
    path = mjcf_with_meshes(tmp_path, N_MESHES)
    rec = Recorder()
    with reporting_progress(rec):
        a = read_mjcf(path)
    fractions = [f for task, f in rec.calls if task == "meshes"]
    assert len(fractions) >= N_MESHES and fractions[-1] == 1.0
    assert all(b >= f for f, b in zip(fractions, fractions[1:]))
    # the bar changes nothing: the box masses at MuJoCo's default density, 1000 kg/m^3
    masses = [a.body(f"b{k}").mass.mass for k in range(N_MESHES)]
    np.testing.assert_allclose(masses, [1000 * 0.01 * (0.1 + 0.01 * k) for k in range(N_MESHES)], rtol=1e-6)   # STL: float32


def test_many_meshes_of_the_native_yaml_report_their_progress(tmp_path):
    for k in range(N_MESHES):
        trimesh.creation.box(extents=[0.1 + 0.01 * k, 0.1, 0.1]).export(tmp_path / f"box{k}.stl")
    bodies = "".join(f"  - {{name: b{k}, density: 1000, geometry: [{{mesh: box{k}.stl}}]}}\n" for k in range(N_MESHES))
    path = tmp_path / "boxes.yaml"
    path.write_text(f"name: boxes\nunits: {{length: m, mass: kg}}\nbodies:\n{bodies}")
    rec = Recorder()
    with reporting_progress(rec):
        a = parsers.read_assembly(path)
    fractions = [f for task, f in rec.calls if task == "meshes"]
    assert len(fractions) >= N_MESHES and fractions[-1] == 1.0
    assert all(b >= f for f, b in zip(fractions, fractions[1:]))
    masses = [a.body(f"b{k}").mass.mass for k in range(N_MESHES)]   # density x analytic box volume
    np.testing.assert_allclose(masses, [1000 * 0.01 * (0.1 + 0.01 * k) for k in range(N_MESHES)], rtol=1e-6)


def test_few_small_meshes_and_no_callback_report_nothing(tmp_path):
    rec = Recorder()
    with reporting_progress(rec):
        read_mjcf(mjcf_with_meshes(tmp_path, 3))
    assert rec.calls == []
    read_mjcf(mjcf_with_meshes(tmp_path, N_MESHES))          # no callback installed: nothing to call


def test_one_big_mesh_reports_its_loading_and_its_inertia(tmp_path, monkeypatch):
    """A URDF link whose inertia comes from one mesh over the byte threshold: half the bar when
    the file is parsed, the rest when its inertia is done."""
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=0.1)
    sphere.export(tmp_path / "ball.stl")
    monkeypatch.setattr(mesh_progress, "MANY_BYTES", os.path.getsize(tmp_path / "ball.stl") - 1)
    urdf = tmp_path / "r.urdf"
    urdf.write_text('<robot name="r"><link name="ball"><collision><geometry><mesh filename="ball.stl"/>'
                    '</geometry></collision></link></robot>')
    rec = Recorder()
    with reporting_progress(rec):
        a = read_urdf(urdf, inertia_from_geometry_density=1000.0)
    assert rec.calls == [("meshes", 0.5), ("meshes", 0.999), ("meshes", 1.0)]
    assert a.body("ball").mass.mass == pytest.approx(1000 * sphere.volume, rel=1e-6)


def test_mesh_work_counts_each_file_once_and_ignores_others(tmp_path):
    files = []
    for k in range(N_MESHES):
        files.append(tmp_path / f"f{k}.stl")
        files[-1].write_bytes(b"x" * 100)
    rec = Recorder()
    with reporting_progress(rec), MeshWork(files + files[:3]) as work:
        work.finished(files[0])
        work.finished(files[0], tmp_path / "other.stl")
        work.progressed(files[1], 0.5)
    assert rec.calls == [("meshes", 1 / N_MESHES), ("meshes", 1.5 / N_MESHES), ("meshes", 1.0)]


def _mbcompose():
    exe = shutil.which("mbcompose", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the mbcompose command is not installed next to this Python")
    return exe


def _run_with_terminal_stderr(args, cwd):
    """(stdout, what the terminal on stderr received, exit code) of a command; the terminal is
    80 columns wide (tqdm draws nothing on a terminal without width)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, cwd=cwd)
    os.close(slave)
    received = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:                     # the command closed the terminal
            break
        if not chunk:
            break
        received += chunk
    out = proc.stdout.read()
    proc.wait(timeout=60)
    os.close(master)
    return out.decode(), received.decode(errors="replace"), proc.returncode


def test_inspect_draws_the_bar_on_a_terminal_and_not_when_piped(tmp_path):
    exe = _mbcompose()
    path = mjcf_with_meshes(tmp_path, N_MESHES)
    out, terminal, code = _run_with_terminal_stderr([exe, "inspect", str(path), "--format", "json"], tmp_path)
    assert code == 0 and f'"dof": {N_MESHES}' in out
    assert "meshes" in terminal and "%|" in terminal
    piped = subprocess.run([exe, "inspect", str(path), "--format", "json"], capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stdout == out and piped.stderr == ""


def test_the_report_3d_view_reports_its_meshes(tmp_path):
    from mbcompose.composer.report.scene import _part_meshes

    a = read_mjcf(mjcf_with_meshes(tmp_path, N_MESHES))
    rec = Recorder()
    with reporting_progress(rec):
        parts = _part_meshes(a, max_faces=10**6)
    assert len(parts) == N_MESHES and rec.calls[-1] == ("3-D view", 1.0)
    fractions = [f for task, f in rec.calls if task == "3-D view"]
    assert len(fractions) == 2 * N_MESHES + 1          # each file: loaded (half its share), drawn
    assert all(b > f for f, b in zip(fractions, fractions[1:]))
