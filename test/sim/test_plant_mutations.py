"""The same random URDF mutations as test/dynamics/test_urdf_mutations.py into the MuJoCo
plant: a ModelError naming an element (the loader's), or a plant that compiles, reports its
inertia changes by link, and steps without NaN or a blow-up. MuJoCo's own refusals would
surface as a plain ValueError and fail this test: every refusal must come from the loader.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import mujoco
import numpy as np
from hypothesis import given, settings

from rbd_control.dynamics import ModelError
from rbd_control.sim import build_mujoco_plant

_DYNAMICS = pathlib.Path(__file__).resolve().parents[1] / "dynamics"
sys.path.insert(0, str(_DYNAMICS))   # random_urdf_trees, imported by the mutations module
_spec = importlib.util.spec_from_file_location("rbd_test_urdf_mutations",
                                               _DYNAMICS / "test_urdf_mutations.py")
mutations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutations)


@settings(mutations.PROPERTY_SETTINGS, max_examples=40)
@given(urdf=mutations.mutated_urdfs())
def test_a_mutated_urdf_is_refused_by_the_loader_or_simulated(urdf):
    try:
        plant = build_mujoco_plant(urdf, joint_damping=False)
    except ModelError as error:
        assert mutations.names_an_element(str(error)), str(error)
        return
    assert all(a.startswith("link '") for a in plant.adjustments), plant.adjustments
    data = mujoco.MjData(plant.model)
    for _ in range(100):
        mujoco.mj_step(plant.model, data)
    assert np.all(np.isfinite(data.qpos)) and data.time > 0.099
