"""Shared helpers for the MuJoCo tests: example-robot-data's URDFs and the ROS fixtures.

pytest only shares conftest fixtures down a directory tree, so the helpers that other test
folders own (robots_dir in test/dynamics, the rclpy fixtures in test/ros) are loaded by path
(test/by_path.py) and re-exported here instead of being written a second time.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

if str(pathlib.Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

robots_dir = load("dynamics/dynamics_oracles.py", "rbd_test_dynamics_oracles").robots_dir


@pytest.fixture(scope="session")
def robot_urdf():
    """robot_urdf('panda_description/urdf/panda.urdf') -> the URDF text."""

    def read(relative: str) -> str:
        return (robots_dir() / relative).read_text()

    return read


# --- ROS fixtures (test/ros/conftest.py) ---------------------------------------------

ros_fixtures = load("ros/conftest.py", "rbd_test_ros_fixtures")
ros_env = ros_fixtures.ros_env
ros_node = ros_fixtures.ros_node
spawn_node = ros_fixtures.spawn_node
