"""The margin sweep: how much state period and loop delay the controller tolerates (a
benchmark, not a test; no ROS).

    python bench/delay_margin.py [--arms default_arm ur5 panda] [--modes ...]
                                 [--periods 1 2 4] [--delays 0 2 5 10] [--old-gains] [--bare]

An arm in MuJoCo (rbd_control.sim.Simulator, 1 kHz physics, the URDF's joint damping and
friction applied) driven by the Controller with its default gains, the way a real-time plant
that does not wait for the controller drives it:

  period  the controller sees every n-th state (n ms apart) and its command is held until the
          next one (zero-order hold: a driver or a node answering at 1000 / n Hz);
  delay   every command reaches the plant d ms after the state it answers (a controller that
          answers late, a slow transport).

Two runs per (arm, mode, period, delay):
  hold    at the arm's home pose from rest for 3 s, every joint knocked by +0.01 rad/s at
          0.2 s (except in gravity_compensation, which has no restoring term and would float
          away); over the last second: the largest excursion from home (rad) and the largest
          joint speed (rad/s). A loop that has lost stability grows instead of settling.
  track   (feedforward_pd, computed_torque) the demo trajectory (rbd_control.bringup.waypoints
          demo_waypoints, ~8 s), RMS and largest position error (rad).
plus the oscillation detector's detections (safety/oscillation.py) over both.

--old-gains uses the rule this replaced (8 Hz on min H_ii; computed_torque 8 Hz acceleration
gains) for comparison; --bare turns the age guard and the oscillation detector off, so the
table shows the gains alone; --markdown prints the table as markdown.
"""
from __future__ import annotations

import argparse
import collections
import importlib.metadata
import math
import pathlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints  # noqa: E402
from rbd_control.control import (Controller, ControllerConfig, JointTrajectory,  # noqa: E402
                                 StateError, TrajectoryPoint)
from rbd_control.control.laws.loop_design import reference_poses  # noqa: E402
from rbd_control.control.safety.oscillation import OscillationThresholds  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import crba_diagonal_batch, gravity, load_urdf  # noqa: E402
from rbd_control.sim.simulator import Simulator  # noqa: E402

MODES = ("gravity_compensation", "feedforward_pd", "computed_torque", "cartesian_impedance")
TRACKING = ("feedforward_pd", "computed_torque")
HOLD_SECONDS = 3.0
KNOCK_AT = 0.2           # s
KNOCK_VELOCITY = 0.01    # rad/s added to every joint (not in gravity_compensation: it floats)
MEASURE_LAST = 1.0       # s: the hold is judged on its last second
TRACK_SETTLE = 0.5       # s after the trajectory's end
DIVERGED = 10.0          # rad from home: call it gone


@dataclass(frozen=True)
class Arm:
    name: str
    urdf: str
    home: dict
    ee_link: str


def robots_dir() -> pathlib.Path:
    """example-robot-data (a cmeel wheel) keeps its robots under <site-packages>/cmeel.prefix."""
    dist = importlib.metadata.distribution("example-robot-data")
    return pathlib.Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))


def load_arm(name: str) -> Arm:
    if name == "default_arm":
        return Arm(name, default_arm_urdf(), dict(DEFAULT_ARM_HOME), "flange_link")
    if name == "ur5":
        urdf = (robots_dir() / "ur_description/urdf/ur5_robot.urdf").read_text()
        joints = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                  "wrist_2_joint", "wrist_3_joint")
        return Arm(name, urdf, dict(zip(joints, (0.0, -1.2, 1.4, -1.0, -1.2, 0.0))), "tool0")
    if name == "panda":
        urdf = (robots_dir() / "panda_description/urdf/panda.urdf").read_text()
        joints = ([f"panda_joint{i}" for i in range(1, 8)]
                  + ["panda_finger_joint1", "panda_finger_joint2"])
        home = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02)
        return Arm(name, urdf, dict(zip(joints, home)), "panda_link8")
    if name == "xarm7":
        urdf = (robots_dir() / "xarm_description/urdf/xarm7.urdf").read_text()
        joints = [f"joint{i}" for i in range(1, 8)]
        return Arm(name, urdf, dict(zip(joints, (0.0, -0.3, 0.0, 0.6, 0.0, 0.9, 0.0))), "link7")
    raise KeyError(f"unknown arm {name!r}")


