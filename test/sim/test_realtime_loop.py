"""`rbd_bringup` in real time, as a user runs it: the plant steps on the wall clock and never
waits for the controller (as Gazebo or a robot does), so a state's command arrives late and
states are skipped when the machine is busy. Every mode holds the default arm, and the tracking
modes follow the demo trajectory; the DART plant as well as MuJoCo's.

This test process watches the controller's tuning topics (~/desired, ~/error: stamped with the
state they answer) and /joint_states while the command runs on its own. Limits (the real-time
stability section of the docs): a holding arm moves less than 1e-2 rad and slower than
0.1 rad/s; tracking RMS within 5 mrad. An arm at rest under an exact model is an equilibrium
any loop keeps, so the holding modes are then knocked (every joint H(q) * 1 rad/s^2 for 50 ms
on rbd_mujoco_sim's ~/joint_disturbance): cartesian_impedance must be back within 1e-2 rad
and below 0.1 rad/s 2 s later; gravity_compensation (no restoring term, a frictionless arm)
coasts on and must not run away (kinetic energy at most 1.5x in 2 s). The campaign over three
arms, ten runs each, with and without busy loops is bench/realtime_campaign.py.
"""
from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import crba, load_urdf

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

JOINTS = list(DEFAULT_ARM_HOME)
HOME = np.array([DEFAULT_ARM_HOME[j] for j in JOINTS])
TRAJECTORY_S = demo_waypoints(DEFAULT_ARM_HOME, JOINTS)[-1][0]
HOLD_LIMIT = 1e-2          # rad: how far a holding arm may move
HOLD_SPEED_LIMIT = 0.1     # rad/s: how fast
TRACKING_RMS_LIMIT = 5e-3  # rad, over the demo trajectory
HOLD_S = 3.0               # s of sim time a holding mode is watched before the knock
KNOCK_S, AFTER_KNOCK_S = 0.05, 2.0
KNOCK_ATTEMPTS = 3
# kinetic energy at the end over 0.1 s after the knock. Gravity compensated a few ms late feeds
# energy in near the upright home pose (G(q(t - tau)) - G(q) ~ -(d2V/dq2) qd tau, and V is at a
# maximum there): 1.2x in 3 s at 2 ms of delay ROS-free, 0.98-1.08x through the nodes
# (bench/realtime_campaign.py); a loop that is unstable grows it much faster
ENERGY_GROWTH_LIMIT = 1.5
NO_DART = importlib.util.find_spec("dartpy") is None

CASES = [
    ("mujoco", "gravity_compensation"),
    ("mujoco", "cartesian_impedance"),
    ("mujoco", "feedforward_pd"),
    ("mujoco", "computed_torque"),
    pytest.param("dart", "computed_torque", marks=pytest.mark.skipif(
        NO_DART, reason="--sim dart needs dartpy (pip install rbd_control[dart])")),
]


