"""Reading a 300-part STEP assembly and inferring its joints (issue 11: "well under a minute").

The assembly (tests/cad/cad_shapes.py ``wheels_on_a_plate``): a plate with 150
pins pressed into it and a wheel turning on each (301 parts, 150 fixed joints,
150 revolutes), written with OpenCascade at an arbitrary placement.  The
reference measured in the same run is OpenCascade reading and transferring the
same file with XCAF alone (what any STEP import costs); the ratio says what the
mass properties, tessellation, contacts and joint inference add.  Minimum of the
repeats, the two interleaved.

    python3 benchmarks/step_assembly.py [--parts 301] [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cad"))

import cad_shapes as S  # noqa: E402

from mbcompose.parsers import read_assembly  # noqa: E402
from mbcompose.parsers.step.brep import read_document  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", type=int, default=301)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    n = (args.parts - 1) // 2
    with tempfile.TemporaryDirectory() as tmp:
        path = S.write_mechanism(Path(tmp) / "wheels.step", S.wheels_on_a_plate(n))
        ours, ref, cpu = [], [], []
        for k in range(args.repeat):
            t0 = time.perf_counter()
            read_document(path)
            ref.append(time.perf_counter() - t0)
            t0, c0 = time.perf_counter(), time.process_time()
            a = read_assembly(path, mesh_dir=Path(tmp) / f"meshes{k}")
            ours.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        types = [j.type for j in a.joints if not j.implicit]
        print(f"parts {len(a.bodies)}, joints {len(types)} ({types.count('revolute')} revolute, "
              f"{types.count('fixed')} fixed), contacts {len(a.contacts)}")
        print(f"OpenCascade XCAF read+transfer: {min(ref):.2f} s")
        print(f"mbcompose read + mass properties + meshes + contacts + joints: {min(ours):.2f} s "
              f"(ratio {min(ours) / min(ref):.1f} x the XCAF read; CPU time {min(cpu):.2f} s)")


if __name__ == "__main__":
    main()
