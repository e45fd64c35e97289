"""The real-time campaign: every mode on three arms through the nodes, the simulator on the
wall clock (it never waits for the controller, as Gazebo or a robot does), ten trials each,
on a quiet machine and with two busy loops (a benchmark, not a test: it takes ~40 min).

    python bench/realtime_campaign.py [--arms default_arm ur5 panda] [--modes ...]
                                      [--loads quiet busy] [--trials 10] [--sim mujoco]

For each (arm, load, mode) rbd_mujoco_sim and rbd_controller start once, as rbd_bringup starts
them (bringup/processes.py: the shipped config/arm_controller.yaml with the arm's joints and
ee_link, the controller's own default gains, real time), then each trial, judged on the
simulator's /joint_states and the controller's ~/error (stamped with the state it answers):

  hold   1.5 s from rest: how far any joint moves (peak to peak, rad) and its peak speed;
  knock  every joint gets a torque pulse H(q_home) * 1 rad/s^2 for 50 ms (~0.05 rad/s) on
         rbd_mujoco_sim's ~/joint_disturbance, then 3 s: the largest excursion, when it settled
         (within 2 mrad of where it was, for good), and over the last 0.5 s the offset and the
         peak speed. gravity_compensation has no restoring term and the default arm no
         friction, so a knocked arm coasts on: it is knocked in its last trial only and judged
         on its kinetic energy (1/2 qd' H(q) qd at the end over 0.1 s after the pulse: a loop
         that feeds energy in grows it);
  track  (feedforward_pd, computed_torque) the demo trajectory (bringup/waypoints.py, 8.5 s)
         on ~/joint_trajectory: RMS and largest error over it and the second after it.

busy: one busy-loop process pinned to each of the first two CPUs for the whole bring-up. The
controller's /diagnostics gives the oscillation detections and the state age it measured.
Limits (doc/concepts/safety_and_loop.md): holding moves < 1e-2 rad and < 0.1 rad/s, a knocked
arm is back within 1e-2 rad and < 0.1 rad/s 3 s after, a coasting one does not run away
(kinetic energy ratio < 1.5: a gravity term a few ms late feeds some in near an upright pose),
tracking RMS < 5 mrad.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from delay_margin import load_arm  # noqa: E402

from rbd_control.bringup.processes import (Bringup, BringupConfig,  # noqa: E402
                                           controller_parameters, find_config_file)
from rbd_control.bringup.waypoints import demo_waypoints  # noqa: E402
from rbd_control.dynamics import crba, load_urdf  # noqa: E402

MODES = ("gravity_compensation", "feedforward_pd", "computed_torque", "cartesian_impedance")
TRACKING = ("feedforward_pd", "computed_torque")
HOLD_S, KNOCK_S, KNOCK_WATCH_S, LAST_S = 1.5, 0.05, 3.0, 0.5
TRACK_SETTLE_S = 1.0       # s after the trajectory's last point, counted in its error
SETTLED = 2e-3             # rad: the knocked arm counts as settled once within this for good
KNOCK_ACCELERATION = 1.0   # rad/s^2 for KNOCK_S: 0.05 rad/s on every joint
LIMITS = dict(hold=1e-2, speed=0.1, back=1e-2, rms=5e-3, energy=1.5)
SPIN = 0.01


def stamp_of(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


class Watch:
    """This process's view of the loop: states, the controller's errors and diagnostics."""

    def __init__(self, node, executor, joints):
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        self.node, self.executor, self.joints = node, executor, list(joints)
        self.states, self.errors, self.diagnostics = [], [], {}
        self.subscriptions = [
            node.create_subscription(JointState, "/joint_states", self.states.append, 1000),
            node.create_subscription(JointState, "/rbd_controller/error", self.errors.append,
                                     1000),
            node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)]
        self.trajectory = node.create_publisher(JointTrajectory,
                                                "/rbd_controller/joint_trajectory", 10)
        self.disturbance = node.create_publisher(JointState,
                                                 "/rbd_mujoco_sim/joint_disturbance", 10)
        self.JointState = JointState

    def close(self):
        for subscription in self.subscriptions:
            self.node.destroy_subscription(subscription)
        self.node.destroy_publisher(self.trajectory)
        self.node.destroy_publisher(self.disturbance)

    def _on_diagnostics(self, msg):
        for status in msg.status:
            if "rbd_controller" in status.name:
                self.diagnostics = {v.key: v.value for v in status.values}

    def now(self) -> float:
        return stamp_of(self.states[-1]) if self.states else -1.0

    def spin_until(self, done, timeout, alive):
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("no progress: is the loop running?")
            alive()
            self.executor.spin_once(timeout_sec=SPIN)

    def spin_sim(self, seconds, alive):
        end = self.now() + seconds
        self.spin_until(lambda: self.now() >= end, 10 * seconds + 10, alive)

    def window(self, start, end, messages=None, field="position"):
        picked = [m for m in (self.states if messages is None else messages)
                  if start <= stamp_of(m) <= end]
        return np.array([[getattr(m, field)[list(m.name).index(j)] for j in self.joints]
                         for m in picked]).reshape(-1, len(self.joints))

    def times(self, start, end):
        return np.array([stamp_of(m) for m in self.states if start <= stamp_of(m) <= end])

    def knock(self, efforts):
        self.disturbance.publish(self.JointState(name=self.joints,
                                                 effort=[float(e) for e in efforts]))


def kinetic_energy(model, q, qd) -> float:
    return 0.5 * float(qd @ crba(model, q) @ qd)


def settle_time(t, error) -> float:
    """When |error| fell within SETTLED for good (inf: not by the end)."""
    outside = np.flatnonzero(np.abs(error).max(axis=1) > SETTLED)
    if not len(outside):
        return 0.0
    return float(t[outside[-1] + 1] - t[0]) if outside[-1] + 1 < len(t) else np.inf


def trial(watch, model, mode, knock_efforts, trajectory_msg, alive, knock=True):
    """One trial (module doc): a dict of figures."""
    t0 = watch.now()
    watch.spin_sim(HOLD_S, alive)
    q = watch.window(t0, t0 + HOLD_S)
    qd = watch.window(t0, t0 + HOLD_S, field="velocity")
    result = dict(hold=float(np.ptp(q, axis=0).max()), hold_speed=float(np.abs(qd).max()))
    # when (s into the window) and on which joint the hold was fastest: for the trials log
    at = np.unravel_index(np.argmax(np.abs(qd)), qd.shape) if len(qd) else (0, 0)
    result["hold_speed_at"] = (float(watch.times(t0, t0 + HOLD_S)[at[0]] - t0), int(at[1]))
    if knock:
        result.update(knocked(watch, model, mode, knock_efforts, q.mean(axis=0), alive))
    if mode in TRACKING:
        result.update(tracked(watch, trajectory_msg, alive))
    return result


def knocked(watch, model, mode, knock_efforts, reference, alive):
    """The knock (module doc) and the arm's answer to it."""
    t1 = watch.now()
    watch.knock(knock_efforts)
    watch.spin_sim(KNOCK_S, alive)         # the simulator applies it until told otherwise
    watch.knock(np.zeros(len(knock_efforts)))
    watch.spin_sim(KNOCK_WATCH_S - KNOCK_S, alive)
    end = t1 + KNOCK_WATCH_S
    t, q = watch.times(t1, end), watch.window(t1, end)
    qd = watch.window(t1, end, field="velocity")
    if mode == "gravity_compensation":   # from 0.1 s after the pulse: coasting only
        onset = t[int(np.argmax(np.abs(qd).max(axis=1) > 1e-6))]   # the simulator got it
        start = int(np.argmax(t >= onset + KNOCK_S + 0.1))
        energy = [kinetic_energy(model, q[k], qd[k]) for k in (start, -1)]
        return dict(energy_ratio=energy[1] / max(energy[0], 1e-12))
    last = t >= end - LAST_S
    return dict(knock_peak=float(np.abs(q - reference).max()),
                settle=settle_time(t, q - reference),
                back=float(np.abs(q[last] - reference).max()),
                back_speed=float(np.abs(qd[last]).max()))