def stamp_of(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def by_name(msg, field="position") -> np.ndarray:
    values = getattr(msg, field)
    return np.array([values[list(msg.name).index(j)] for j in JOINTS])


def start(spawn_node, tmp_path, engine, mode, trajectory):
    return spawn_node("rbd_control.bringup.launcher", node_name="rbd_bringup", args=[
        "--sim", engine, "--mode", mode, *(["--demo-trajectory"] if trajectory else []),
        "--duration", "120", "--log-dir", str(tmp_path / "logs")])


def check_hold(ros_node, bringup, states, engine, mode):
    """From the first state on, HOLD_S s of /joint_states: range and peak speed per joint;
    then the knock (module doc) and the arm's answer to it."""
    ros_node.wait_for(lambda: len(states) > 100 or not bringup.alive(), 60.0, "joint states")
    assert bringup.alive(), bringup.log()
    first = len(states)
    wait_sim(ros_node, bringup, states, HOLD_S)
    q = np.array([by_name(s) for s in states[first:]])
    qd = np.array([by_name(s, "velocity") for s in states[first:]])
    moved, speed = float(np.ptp(q, axis=0).max()), float(np.abs(qd).max())
    print(f"\n{engine} {mode}, real time: held within {moved:.2e} rad, peak speed "
          f"{speed:.2e} rad/s over {len(q)} states")
    assert moved < HOLD_LIMIT and speed < HOLD_SPEED_LIMIT, (moved, speed)

    model = load_urdf(default_arm_urdf())
    order = [JOINTS.index(j) for j in model.joint_names]
    knock = crba(model, HOME[order]) @ np.ones(len(order))
    disturbance = ros_node.node.create_publisher(
        JointState, "/rbd_mujoco_sim/joint_disturbance", 10)
    ros_node.wait_for_subscribers(disturbance)
    # A knock the simulator's executor takes only together with its release (both queued
    # while it was busy) lasts no time and the arm never moves (seen once in CI): then again.
    for _ in range(KNOCK_ATTEMPTS):
        start = len(states)
        disturbance.publish(JointState(name=list(model.joint_names),
                                       effort=list(map(float, knock))))
        # KNOCK_S of wall clock, which the plant in real time follows, without spinning (the
        # states queue meanwhile): waiting on the stamps this process has received, or spinning
        # through its backlog, lengthened the pulse by that backlog (seen: a pulse ~8x too
        # long, 0.07 J, and the coast's energy measured while it still pushed)
        time.sleep(KNOCK_S)
        disturbance.publish(JointState(name=list(model.joint_names), effort=[0.0] * len(order)))
        wait_sim(ros_node, bringup, states, AFTER_KNOCK_S)
        if max(np.abs(by_name(s, "velocity")).max() for s in states[start:]) > 2 * speed + 1e-6:
            break
    else:
        pytest.fail(f"no knock moved the arm in {KNOCK_ATTEMPTS} attempts")
    t = np.array([stamp_of(s) for s in states[start:]])
    q = np.array([by_name(s) for s in states[start:]])
    qd = np.array([by_name(s, "velocity") for s in states[start:]])
    if mode == "gravity_compensation":
        # coasting: 0.1 s after the pulse, which starts when the simulator gets it
        onset = t[int(np.argmax(np.abs(qd).max(axis=1) > 1e-6))]
        moving = int(np.argmax(t >= onset + KNOCK_S + 0.1))
        energy = [kinetic_energy(model, order, q[k], qd[k]) for k in (moving, -1)]
        print(f"knocked: kinetic energy {energy[0]:.2e} J just after, {energy[1]:.2e} J "
              f"{t[-1] - t[moving]:.1f} s later")
        assert energy[1] < ENERGY_GROWTH_LIMIT * energy[0], energy
        return
    last = t >= t[-1] - 0.5
    back = float(np.abs(q[last] - HOME).max())
    after = float(np.abs(qd[last]).max())
    print(f"knocked: peak {np.abs(q - HOME).max():.2e} rad, back within {back:.2e} rad, "
          f"{after:.2e} rad/s after {t[-1] - t[0]:.1f} s")
    assert back < HOLD_LIMIT and after < HOLD_SPEED_LIMIT, (back, after)


def kinetic_energy(model, order, q, qd) -> float:
    """1/2 qd' H(q) qd, q and qd in JOINTS order."""
    return 0.5 * float(qd[order] @ crba(model, q[order]) @ qd[order])


def wait_sim(ros_node, bringup, states, seconds):
    """Spin until the simulator's clock (its joint states' stamps) is `seconds` further."""
    end = stamp_of(states[-1]) + seconds
    ros_node.wait_for(lambda: stamp_of(states[-1]) >= end or not bringup.alive(),
                      seconds * 10 + 10, f"{seconds} s of sim time")
    assert bringup.alive(), bringup.log()


def check_tracking(ros_node, bringup, desired, errors, engine, mode, tmp_path):
    def moving(msg):   # the desired pose is away from home: the trajectory is under way
        return np.abs(by_name(msg) - HOME).max() > 1e-4

    ros_node.wait_for(lambda: any(moving(d) for d in desired[-50:]) or not bringup.alive(), 60.0,
                      "the demo trajectory to start")
    assert bringup.alive(), bringup.log()
    # the first waypoint (home) is 0.5 s in; 1 s of holding home after the last one
    end = min(stamp_of(d) for d in desired if moving(d)) - 0.5 + TRAJECTORY_S
    ros_node.wait_for(lambda: stamp_of(desired[-1]) > end + 1.0 or not bringup.alive(), 60.0,
                      "the demo trajectory to end")
    simulator_log = (tmp_path / "logs" / "simulator.log").read_text()
    assert f"in {engine}" in simulator_log, simulator_log[-2000:]

    error_at = {stamp_of(e): by_name(e) for e in errors}
    paired = [(moving(d), error_at[stamp_of(d)]) for d in desired if stamp_of(d) in error_at]
    hold = [error for is_moving, error in paired if not is_moving]
    tracking = [error for is_moving, error in paired if is_moving]
    # the loop answers at least every other state of a 1 kHz plant on a busy machine
    assert len(hold) > 250 and len(tracking) > 0.25 * (TRAJECTORY_S - 0.5) * 1000, \
        (len(hold), len(tracking))
    hold_error = float(np.abs(hold).max())
    rms = float(np.sqrt(np.mean(np.square(tracking))))
    print(f"\n{engine} {mode}, real time: hold error {hold_error:.2e} rad, tracking RMS "
          f"{rms * 1e3:.3f} mrad over {len(tracking)} states")
    assert hold_error < HOLD_LIMIT
    assert rms < TRACKING_RMS_LIMIT, simulator_log[-2000:]


@pytest.mark.parametrize("engine, mode", CASES)
def test_real_time_loop_holds_and_tracks(ros_node, spawn_node, tmp_path, engine, mode):
    tracking = mode in ("feedforward_pd", "computed_torque")
    desired = ros_node.collect(JointState, "/rbd_controller/desired", 1000)
    errors = ros_node.collect(JointState, "/rbd_controller/error", 1000)
    states = ros_node.collect(JointState, "/joint_states", 1000)
    bringup = start(spawn_node, tmp_path, engine, mode, tracking)
    if tracking:
        check_tracking(ros_node, bringup, desired, errors, engine, mode, tmp_path)
    else:
        check_hold(ros_node, bringup, states, engine, mode)
