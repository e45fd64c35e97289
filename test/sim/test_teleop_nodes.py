"""Leader and follower through the real nodes, in real time: `rbd_bringup --teleop`
(rbd_control/bringup/teleop.py) starts two runs of the default arm, /leader in
gravity_compensation moved by a simulated hand along a 20 s lap and /follower in
joint_impedance on the leader's states streamed at 50 Hz, with a box on its way, and links
them (force feedback while the follower flags a contact). Asked: one lap, then Ctrl-C (SIGINT)
ends it with status 0; its line of figures says the follower's RMS error of the leader stayed
below 20 mrad, the box was touched and flagged, the feedback reached the leader; the plots
are written. The same scene in lock step, ROS-free: test/control/test_leader_follower.py.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

LAP_WITHIN_S = 90.0   # start-up (a cold kernel cache compiles first) and the 20 s lap
STOP_S = 15.0         # SIGINT to exit: four nodes stopped, then the figures and plots
FIGURES = re.compile(r"leader moved up to ([0-9.]+) rad; follower RMS error ([0-9.]+) mrad "
                     r"\(largest ([0-9.]+);.*contact torque peak ([0-9.]+) N m, estimated "
                     r"([0-9.]+), contact flagged: (yes|no); feedback peak on the leader "
                     r"([0-9.]+) N m")


# Measured with the tests that start no node running beside it at nice 19, as CI's wall-clock
# lane runs it: 8.8, 10.0, 10.8, 10.2, 16.2 mrad RMS (load average 5.5-7.0), 42-45 s each
# (doc/howto/teleop.md)
@pytest.mark.wall_clock
def test_a_lap_then_ctrl_c_the_follower_tracks_feels_the_box_and_feeds_it_back(
        ros_env, spawn_node, tmp_path):
    logs = tmp_path / "teleop"
    run = spawn_node("rbd_control.bringup.launcher", node_name="bringup_teleop",
                     args=["--teleop", "--duration", "120", "--log-dir", str(logs)])
    run.wait_for_log("teleop: lap 1 done", LAP_WITHIN_S)
    run.process.send_signal(signal.SIGINT)   # as Ctrl-C in its terminal
    assert run.stop(STOP_S) == 0, run.log()
    print(run.log())
    found = FIGURES.search(run.log())
    assert found, run.log()
    moved, rms, largest, touch, estimated, flagged, fed = found.groups()
    assert float(moved) > 0.2 and float(rms) < 20.0, run.log()
    assert float(touch) > 1.0 and flagged == "yes" and float(fed) > 1.0, run.log()
    last = run.log().strip().splitlines()[-1]
    assert last.startswith("rbd_bringup: done: stopped by a signal"), last
    for name in ("teleop_positions.png", "teleop_error.png", "teleop_contact.png"):
        assert (logs / name).stat().st_size > 10_000, name


@pytest.mark.parametrize("args", [["--teleop", "--namespace", "left"],
                                  ["--teleop", "--mode", "computed_torque"],
                                  ["--teleop", "--demo-trajectory"],
                                  ["--teleop-feedback", "off"]])
def test_what_teleop_decides_itself_is_refused_beside_it_in_one_line(ros_env, args):
    done = subprocess.run([sys.executable, "-m", "rbd_control.bringup.launcher", *args],
                          env=ros_env, capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stdout + done.stderr
    assert lines[0].startswith("rbd_bringup: error: argument --teleop") or \
        "only with --teleop" in lines[0], lines[0]