def tracked(watch, trajectory_msg, alive):
    """The demo trajectory: the controller's own error over it (~/error)."""
    t2 = watch.now()
    last = trajectory_msg.points[-1].time_from_start
    end = last.sec + last.nanosec * 1e-9 + TRACK_SETTLE_S
    watch.trajectory.publish(trajectory_msg)
    watch.spin_sim(end, alive)             # the next trial's hold starts with the arm at rest
    error = watch.window(t2, t2 + end, watch.errors)
    if not len(error):
        return dict(rms=np.inf, max=np.inf, answered=0.0)
    return dict(rms=float(np.sqrt(np.mean(np.square(error)))), max=float(np.abs(error).max()),
                answered=len(error) / max(len(watch.times(t2, t2 + end)), 1))


def busy_loops():
    spin = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"
    return [subprocess.Popen([sys.executable, "-c", spin, str(cpu)])
            for cpu in range(min(2, os.cpu_count()))]


def controller_yaml(arm, model, mode, directory: Path) -> Path:
    parameters = controller_parameters(find_config_file())
    parameters.update(mode=mode, joints=list(model.joint_names), ee_link=arm.ee_link)
    path = directory / "controller.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    return path


def run_bringup(node, executor, arm, mode, load, trials, engine, log_root):
    from rbd_control.ros.conversions import joint_trajectory_msg
    from rbd_control.ros.description_publisher import make_description_publisher

    model = load_urdf(arm.urdf)
    joints = list(model.joint_names)
    home = np.array([arm.home.get(j, 0.0) for j in joints])
    knock_efforts = crba(model, home) @ np.full(len(joints), KNOCK_ACCELERATION)
    trajectory_msg = joint_trajectory_msg(joints, demo_waypoints(arm.home, joints))
    log_dir = log_root / f"{arm.name}-{mode}-{load}"
    log_dir.mkdir(parents=True)
    config = BringupConfig(urdf=arm.urdf, config_file=controller_yaml(arm, model, mode, log_dir),
                           mode=mode, engine=engine, initial_positions=dict(arm.home),
                           log_dir=log_dir)
    publisher = make_description_publisher(node, arm.urdf)
    watch = Watch(node, executor, joints)
    loops = busy_loops() if load == "busy" else []
    results = []
    try:
        with Bringup(config) as bringup:
            watch.spin_until(lambda: len(watch.errors) > 200, 120.0, bringup.check_alive)
            watch.spin_sim(1.0, bringup.check_alive)
            for k in range(trials):
                # a weightless frictionless arm coasts on after a knock: knock it last
                knock = mode != "gravity_compensation" or k == trials - 1
                results.append(trial(watch, model, mode, knock_efforts, trajectory_msg,
                                     bringup.check_alive, knock))
                del watch.states[:-10], watch.errors[:-10]
            results.append(dict(watch.diagnostics))
            (log_dir / "trials.json").write_text(json.dumps(results, indent=1))
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        watch.close()
        node.destroy_publisher(publisher)
    return results


