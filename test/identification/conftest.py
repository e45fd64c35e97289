"""The identification tests' fixtures: the rclpy fixtures of test/ros, loaded by path
(test/by_path.py) instead of being copied. Shared helpers that are not fixtures live in
ident_support.py, imported by that name (a test importing `conftest` would get whichever
folder's conftest was imported first)."""
from __future__ import annotations

import pathlib
import sys

if str(pathlib.Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

ros_fixtures = load("ros/conftest.py", "rbd_test_ident_ros_fixtures")
ros_env = ros_fixtures.ros_env
ros_node = ros_fixtures.ros_node
spawn_node = ros_fixtures.spawn_node
