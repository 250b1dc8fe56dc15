"""Every robot file installed with a reference tool is read as that tool reads it (issue 25).

* example-robot-data: every URDF (all of ``robots/**``, not only ``*/urdf/``) that Pinocchio's
  ``buildModelFromUrdf`` loads composes, and M, RNEA and ABA agree with Pinocchio's at random
  configurations (:func:`robot_refs.assert_matches_pinocchio`); a file Pinocchio refuses is
  refused with a one-line :class:`InputError` at a line.
* Drake's models shipped with pydrake (``share/drake/**/*.urdf|sdf``): every file Drake's
  ``Parser`` loads composes, with as many velocities as Drake's ``MultibodyPlant`` (a body
  Drake leaves floating is a free joint here; URDFs read with ``base='floating'``, as Drake
  floats a root link that no joint welds to ``world``, except those with a link named
  ``world``, which Drake takes for the world even with an ``<inertial>``: ``base='fixed'``).
"""

import glob
import os
import sysconfig

import numpy as np
import pytest

from mbcompose import compose
from mbcompose.parsers import InputError
from robot_refs import assert_matches_pinocchio

SHARE = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share")
ERD = os.path.join(SHARE, "example-robot-data", "robots")
ERD_URDFS = sorted(os.path.relpath(p, ERD) for p in glob.glob(os.path.join(ERD, "**", "*.urdf"), recursive=True))


def _drake_root():
    try:
        import pydrake
    except ImportError:
        return None
    return os.path.join(os.path.dirname(pydrake.__file__), "share", "drake")


DRAKE = _drake_root()
DRAKE_MODELS = [] if DRAKE is None else sorted(
    os.path.relpath(p, DRAKE) for ext in ("urdf", "sdf")
    for p in glob.glob(os.path.join(DRAKE, "**", f"*.{ext}"), recursive=True))


def test_the_installed_files_are_found():
    assert len(ERD_URDFS) >= 60
    assert DRAKE is None or len(DRAKE_MODELS) >= 20


def _is_singular(pin, pm) -> bool:
    M = pin.crba(pm, pm.createData(), pin.neutral(pm))
    return pm.nv > 0 and np.linalg.cond(np.triu(M) + np.triu(M, 1).T) > 1e12


@pytest.mark.parametrize("rel", ERD_URDFS)
def test_example_robot_data_urdf_is_read_as_pinocchio_reads_it(rel):
    pin = pytest.importorskip("pinocchio")
    path = os.path.join(ERD, rel)
    try:
        pm = pin.buildModelFromUrdf(path)
    except (RuntimeError, ValueError):
        with pytest.raises(InputError) as exc:
            compose(path, package_dirs=[SHARE])
        assert exc.value.line is not None and "\n" not in str(exc.value)
        return
    model = compose(path, package_dirs=[SHARE]).model
    assert_matches_pinocchio(pm, getattr(model, "tree_model", model), n=2, forward=not _is_singular(pin, pm))


@pytest.mark.parametrize("rel", DRAKE_MODELS)
def test_drake_model_that_drake_loads_composes(rel):
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    path = os.path.join(DRAKE, rel)
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(path)
    plant.Finalize()
    # Drake floats a URDF's root link unless a joint welds it to 'world' (a declared link 'world' is
    # Drake's world even with an <inertial>, which Drake ignores): base='floating' unless it is there
    world_link = 'name="world"' in open(path, encoding="utf-8").read()
    floating = rel.endswith(".urdf") and not world_link
    model = compose(path, **({"base": "floating"} if floating else {})).model
    assert getattr(model, "tree_model", model).nv == plant.num_velocities()