def summary(arm, mode, load, results) -> dict:
    trials, diagnostics = results[:-1], results[-1]
    keys = {k for r in trials for k in r} - {"answered", "hold_speed_at"}
    worst = {k: max(r[k] for r in trials if k in r) for k in keys}
    row = dict(arm=arm, mode=mode, load=load, trials=len(trials), **worst,
               oscillations=diagnostics.get("oscillations", "?"),
               age_p99=diagnostics.get("state age p99 [ms]", "?"))
    if "rms" in worst:
        row["rms_median"] = float(np.median([r["rms"] for r in trials]))
        row["answered"] = min(r["answered"] for r in trials)
    ok = (worst["hold"] < LIMITS["hold"] and worst["hold_speed"] < LIMITS["speed"]
          and worst.get("back", 0.0) < LIMITS["back"]
          and worst.get("back_speed", 0.0) < LIMITS["speed"]
          and worst.get("energy_ratio", 0.0) < LIMITS["energy"]
          and worst.get("rms", 0.0) < LIMITS["rms"])
    row["verdict"] = "OK" if ok else "FAIL"
    return row


COLUMNS = [("arm", "{}"), ("load", "{}"), ("mode", "{}"), ("trials", "{}"),
           ("hold", "{:.1e}"), ("hold_speed", "{:.1e}"), ("knock_peak", "{:.1e}"),
           ("settle", "{:.2f}"), ("back", "{:.1e}"), ("back_speed", "{:.1e}"),
           ("energy_ratio", "{:.2f}"), ("rms_median", "{:.3f}"),
           ("rms", "{:.3f}"), ("max", "{:.2f}"), ("answered", "{:.0%}"),
           ("age_p99", "{}"), ("oscillations", "{}"), ("verdict", "{}")]
HEADER = ("| arm | load | mode | trials | hold, worst (rad) | hold speed (rad/s) | knock peak "
          "(rad) | settled in (s) | back within (rad) | speed after (rad/s) | energy after/"
          "before | RMS median (mrad) | RMS worst (mrad) | max (mrad) | states answered "
          "| state age p99 (ms) | oscillations | |")


def markdown_row(row) -> str:
    cells = []
    for key, fmt in COLUMNS:
        value = row.get(key)
        if value is None:
            cells.append("-")
        elif key in ("rms", "rms_median", "max"):
            cells.append(fmt.format(value * 1e3))
        else:
            cells.append(fmt.format(value))
    return "| " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", nargs="+", default=["default_arm", "ur5", "panda"])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--loads", nargs="+", default=["quiet", "busy"], choices=("quiet", "busy"))
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--sim", default="mujoco", choices=("mujoco", "dart"))
    args = parser.parse_args(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(200, 230)))
    from rbd_control.ros.run import ros_session

    rows = []
    log_root = Path(tempfile.mkdtemp(prefix="rbd_campaign_"))
    print(f"logs in {log_root}\n{HEADER}\n" + "|---" * len(COLUMNS) + "|", flush=True)
    with ros_session("rbd_campaign", args=[]) as (node, executor):
        for name in args.arms:
            arm = load_arm(name)
            for load in args.loads:
                for mode in args.modes:
                    try:
                        results = run_bringup(node, executor, arm, mode, load, args.trials,
                                              args.sim, log_root)
                        rows.append(summary(name, mode, load, results))
                    except (RuntimeError, TimeoutError) as error:
                        rows.append(dict(arm=name, mode=mode, load=load, verdict=f"ERROR {error}"))
                    print(markdown_row(rows[-1]), flush=True)
    return 0 if all(r["verdict"] == "OK" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
