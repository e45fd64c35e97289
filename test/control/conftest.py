"""Shared fixtures for the controller tests: the default arm as model and as MuJoCo plant."""
from __future__ import annotations

import pytest

from closed_loop_support import make_plant
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf


@pytest.fixture(scope="session")
def arm_urdf() -> str:
    return default_arm_urdf()


@pytest.fixture(scope="session")
def arm_model(arm_urdf):
    return load_urdf(arm_urdf)


@pytest.fixture()
def arm_plant(arm_urdf, arm_model):
    return make_plant(arm_urdf, arm_model.joint_names)
