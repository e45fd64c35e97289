"""The console scripts' front door (rbd_control.cli.controller / .simulator: main): `--help`
without starting anything, and one log line when a start has to compile the kernels first.

    rbd_controller --help        the node's parameters (from its parameter table), then exit
    rbd_mujoco_sim --help

Importing the nodes imports rbd_control.dynamics, whose numba kernels compile on their first
call in a fresh install (a joint-space controller's first state: ~25-30 s of one core,
silent); later starts load them from numba's on-disk cache. So this module looks at that cache
before importing them.
"""
from __future__ import annotations

import os
import sys

# importlib.util, pathlib and textwrap (~40 ms with what they import) are imported where they
# are used: the console scripts import this package before ros/lifetime.py's start_process
# takes SIGINT and SIGTERM over from Python's defaults (a KeyboardInterrupt traceback)

HELP_FLAGS = ("-h", "--help")


def wants_help(argv) -> bool:
    """--help / -h before any --ros-args (what follows belongs to ROS)."""
    for arg in argv:
        if arg == "--ros-args":
            return False
        if arg in HELP_FLAGS:
            return True
    return False


def kernel_cache_dir():
    """Where numba caches the kernels of rbd_control/dynamics (cache=True): a Path."""
    import importlib.util
    from pathlib import Path
    sources = Path(importlib.util.find_spec("rbd_control.dynamics").origin).parent
    custom = os.environ.get("NUMBA_CACHE_DIR")
    if custom:   # numba mirrors the source directory's absolute path below it
        return Path(custom) / sources.relative_to(sources.anchor)
    return sources / "__pycache__"


def announce_compile(program: str) -> None:
    """One log line when the kernels are not cached yet (the start will take a while)."""
    if not any(kernel_cache_dir().glob("*.nbi")):
        print(f"[INFO] [{program}]: first start of this install: compiling the dynamics "
              "kernels with numba (~30 s); later starts load them from the cache",
              file=sys.stderr, flush=True)


def help_text(program: str, summary: str, table) -> str:
    """Usage and one entry per parameter of `table` (a ParameterTable)."""
    import textwrap
    lines = [f"usage: {program} [--ros-args -p NAME:=VALUE ... | --params-file FILE]", "",
             summary, "", "parameters (runtime ones can also be set with ros2 param set):"]
    for p in table:
        default = "unset" if p.default is None else repr(p.default)
        when = "start-up" if p.read_only else "runtime"
        lines.append(f"  {p.name} ({p.type}, {when}, default {default})")
        text = p.description + (f" [{p.constraints_text()}]" if p.constraints_text() else "")
        lines += textwrap.wrap(text, 88, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines) + "\n"


# program -> (what it is, the module and name of its parameter table)
PROGRAMS = {
    "rbd_controller": ("Model-based joint torque controller for a URDF arm: joint_states in, "
                       "effort commands out; ~/joint_trajectory, ~/follow_joint_trajectory.",
                       "rbd_control.params.controller", "CONTROLLER_PARAMETERS"),
    "rbd_mujoco_sim": ("MuJoCo simulator of a URDF arm: effort commands in, joint_states and "
                       "/clock out.", "rbd_control.params.simulator", "SIM_PARAMETERS"),
}


def answered_help(program: str) -> bool:
    """Print `program`'s help when asked for it; True if it was. The tables live in
    rbd_control.params, which imports no numpy or numba: --help answers at once."""
    if not wants_help(sys.argv[1:]):
        return False
    import importlib
    summary, module, name = PROGRAMS[program]
    sys.stdout.write(help_text(program, summary, getattr(importlib.import_module(module), name)))
    return True
