"""Time our URDF reader and ``mbcompose.compose`` against Pinocchio's parser on example-robot-data.

Three measurements, each over all the URDF files of example-robot-data's
``robots/`` (``*/urdf/*.urdf`` and ``*/robots/*.urdf``, 69 files) that both
parsers accept, in the same run:

0. **compose**: ``mbcompose.compose`` (read, graph stage with composites,
   reduction and loops, SKO tree model) against ``pinocchio.buildModelFromUrdf``,
   interleaved file by file, minimum of ``--repeat`` passes; then the same in
   child processes started with ``OPENBLAS_NUM_THREADS`` (and ``OMP_NUM_THREADS``,
   ``MKL_NUM_THREADS``) set to 1 and 2, to show that compose does not depend on the
   number of BLAS threads (``--no-threads`` skips them); and, on the same files,
   ``parsers.xml.parse_xml`` alone (the XML tree with a line number on every
   element) against ``buildModelFromUrdf``, the floor under compose's time.

   What each side does.  Pinocchio: tinyxml2 + urdfdom parse the file, the
   kinematic tree and the inertias become a ``Model``; meshes are not looked at,
   ``<mimic>`` is ignored (the follower joint stays independent).  Ours: the XML
   tree with a line number on every element (for ``file:line`` in every error);
   every number checked finite and within ``magnitude``; every mesh URI resolved
   (``package://`` search) and the file checked to exist (not loaded); inertias
   checked for physical consistency; then the graph stage (extended system graph,
   composites, reduction, loops) and the SKO tree model, with ``<mimic>`` couplings
   embedded as constraints (8 of the files have some).  Neither side loads meshes.
1. **model**: our ``parsers.urdf.reader.read_urdf`` (tree, inertias, poses; meshes
   resolved and checked to exist, not loaded) against
   ``pinocchio.buildModelFromUrdf`` (kinematic tree and inertias); best of
   ``--repeat`` passes;
2. **model + meshes**: the above plus every mesh file loaded (ours: each
   distinct (file, scale) of a robot through ``parsers.massprops.load_mesh``,
   i.e. trimesh; Pinocchio: ``buildGeomFromUrdf`` for the visual and the
   collision models, i.e. assimp/hpp-fcl); one pass.

Usage::

    python benchmarks/parsers.py [--repeat 3] [--no-meshes] [--no-threads] [--compose-only] [--clock wall|cpu]

Prints one line per measurement with both totals and the ratio ours/Pinocchio.

Measured 2026-11-21 on the 2-core development machine (load average ~2.3,
shared with other jobs), pinocchio 4.1.0, trimesh 4 with pycollada::

    44 of 45 example-robot-data URDFs accepted by both parsers
    model only     : ours  0.249 s   pinocchio.buildModelFromUrdf  0.039 s   ratio 6.5  (best of 5)
    model + meshes : ours 24.5 s     pinocchio + buildGeomFromUrdf 39.5 s    ratio 0.6
      (ours: 634 distinct (file, scale) meshes per robot loaded by trimesh, 19 refused:
       centauro's mirrored meshes, negative scale, which load_mesh rejects;
       pinocchio: 1666 geometry objects, visual and collision models built separately)

Meshes are not loaded by ``read_urdf`` itself (only found and checked to
exist), so reading the robots costs the "model only" time unless inertia from
geometry is requested.

Measured 2026-11-23 at 09:23-09:25 on the same machine, idle (load average 0.7-0.9),
``--repeat 5 --no-meshes``, CPU clock, after the URDF reader converted a document's numbers
together and the graph and model stages lost most of their fixed cost per file (issue 12,
point 6); the first of six full runs::

    66 of 69 example-robot-data URDFs accepted by both parsers (pinocchio 4.1.0, 2 CPUs, cpu clock)
    compose              : ours 0.232 s   pinocchio.buildModelFromUrdf 0.083 s   ratio 2.8
    compose (BLAS 1 thr) : ours 0.247 s   pinocchio.buildModelFromUrdf 0.084 s   ratio 2.9
    compose (BLAS 2 thr) : ours 0.254 s   pinocchio.buildModelFromUrdf 0.087 s   ratio 2.9
    XML tree             : ours 0.062 s   pinocchio.buildModelFromUrdf 0.079 s   ratio 0.8
    model only           : ours 0.155 s   pinocchio.buildModelFromUrdf 0.074 s   ratio 2.1

Over the six runs the 18 compose quotients were 2.71-2.99 (ours 0.216-0.280 s, Pinocchio
0.079-0.094 s: the machine's speed moves between runs, and with it the ratio, ours more
than Pinocchio's).  In the same minutes the code of the morning, run alternately with this
one, gave 3.2-3.3 where this gave 2.8-3.0; with another job on the second core (load 2-5)
this code gave 3.0-3.2.  Twenty minutes later, in a faster window (Pinocchio 75-79 ms), three
full runs of the final code gave 2.63-2.73 (ours 0.197-0.211 s), model only 1.8-1.9.  Earlier: 2.96-3.2 at 07:00-07:20 that morning, 4.2-4.8 earlier that
morning, 11.8x the day before.  Instruction counts (callgrind, one pass of ``compose`` over the 66 files,
deterministic where times are not): 1,691 M that morning, 1,482 M now (-12%).  Where
compose's time goes now (CPU ms over the 66 files, interleaved with Pinocchio as above,
a quiet run; Pinocchio 83 ms):

    ========================================================  ========
    read stage (XML tree, URDF reader, tree freed)              ~156 ms
      XML tree (parse_xml: expat + the C TreeBuilder, 47,000     ~55 ms
      elements; no character data unless <mechanicalReduction>)
      URDF reader (~640 M instructions: shapes and mesh        ~95 ms
      look-ups 120 M, inertials 107 M, joints 100 M, bodies
      and Sources ~50 M, link poses, tree, checks the rest)
    graph stage (composites, mass merge, reduction, loops)       ~34 ms
    model stage (tree, SKO model; 8 files embed mimics: ~8 ms)  ~35 ms
    ========================================================  ========

A URDF file's lines are mapped only when a message is written or a ``Source``'s line is
read (a ``Source`` names its element as the n-th ``<link>`` or ``<joint>`` and keeps the
file's bytes), and its tree is dropped when the reader is done.  What remains is Python
work of about 1 us per small operation over 2,100 links and joints and 3,200 shapes, and
memory traffic: timed on warm caches the same stages take a third less, and the ratio
grows when another job shares the machine's caches.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import subprocess
import sys
import sysconfig
import time

import pinocchio as pin  # noqa: E402

import mbcompose  # noqa: E402
from mbcompose.parsers import InputError  # noqa: E402
from mbcompose.parsers.massprops import load_mesh  # noqa: E402
from mbcompose.parsers.urdf.reader import read_urdf  # noqa: E402
from mbcompose.parsers.xml import parse_xml  # noqa: E402

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ROBOTS = sorted(glob.glob(os.path.join(SHARE, "example-robot-data", "robots", "**", "*.urdf"), recursive=True))
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: the clock of every measurement (``--clock``): wall time, or this process's CPU time, steadier
#: on a machine shared with other jobs (both sides run in this one thread; CPU time of BLAS
#: threads would count too)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = CLOCKS["wall"]


def accepted() -> list[str]:
    out = []
    for p in ROBOTS:
        try:
            pin.buildModelFromUrdf(p)
            mbcompose.compose(p, package_dirs=[SHARE])
        except (RuntimeError, ValueError, InputError):
            continue
        out.append(p)
    return out


def time_interleaved(ours_call, files, repeat):
    """Best total of ``ours_call(path)`` and of ``buildModelFromUrdf`` over ``files``, file by file interleaved."""
    best_ours = best_pin = float("inf")
    for _ in range(repeat):
        ours = ref = 0.0
        for p in files:
            t0 = CLOCK()
            ours_call(p)
            t1 = CLOCK()
            pin.buildModelFromUrdf(p)
            t2 = CLOCK()
            ours, ref = ours + t1 - t0, ref + t2 - t1
        best_ours, best_pin = min(best_ours, ours), min(best_pin, ref)
    return best_ours, best_pin


def time_compose(files, repeat):
    """``mbcompose.compose`` against ``buildModelFromUrdf`` (:func:`time_interleaved`)."""
    return time_interleaved(lambda p: mbcompose.compose(p, package_dirs=[SHARE]), files, repeat)


def compose_line(files, repeat, label="") -> str:
    ours, ref = time_compose(files, repeat)
    return (f"compose{label:<14s}: ours {ours:8.3f} s   pinocchio.buildModelFromUrdf {ref:8.3f} s   "
            f"ratio {ours / ref:6.1f}  ({len(files)} files, best of {repeat})")


def compose_with_threads(n: int, repeat: int) -> str:
    """The compose line measured in a child process whose BLAS uses ``n`` threads."""
    env = {**os.environ, **{v: str(n) for v in BLAS_VARIABLES}}
    clock = next(k for k, v in CLOCKS.items() if v is CLOCK)
    res = subprocess.run([sys.executable, "-P", __file__, "--compose-only", "--repeat", str(repeat), "--clock", clock,
                          "--label", f" (BLAS {n} thr)"], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        return f"compose (BLAS {n} thr): failed: {res.stderr.strip().splitlines()[-1:]}"
    return res.stdout.strip().splitlines()[-1]


def time_xml(files, repeat):
    """``parse_xml`` alone (the XML tree the URDF reader takes: lxml, a line on every element,
    nesting depth and entities checked) against ``buildModelFromUrdf``."""
    return time_interleaved(parse_xml, files, repeat)


def time_models(files, repeat):
    best_ours = best_pin = float("inf")
    for _ in range(repeat):
        t0 = CLOCK()
        for p in files:
            read_urdf(p, package_dirs=[SHARE])
        t1 = CLOCK()
        for p in files:
            pin.buildModelFromUrdf(p)
        t2 = CLOCK()
        best_ours, best_pin = min(best_ours, t1 - t0), min(best_pin, t2 - t1)
    return best_ours, best_pin


def time_meshes(files):
    n_loaded = n_failed = 0
    t0 = CLOCK()
    for p in files:
        a = read_urdf(p, package_dirs=[SHARE])
        cache = set()
        for b in a.bodies:
            for g in b.geometry:
                if g.kind != "mesh":
                    continue
                key = (g.file, tuple(g.params["scale"]))
                if key in cache:
                    continue
                cache.add(key)
                try:
                    load_mesh(g.file, g.params["scale"])
                    n_loaded += 1
                except InputError:
                    n_failed += 1
    t1 = CLOCK()
    n_geoms = 0
    for p in files:
        m = pin.buildModelFromUrdf(p)
        for kind in (pin.GeometryType.VISUAL, pin.GeometryType.COLLISION):
            try:
                n_geoms += pin.buildGeomFromUrdf(m, p, kind, package_dirs=[SHARE]).ngeoms
            except (RuntimeError, ValueError):
                pass
    t2 = CLOCK()
    return t1 - t0, t2 - t1, n_loaded, n_failed, n_geoms


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-meshes", action="store_true")
    ap.add_argument("--no-threads", action="store_true", help="skip the runs with 1 and 2 BLAS threads")
    ap.add_argument("--compose-only", action="store_true", help="only the compose measurement")
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                    help="wall time (default) or the process's CPU time (steadier on a shared machine)")
    ap.add_argument("--label", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = CLOCKS[args.clock]
    logging.disable(logging.WARNING)
    files = accepted()
    if args.compose_only:
        print(compose_line(files, args.repeat, args.label))
        return
    print(f"{len(files)} of {len(ROBOTS)} example-robot-data URDFs accepted by both parsers "
          f"(pinocchio {pin.__version__}, {os.cpu_count()} CPUs, {args.clock} clock)")
    print(compose_line(files, args.repeat), flush=True)
    if not args.no_threads:
        for n in (1, 2):
            print(compose_with_threads(n, args.repeat), flush=True)
    ours, ref = time_xml(files, args.repeat)
    print(f"XML tree        : ours {ours:8.3f} s   pinocchio.buildModelFromUrdf {ref:8.3f} s   "
          f"ratio {ours / ref:6.1f}  (parse_xml alone, best of {args.repeat})")
    ours, ref = time_models(files, args.repeat)
    print(f"model only      : ours {ours:8.3f} s   pinocchio.buildModelFromUrdf {ref:8.3f} s   "
          f"ratio {ours / ref:6.1f}  (best of {args.repeat})")
    if not args.no_meshes:
        ours, ref, n_ok, n_bad, n_geoms = time_meshes(files)
        print(f"model + meshes  : ours {ours:8.3f} s   pinocchio + buildGeomFromUrdf   {ref:8.3f} s   "
              f"ratio {ours / ref:6.1f}  (ours: {n_ok} distinct meshes loaded by trimesh, {n_bad} failed; "
              f"pinocchio: {n_geoms} geometry objects, visual + collision)")


if __name__ == "__main__":
    main()