def old_gains(model, bandwidth_hz=8.0, damping_ratio=1.0) -> dict:
    """The rule this replaced: kp = h w^2, kd = 2 zeta w h, h = min over poses of H_ii."""
    h = crba_diagonal_batch(model, reference_poses(model)).min(axis=0)
    h = np.maximum(h, 1e-6 * h.max())
    w = 2 * math.pi * bandwidth_hz
    return dict(kp=list(h * w * w), kd=list(2 * damping_ratio * w * h))


def demo_trajectory(arm: Arm, model) -> JointTrajectory:
    """The demo through every joint of `model`, inside its limits (demo_waypoints)."""
    joints = model.joint_names
    points = [TrajectoryPoint(list(q), list(v), list(a), time_from_start=float(t))
              for t, q, v, a in demo_waypoints(arm.home, joints, model)]
    return JointTrajectory(list(joints), points)


def make_controller(arm, model, mode, *, old=False, bare=False, **config):
    config = dict(config)
    if old:
        if mode == "computed_torque":   # 8 Hz acceleration gains, as before
            config.update(expected_state_period=0.001, expected_delay=0.0)
        else:
            config.update(old_gains(model))
    if bare:
        config.update(max_state_age=0.0, oscillation=OscillationThresholds(frequency=0.0))
    return Controller(model, ControllerConfig(mode=mode, joints=list(model.joint_names),
                                              ee_link=arm.ee_link, **config))


def run(arm: Arm, mode: str, period: int, delay: int, *, track=False, old=False, bare=False,
        model=None, sim_options=None, **config):
    """One run (module doc). period, delay: in 1 kHz physics steps (ms). Returns a dict:
    hold: drift (rad), speed (rad/s); track: rms, max (rad); both: detections, diverged."""
    model = model if model is not None else load_urdf(arm.urdf)
    joints = model.joint_names
    home = np.array([arm.home.get(j, 0.0) for j in joints])
    sim = Simulator(arm.urdf, commanded_joints=joints,
                    initial_positions=dict(zip(joints, map(float, home))), **(sim_options or {}))
    controller = make_controller(arm, model, mode, old=old, bare=bare, **config)
    sim.set_command(gravity(model, home))   # what a controller that ran before would command
    seconds = HOLD_SECONDS
    errors = []
    if track:
        s = sim.state()
        controller.update(s.time, s.names, s.position, s.velocity)
        trajectory = demo_trajectory(arm, model)
        controller.set_trajectory(trajectory, s.time)
        seconds = trajectory.points[-1].time_from_start + TRACK_SETTLE
    in_flight = collections.deque()   # (step at which it reaches the plant, effort)
    steps = int(round(seconds / sim.timestep))
    last = steps - int(round(MEASURE_LAST / sim.timestep))
    drift = speed = 0.0
    diverged = False
    for step in range(steps):
        s = sim.state()
        if step % period == 0:
            try:
                command = controller.update(s.time, s.names, s.position, s.velocity,
                                            age=delay * sim.timestep)
            except StateError:
                diverged = True
                break
            in_flight.append((step + delay, command.tau))
            if track and not command.holding:
                errors.append(command.error)
        while in_flight and in_flight[0][0] <= step:
            sim.set_command(in_flight.popleft()[1])
        knock = not track and mode != "gravity_compensation"
        if knock and step == int(round(KNOCK_AT / sim.timestep)):
            sim.data.qvel[:] += KNOCK_VELOCITY
        sim.step()
        excursion = float(np.abs(s.position - home).max())
        if sim.blow_ups or excursion > DIVERGED or not np.all(np.isfinite(s.velocity)):
            diverged = True
            break
        if step >= last and not track:
            drift = max(drift, excursion)
            speed = max(speed, float(np.abs(s.velocity).max()))
    result = dict(diverged=diverged, detections=controller.oscillation.detections)
    if track:
        e = np.array(errors) if errors else np.full((1, len(joints)), np.inf)
        result.update(rms=math.inf if diverged else float(np.sqrt(np.mean(np.square(e)))),
                      max=math.inf if diverged else float(np.abs(e).max()))
    else:
        result.update(drift=math.inf if diverged else drift, speed=math.inf if diverged else speed)
    return result


