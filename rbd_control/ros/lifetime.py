"""The first lines of each of our executables: a signal before ROS is up, and a parent's death.

`start_process()` is the first call of every console script's main (rbd_control.cli.*,
rbd_bringup, rbd_description_publisher) and of `run.spin_node`, before the heavy imports
(numpy, numba, MuJoCo, rclpy: up to a second, and ~30 s of kernel compilation on a cold
cache). It does two things.

A SIGINT or SIGTERM before ROS is up ends the process at once with status 0: nothing has
been started that would need stopping (no node, no publisher, no helper process), and
Python's own SIGINT handler would raise KeyboardInterrupt wherever the import is (a traceback
and status -2), SIGTERM's default action would end it with -15. `run.spin_node` replaces
these handlers with its own (record the signal, let rclpy shut the context down) right
before rclpy.init; `ros_started()` says so.

The process ends with its parent. `ros2 launch` killed by SIGTERM (upstream ros2/launch#666:
it leaves SIGTERM's default action in place), `docker stop` with launch as PID 1 and systemd
with KillMode=mixed end the launcher and leave its children running and commanding the arm.
So each process asks the kernel for a SIGINT when its parent dies (prctl(PR_SET_PDEATHSIG),
Linux, through ctypes) and then shuts down as on Ctrl-C: the node's safe action on shutdown
(hold or zero) included. Where prctl is unavailable, a thread watches the parent's pid
(os.getppid changes when the parent is gone) every PARENT_POLL_S and sends the same SIGINT.

Careful: the kernel sends PR_SET_PDEATHSIG's signal when the parent *thread* that started the
process ends, not the parent process (prctl(2)). A parent that starts our executables from a
short-lived thread gets them stopped when that thread returns: start them from a thread that
lives as long as they should (launch, rbd_bringup and the tests start them from the main
thread).
"""
from __future__ import annotations

import os
import sys

# the C module under `signal`: `signal` imports enum (~10-100 ms on a loaded machine) before a
# handler could be set, and Python's default SIGINT handler raises KeyboardInterrupt meanwhile
import _signal as signal

__all__ = ["ENDING_SIGNALS", "start_process", "end_with_parent", "ros_started"]

# The signals that end a node: Ctrl-C (a terminal sends it to the whole process group; launch
# sends its own SIGINT on top, then SIGTERM) and SIGTERM (launch, systemd, docker stop).
ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PR_SET_PDEATHSIG = 1       # linux/prctl.h
PARENT_POLL_S = 0.2
_state = {"ros": False, "parent_watched": False}


def start_process():
    """The first call of an executable's main: end at once on a signal before ROS is up, and
    end (as on SIGINT) when the parent dies."""
    if not _state["ros"]:
        for signum in ENDING_SIGNALS:
            signal.signal(signum, _end_before_ros)
    end_with_parent()


def ros_started():
    """From here on the caller's own handlers take the signals (run.spin_node, ros_session)."""
    _state["ros"] = True


def _end_before_ros(signum, frame):
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:   # a closed or broken stream: nothing more to say anyway
            pass
    os._exit(0)


def end_with_parent(signum=signal.SIGINT):
    """`signum` to this process when its parent dies (once per process; see the module doc
    for the parent-thread caveat)."""
    if _state["parent_watched"]:
        return
    _state["parent_watched"] = True
    parent = os.getppid()
    if not _ask_kernel(signum):
        import threading
        threading.Thread(target=_watch_parent, args=(parent, signum), daemon=True,
                         name="parent watch").start()
    elif os.getppid() != parent:    # the parent died before the request took effect
        os.kill(os.getpid(), signum)


def _ask_kernel(signum) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    import ctypes    # here, not above: start_process's handlers first (ctypes.util: ~20 ms)
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent, signum):
    import time
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)
            return
