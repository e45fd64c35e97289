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
