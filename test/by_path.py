"""load(relative, name): a helper module of another test folder, imported by its path.

pytest shares conftest fixtures only down a directory tree, and every folder's conftest is a
module named `conftest`, so a test folder reaches another folder's helpers (the Pinocchio
oracle in test/dynamics, the rclpy fixtures in test/ros) by path, under a name of its own,
instead of copying them. pytest puts only a test's own folder on sys.path; the callers put
test/ there to import this module.
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

TEST_DIR = pathlib.Path(__file__).resolve().parent


def load(relative: str, name: str):
    """The module at test/<relative>, executed once under `name` (unique per caller)."""
    if name in sys.modules:
        return sys.modules[name]
    # the module's own folder on sys.path, as pytest does for a conftest it loads itself
    # (test/ros/conftest.py imports shm_segments beside it)
    folder = str((TEST_DIR / relative).parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, TEST_DIR / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
