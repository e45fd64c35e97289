"""Shared helpers for the MuJoCo tests: where example-robot-data keeps its URDFs."""
from __future__ import annotations

import importlib.metadata
import pathlib

import pytest


def robots_dir() -> pathlib.Path:
    """example-robot-data (a cmeel wheel) installs its robots under <site-packages>/cmeel.prefix."""
    dist = importlib.metadata.distribution("example-robot-data")
    path = pathlib.Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    if not path.is_dir():
        raise FileNotFoundError(f"example-robot-data robots not found under {path}")
    return path


@pytest.fixture(scope="session")
def robot_urdf():
    """robot_urdf('panda_description/urdf/panda.urdf') -> the URDF text."""

    def read(relative: str) -> str:
        return (robots_dir() / relative).read_text()

    return read


# --- ROS fixtures -----------------------------------------------------------------
# The ROS-node tests own the fixtures for real rclpy nodes in separate processes
# (test/ros/conftest.py); the in-the-loop tests reuse them instead of keeping a second
# set. pytest only shares conftest fixtures down a directory tree, so load that file
# by path and re-export its fixtures here.

import importlib.util as _importlib_util  # noqa: E402

_ROS_CONFTEST = pathlib.Path(__file__).resolve().parents[1] / "ros" / "conftest.py"


def _load_ros_fixtures():
    spec = _importlib_util.spec_from_file_location("rbd_test_ros_fixtures", _ROS_CONFTEST)
    module = _importlib_util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ros_fixtures = _load_ros_fixtures()
ros_env = ros_fixtures.ros_env
ros_node = ros_fixtures.ros_node
spawn_node = ros_fixtures.spawn_node
