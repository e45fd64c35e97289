"""Sorts the suite into what starts ROS nodes and what only computes, for scripts/test.sh.

A test is marked `nodes` when it lives in test/ros or test/sim (the node tests and the
simulator's) or takes a fixture that starts or reaches nodes. scripts/test.sh runs the
`nodes` tests at normal priority, several of them in real time, and the others niced beside
them: plain computation that only fills the cores the nodes leave idle.
"""
from pathlib import Path

import pytest

NODE_FOLDERS = ("ros", "sim")
NODE_FIXTURES = {"ros_env", "ros_node", "spawn_node"}
TEST_ROOT = Path(__file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "nodes: starts ROS nodes or a simulator (scripts/test.sh runs these at "
        "normal priority, the rest niced beside them)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        folder = Path(item.path).resolve().relative_to(TEST_ROOT).parts[0]
        if folder in NODE_FOLDERS or NODE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.nodes)
