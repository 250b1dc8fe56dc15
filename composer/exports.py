"""Writing a model and its exports: the native model file (YAML) and URDF, MJCF or SDFormat beside it,
with the meshes copied (or converted to STL) into ``assets/`` and referenced relatively
(:mod:`parsers.exporters.assets`), so that the output folder can be moved.  ``mbcompose convert`` and the
pipeline's ``outputs.exports`` both write through :func:`export_writers` (collision geometry as read, one
convex hull per part or none: :mod:`parsers.exporters.collision`); ``convert -o X.fmu`` writes
the FMI 2.0 FMU of :func:`fmu_archive` (generated C, see docs/fmu.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Iterable, Mapping

import numpy as np

from mbcompose.parsers.assembly import Assembly
from mbcompose.parsers.errors import InputError
from mbcompose.parsers.exporters import ExportError, writer_for
from mbcompose.parsers.exporters.assets import plan_mesh_assets, relocated
from mbcompose.parsers.exporters.collision import COLLISION_MODES, DEFAULT_COLLISION, simplify_collision
from mbcompose.parsers.yaml import write_yaml

log = logging.getLogger(__name__)

#: the native model file's suffixes
MODEL_SUFFIXES = (".yaml", ".yml")
#: export format -> file suffix of the pipeline's outputs (``STEM.mjcf.xml`` ...)
EXPORT_SUFFIXES = {"urdf": ".urdf", "mjcf": ".mjcf.xml", "sdf": ".sdf"}
#: the suffix of an FMI 2.0 FMU (``convert -o X.fmu``: :func:`fmu_archive`)
FMU_SUFFIX = ".fmu"


def export_writers(assembly: Assembly, names: Iterable[str], directory: Path,
                   options: Mapping[str, dict] | None = None,
                   collision: str = DEFAULT_COLLISION) -> dict[str, Callable[[Path], None]]:
    """``write(path)`` of each file of ``names`` (in ``directory``; the suffix chooses the writer: ``.yaml``
    the native model file, else :func:`parsers.exporters.writer_for`) and of the meshes they share, keyed by
    name in ``directory``.

    options : suffix -> keyword arguments of that exporter (``{".urdf": {"cut_loops": True}}``).
    collision : the collision geometry of the URDF, MJCF and SDFormat exports (one of
        :data:`parsers.exporters.collision.COLLISION_MODES`: ``mesh`` as read, ``hull`` one convex hull per
        part written to ``assets/STEM_hull.stl``, ``none``); the native model file keeps the shapes as read.
    A writer raises :class:`parsers.exporters.ExportError` when the format cannot hold the model.
    """
    if collision not in COLLISION_MODES:
        raise ExportError(f"collision geometry {collision!r} is not one of {', '.join(COLLISION_MODES)}")
    options = options or {}
    names = list(names)
    model_files = [n for n in names if Path(n).suffix.lower() in MODEL_SUFFIXES]
    exports = len(model_files) < len(names)
    if not exports and collision != DEFAULT_COLLISION:
        log.warning("collision geometry %r applies to URDF, MJCF and SDFormat exports; the native model file keeps "
                    "the shapes as read", collision)
    exported = simplify_collision(assembly, collision) if exports else assembly
    assets = plan_mesh_assets(*([assembly] if model_files else []), *([exported] if exports else []))
    writers: dict[str, Callable[[Path], None]] = {}
    for name in names:
        suffix = Path(name).suffix.lower()
        if name in model_files:
            text = write_yaml(relocated(assembly, assets, directory), directory)
            writers[name] = lambda p, t=text: p.write_text(t, encoding="utf-8")
        else:
            writer, extra = writer_for(suffix), options.get(suffix, {})
            writers[name] = lambda p, w=writer, o=extra: w(exported, p, mesh_reference=assets.reference, **o)
    writers.update(assets.writers())
    return writers


def fmu_archive(composition, cs_step: float | None = None, stop_time: float = 1.0, poses: Iterable[str] = ()) -> bytes:
    """The FMI 2.0 FMU (zip bytes) of a composition's model: C from :func:`dynamics.codegen.generate_c`
    packaged by :func:`dynamics.codegen.fmi.build_fmu`, with the joints the reduction removed and the
    loop-closing joints as extra outputs (as ``mbcompose simulate``'s CSV has their columns) and the
    joint stops of a tree without DC motors (with motors the simulator does not enforce limits either) or
    of a closed chain's independent coordinates.  cs_step : the co-simulation's internal
    Runge-Kutta step, s (default :data:`dynamics.codegen.fmi.DEFAULT_CS_STEP`).  poses : names of bodies
    or parts (:func:`pose_frames`) whose world poses are outputs.  The parameters that would not act as
    the same value edited in the model file acts are not tunable (:func:`fixed_parameters`).

    Raises :class:`parsers.errors.InputError` when the model cannot be generated or compiled here, or a
    name of ``poses`` is no body or part of the model.
    """
    from mbcompose.dynamics.codegen import CodegenUnavailable, CodegenUnsupported, generate_c
    from mbcompose.dynamics.codegen.fmi import DEFAULT_CS_STEP, FmuUnavailable, build_fmu, model_identifier

    name = composition.assembly.name or "model"
    source_file = composition.assembly.source_file
    frames = pose_frames(composition, poses)
    try:
        generated = generate_c(composition.model, prefix=model_identifier(name), poses=frames)
        stops = _joint_stops(composition, generated)
        extras = (chord_outputs(composition, generated.output_names)
                  + removed_joint_outputs(composition, generated.output_names))
        return build_fmu(generated, name, description=f"mbcompose model of {Path(source_file or name).name}",
                         cs_step=DEFAULT_CS_STEP if cs_step is None else cs_step, extra_outputs=extras,
                         stop_time=stop_time, stops=stops, fixed_parameters=fixed_parameters(composition, generated))
    except (CodegenUnsupported, CodegenUnavailable, FmuUnavailable) as exc:
        raise InputError(f"cannot build an FMU: {exc}", file=source_file) from None


def pose_frames(composition, names: Iterable[str]) -> tuple:
    """:class:`dynamics.codegen.generate.FramePose` of each of ``names`` (duplicates dropped): a body of the
    model (a composite, named after its first part) or a part lumped into one, its frame as the input
    file places it (the pose at the reference configuration, assembly frame) carried by the tree body that
    moves it: the constant offset from that body's frame in the model (at its joint) is taken at the
    reference configuration (:func:`dynamics.kinematics.body_poses` at ``model.neutral()``).  An unknown
    name raises :class:`parsers.errors.InputError` with the closest known one."""
    from mbcompose.dynamics.codegen.generate import FramePose
    from mbcompose.dynamics.kinematics import body_poses
    from mbcompose.parsers.errors import did_you_mean

    tree = composition.model.tree_model
    index = {b: k for k, b in enumerate(tree.body_names)}
    placed = {b.name: (b.name, b.pose) for b in composition.lumped.bodies if b.name in index}
    placed.update({f.name: (f.body, f.pose) for f in getattr(composition.lumped, "frames", ())
                   if f.body in index and f.name not in placed})
    names = tuple(dict.fromkeys(names))
    unknown = [n for n in names if n not in placed]
    if unknown:
        bodies = [b for b in placed if b in index]
        parts = [f for f in placed if f not in index]
        raise InputError(f"no body or part {unknown[0]!r} to give the pose of{did_you_mean(unknown[0], placed)} "
                         f"(bodies: {', '.join(bodies)}; parts: {', '.join(parts) or 'none'})",
                         file=composition.assembly.source_file)
    if not names:
        return ()
    R_ref, p_ref = body_poses(tree, np.asarray(composition.model.neutral(), float)[:tree.nq])
    out = []
    for name in names:
        body, pose = placed[name]
        k = index[body]
        R_wf, p_wf = np.asarray(pose.rotation, float), np.asarray(pose.translation, float)
        R_kf, p_kf = R_ref[k].T @ R_wf, R_ref[k].T @ (p_wf - p_ref[k])
        out.append(FramePose(name, k, tuple(map(tuple, R_kf.tolist())), tuple(p_kf.tolist())))
    return tuple(out)


def fixed_parameters(composition, generated) -> tuple[str, ...]:
    """The names of ``generated.param_names`` an FMU does not list as tunable (each logged with its reason):

    * the inertia of a body with no freedom between it and the ground (welded to it, as the seeker's
      housing): it acts on nothing;
    * the ``gear_ratio`` of a DC motor with a rotor inertia: the model builder also puts
      ``gear_ratio^2 rotor_inertia`` in the joint's armature, a constant of the generated code, so the
      parameter alone would not move the model as the same ratio in the model file does.
    """
    from mbcompose.dynamics.codegen.tree import INERTIA_FIELDS
    from mbcompose.parsers.assembly import DCMotor

    tree = composition.model.tree_model
    free = [False] * tree.n_bodies
    for k in range(tree.n_bodies):
        j = int(tree.parent[k])
        free[k] = bool(tree.tree.nv_node[k]) or (j >= 0 and free[j])
    welded = [b for b, moves in zip(tree.body_names, free) if not moves]
    geared = [r.name for r in composition.assembly.forces if isinstance(r, DCMotor) and r.rotor_inertia]
    names = {*(f"{b}.{f}" for b in welded for f in INERTIA_FIELDS), *(f"{m}.gear_ratio" for m in geared)}
    fixed = tuple(n for n in generated.param_names if n in names)
    if welded:
        log.info("FMU: the inertias of %s are not tunable (welded to the ground, they act on nothing)",
                 ", ".join(welded))
    if geared:
        log.info("FMU: the gear ratios of %s are not tunable (the rotor's reflected inertia gear_ratio^2 "
                 "rotor_inertia is a constant of the generated code)", ", ".join(geared))
    return fixed


def _joint_stops(composition, generated):
    """The joint stops (:class:`dynamics.codegen.fmi.Stops`, or None) of the FMU of ``generated``, as ``mbcompose
    simulate`` applies them (:attr:`Composition.joint_properties`): a tree's limited coordinates; a closed
    chain's limited independent coordinates (indices into its states), a limit on a dependent coordinate
    left out (warned: the FMU's stops act on its states); none with DC motors (as in the simulator, warned).
    Joint damping is in the generated forces."""
    from mbcompose.dynamics.codegen.fmi import Stops
    from mbcompose.dynamics.codegen.generate import coordinate_columns
    from mbcompose.dynamics.compiled.simulate_api import limited_coordinates
    from mbcompose.dynamics.forces import motor_names

    model, props = composition.model, composition.joint_properties
    if model.kind not in ("tree", "embedded"):
        return None
    if model.kind == "tree" and motor_names(model):
        if props.has_limits:
            log.warning("the FMU of a model with DC motors has no joint stops (nor has `simulate` with motors): "
                        "the joints' limits are left out")
        return None
    tree = model.tree_model
    q_index, v_index, lower, upper = limited_coordinates(tree, props.lower, props.upper)
    if model.kind == "tree":
        return Stops(tuple(map(int, q_index)), tuple(map(int, v_index)), tuple(map(float, lower)),
                     tuple(map(float, upper)))
    nqx = generated.nx // 2
    states = list(generated.state_names)
    qn, vn = coordinate_columns(tree), coordinate_columns(tree, rate=True)
    rows, left_out = [], []
    for qi, vi, lo, hi in zip(q_index, v_index, lower, upper):
        if qn[qi] in states[:nqx] and f"v:{vn[vi]}" in states[nqx:]:
            rows.append((states.index(qn[qi]), states.index(f"v:{vn[vi]}") - nqx, float(lo), float(hi)))
        else:
            left_out.append(qn[qi])
    if left_out:
        log.warning("the FMU of a closed chain stops its independent coordinates only: the limits of %s (dependent "
                    "coordinates) are left out", ", ".join(left_out))
    return Stops(*(tuple(c) for c in zip(*rows))) if rows else None


def removed_joint_outputs(composition, columns) -> tuple:
    """The joints the reduction removed as :class:`dynamics.codegen.fmi.ExtraOutput` of the joint
    coordinates ``columns``: :func:`graph.model.removed_joint_columns` is affine in q, so its value at
    q = 0 is the offset and its change along each unit vector the coefficient of that column (a
    redundant joint follows the one kept in its place, a locked one none)."""
    from mbcompose.dynamics.codegen.fmi import ExtraOutput
    from mbcompose.graph.model import removed_joint_columns

    columns = list(columns)
    basis = np.vstack([np.zeros(len(columns)), np.eye(len(columns))])
    names, values = removed_joint_columns(composition.assembly, composition.analysis, columns, basis)
    extras = []
    for k, name in enumerate(names):
        offset = float(values[0, k])
        slope = values[1:, k] - offset
        extras.append(ExtraOutput(name, offset, tuple((columns[j], float(slope[j])) for j in np.flatnonzero(slope))))
    return tuple(extras)


#: loop-closing joints: closed configurations sampled around the reference to find the affine map
CHORD_SAMPLE_SPREAD = 0.1


def chord_outputs(composition, columns) -> tuple:
    """The loop-closing joints of a closed chain as :class:`dynamics.codegen.fmi.ExtraOutput` of the tree
    coordinates ``columns`` (what ``simulate``'s CSV gives after them, :func:`dynamics.closed.embedding.
    chord_coordinates`), where that coordinate is affine in the tree's: the loops of a planar mechanism,
    whose chord angle is a signed sum of the loop's other angles.  Found by least squares over closed
    configurations sampled around the reference (seeded), kept when the fit is exact to
    :data:`dynamics.tolerances.CLOSURE_TOL`, integers snapped; other chords are left out (warned)."""
    from mbcompose.dynamics.closed.embedding import chord_coordinates, complete_state
    from mbcompose.dynamics.codegen.fmi import ExtraOutput
    from mbcompose.dynamics.tolerances import CLOSURE_TOL

    model = composition.model
    if model.kind != "embedded":
        return ()
    tree = model.tree_model
    rng = np.random.default_rng(0)
    Q = np.array([complete_state(model, model.neutral() + CHORD_SAMPLE_SPREAD * rng.standard_normal(tree.nq),
                                 np.zeros(tree.nv))[0] for _ in range(tree.nq + 4)])
    values = [chord_coordinates(model, q) for q in Q]
    A = np.hstack([np.ones((len(Q), 1)), Q])
    extras, left_out = [], []
    for chord in model.chords:
        if chord.name not in values[0]:          # a fixed chord has no coordinate
            continue
        y = np.array([np.atleast_1d(v[chord.name][0]) for v in values])
        if y.shape[1] != 1:
            left_out.append(chord.name)
            continue
        coef = np.linalg.lstsq(A, y[:, 0], rcond=None)[0]
        snapped = np.where(np.abs(coef - np.round(coef)) <= CLOSURE_TOL, np.round(coef), coef)
        if np.abs(A @ snapped - y[:, 0]).max() > CLOSURE_TOL:
            left_out.append(chord.name)
            continue
        extras.append(ExtraOutput(chord.name, float(snapped[0]),
                                  tuple((columns[j], float(snapped[j + 1])) for j in np.flatnonzero(snapped[1:]))))
    if left_out:
        log.warning("the FMU has no output for the loop-closing joint(s) %s: their coordinates are not affine in "
                    "the tree's", ", ".join(left_out))
    return tuple(extras)
