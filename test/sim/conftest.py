"""Shared helpers for the MuJoCo tests: example-robot-data's URDFs and the ROS fixtures.

pytest only shares conftest fixtures down a directory tree, so the helpers that other test
folders own (robots_dir in test/dynamics, the rclpy fixtures in test/ros) are loaded by path
and re-exported here instead of being written a second time.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

_TEST_DIR = pathlib.Path(__file__).resolve().parents[1]


def _load(relative: str, name: str):
    # the module's own folder on sys.path, as pytest does for a conftest it loads itself (test/ros's
    # conftest imports shm_segments beside it)
    folder = str((_TEST_DIR / relative).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, _TEST_DIR / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


robots_dir = _load("dynamics/dynamics_oracles.py", "rbd_test_dynamics_oracles").robots_dir


@pytest.fixture(scope="session")
def robot_urdf():
    """robot_urdf('panda_description/urdf/panda.urdf') -> the URDF text."""

    def read(relative: str) -> str:
        return (robots_dir() / relative).read_text()

    return read


# --- ROS fixtures (test/ros/conftest.py) ---------------------------------------------

ros_fixtures = _load("ros/conftest.py", "rbd_test_ros_fixtures")
ros_env = ros_fixtures.ros_env
ros_node = ros_fixtures.ros_node
spawn_node = ros_fixtures.spawn_node
