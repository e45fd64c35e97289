"""Shared fixtures for the identification tests.

Helpers other test folders own (the Pinocchio oracle in test/dynamics, the MuJoCo plant in
test/control) are loaded by path, as test/sim/conftest.py does, instead of being copied.
"""
from __future__ import annotations

import importlib.util
import pathlib

_TEST_DIR = pathlib.Path(__file__).resolve().parents[1]


def _load(relative: str, name: str):
    spec = importlib.util.spec_from_file_location(name, _TEST_DIR / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oracles = _load("dynamics/dynamics_oracles.py", "rbd_test_ident_dynamics_oracles")
