"""Where the recorded data of real robots lives: ../shared/data beside the repository (the
clone in CI sits beside a copy of shared/), or $RBD_SHARED_DATA. The data is never part of the
project; a test that needs it skips, saying why, where it is absent.

Loaded by path (test/by_path.py), or imported with test/ on sys.path (the bench scripts).
"""
from __future__ import annotations

import importlib.metadata
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
PANDA_LOG = pathlib.Path("panda_gaz2019") / "panda_excitation_first60.npz"


def shared_data_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("RBD_SHARED_DATA", REPO.parent / "shared" / "data"))


def panda_log():
    """(path, None) of the real Panda's log, or (None, why it is absent)."""
    path = shared_data_dir() / PANDA_LOG
    if path.is_file():
        return path, None
    return None, (f"{path} is absent: the real Franka Panda log lives outside the project "
                  "(../shared/data beside the repository, or $RBD_SHARED_DATA)")


def panda_urdf() -> pathlib.Path:
    """example-robot-data's panda.urdf (with a hand and two finger joints)."""
    dist = importlib.metadata.distribution("example-robot-data")
    return pathlib.Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/"
                                         "panda_description/urdf/panda.urdf"))