def sweep(args):
    """Rows of the table: (arm, mode, period, delay, hold result, track result or None)."""
    rows = []
    for name in args.arms:
        arm = load_arm(name)
        model = load_urdf(arm.urdf)
        for mode in args.modes:
            for period in args.periods:
                for delay in args.delays:
                    hold = run(arm, mode, period, delay, old=args.old_gains, bare=args.bare,
                               model=model)
                    track = (run(arm, mode, period, delay, track=True, old=args.old_gains,
                                 bare=args.bare, model=model) if mode in TRACKING else None)
                    rows.append((name, mode, period, delay, hold, track))
                    if not args.markdown:
                        print(line(rows[-1]), flush=True)
    return rows


def _cell(value, fmt):
    return "diverged" if not math.isfinite(value) else format(value, fmt)


def line(row):
    name, mode, period, delay, hold, track = row
    text = (f"{name:12s} {mode:21s} {1000 // period:5d} Hz {delay:3d} ms  hold "
            f"{_cell(hold['drift'], '.2e'):>9s} rad {_cell(hold['speed'], '.2e'):>9s} rad/s")
    if track is not None:
        text += (f"  track rms {_cell(track['rms'] * 1e3, '.3g'):>8s} mrad "
                 f"max {_cell(track['max'] * 1e3, '.3g'):>8s} mrad")
    detections = hold["detections"] + (track["detections"] if track else 0)
    return text + (f"  oscillations {detections}" if detections else "")


def markdown(rows) -> str:
    out = ["| arm | mode | state rate | delay | hold drift (rad) | hold peak speed (rad/s) "
           "| track RMS (mrad) | track max (mrad) | oscillations |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name, mode, period, delay, hold, track in rows:
        rms = _cell(track["rms"] * 1e3, ".3g") if track else "-"
        largest = _cell(track["max"] * 1e3, ".3g") if track else "-"
        detections = hold["detections"] + (track["detections"] if track else 0)
        out.append(f"| {name} | {mode} | {1000 // period} Hz | {delay} ms | "
                   f"{_cell(hold['drift'], '.1e')} | {_cell(hold['speed'], '.1e')} | {rms} | "
                   f"{largest} | {detections} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--arms', nargs='+', default=['default_arm', 'ur5', 'panda'])
    parser.add_argument('--modes', nargs='+', default=list(MODES), choices=MODES)
    parser.add_argument('--periods', nargs='+', type=int, default=[1, 2, 4],
                        help='ms between the states the controller answers')
    parser.add_argument('--delays', nargs='+', type=int, default=[0, 2, 5, 10],
                        help='ms from a state to its command acting')
    parser.add_argument('--old-gains', action='store_true', help='the rule this replaced')
    parser.add_argument('--bare', action='store_true',
                        help='no age guard, no oscillation detector')
    parser.add_argument('--markdown', action='store_true')
    args = parser.parse_args()
    started = time.monotonic()
    rows = sweep(args)
    if args.markdown:
        print(markdown(rows))
    print(f"\n{len(rows)} cases in {time.monotonic() - started:.0f} s; knock "
          f"{KNOCK_VELOCITY} rad/s at {KNOCK_AT} s, hold judged over the last {MEASURE_LAST} s "
          f"of {HOLD_SECONDS} s", file=sys.stderr)


if __name__ == '__main__':
    main()
