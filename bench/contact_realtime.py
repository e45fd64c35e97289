"""False contact flags in free motion with the simulator on the wall clock (a benchmark, not a
test: ~1 min per arm and load).

    python bench/contact_realtime.py [--arms default_arm ur5] [--loads quiet busy]
                                     [--trials 10] [--mode computed_torque]
                                     [--set contact.use_measured_effort=true ...]

For each (arm, load) rbd_mujoco_sim (real time) and rbd_controller (the shipped
config/arm_controller.yaml, contact.enabled, contact.reaction none: report only, so every trial
is measured to its end) start once, as rbd_bringup starts them; busy: one busy loop pinned to
each of the first two CPUs. Each trial sends a fast goal in free space on ~/joint_trajectory:
every joint swung to +s, -s, +s and back at rest-to-rest segments of 1 s, s sized for 95 % of
the joint's URDF velocity limit (the fast trajectory of test/control/test_contact.py). The
simulator touches nothing: the true external torque is zero all along. Per trial:

  flags      ~/contact_state above OK (a contact flag or a latched collision: a false flag;
             a latched one is reset before the next trial)
  r          the largest |~/external_torque| (the controller's residual), and on which joint
  applied    the same observer (control/contact/observer.py) replayed here on every state the
             simulator published, fed the torque it reports it applied (joint_states.effort):
             what the residual would be if the observer knew the torque in force
  answered   the fraction of the simulator's states the controller answered (the others were
             coalesced: it took the newest queued)
  delay      the command's effective delay, in states: the m whose replay with the torque the
             simulator applied m states later (what the controller assumes it applied)
             matches the controller's r best

The uptime load is printed beside each block. The summary's last column is the verdict: no
false flag in any trial.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from delay_margin import load_arm  # noqa: E402
from realtime_campaign import Watch, busy_loops, stamp_of  # noqa: E402

from rbd_control.bringup.processes import (Bringup, BringupConfig,  # noqa: E402
                                           controller_parameters, find_config_file)
from rbd_control.dynamics import load_urdf  # noqa: E402

SEGMENT_S = 1.0           # s per rest-to-rest quintic segment
SPEED_FRACTION = 0.95     # of the URDF velocity limit at the segments' peak
SWING_LIMIT = 0.8         # rad: no joint swings further (the UR5's 3.15 rad/s would swing 0.8)


def fast_points(model, q0):
    """(t, q, qd, qdd) from rest at q0: +s, -s, +s, back, each segment 1 s (quintic: the peak
    speed is 1.875 x distance / time; the three middle segments cover 2 s)."""
    limit = np.where(model.velocity_limit > 0, model.velocity_limit, 2.0)
    swing = np.minimum(SPEED_FRACTION * limit / 1.875 / 2.0 * SEGMENT_S, SWING_LIMIT)
    zero = np.zeros(len(q0))
    points, t = [], 0.3
    for k, sign in enumerate((0, 1, -1, 1, 0)):
        points.append((t, q0 + sign * swing, zero, zero))
        t += SEGMENT_S if k else 0.5 * SEGMENT_S
    return points


class Recorder(Watch):
    """Watch's spinning (now, spin_until) over the states, the residual and the flags."""

    def __init__(self, node, executor, joints):
        from diagnostic_msgs.msg import DiagnosticStatus
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        from rbd_control.ros.controller.contact import STATE_QOS

        self.node, self.executor, self.joints = node, executor, list(joints)
        self.states, self.torques, self.status = [], [], []
        self.subscriptions = [
            node.create_subscription(JointState, "/joint_states", self.states.append, 5000),
            node.create_subscription(JointState, "/rbd_controller/external_torque",
                                     self.torques.append, 5000),
            node.create_subscription(DiagnosticStatus, "/rbd_controller/contact_state",
                                     self.status.append, STATE_QOS)]
        self.trajectory = node.create_publisher(JointTrajectory,
                                                "/rbd_controller/joint_trajectory", 10)

    def close(self):
        for subscription in self.subscriptions:
            self.node.destroy_subscription(subscription)
        self.node.destroy_publisher(self.trajectory)

    def arrays(self, messages, start, end, fields):
        picked = [m for m in messages if start <= stamp_of(m) <= end]
        t = np.array([stamp_of(m) for m in picked])
        out = []
        for name in fields:
            out.append(np.array([[getattr(m, name)[list(m.name).index(j)] for j in self.joints]
                                 for m in picked]).reshape(-1, len(self.joints)))
        return (t, *out)

    def reset_collision(self, alive):
        from std_srvs.srv import Trigger

        client = self.node.create_client(Trigger, "/rbd_controller/reset_collision")
        self.spin_until(client.service_is_ready, 20.0, alive)
        future = client.call_async(Trigger.Request())
        self.spin_until(future.done, 20.0, alive)
        self.node.destroy_client(client)
        return future.result()


def replay(model, t, q, qd, tau, gain):
    """The observer (model order = the recorder's joint order here) over the states, tau[k]:
    the torque taken to act over (t[k-1], t[k]]. Returns r per state."""
    from rbd_control.control.contact.observer import MomentumObserver

    observer = MomentumObserver(model, gain, max_gap=0.5)
    r = np.zeros_like(q)
    for k in range(len(t)):
        r[k] = observer.update(t[k], q[k], qd[k], tau[k])
    return r


def analyse(model, rec, start, end, gain):
    t, q, qd, effort = rec.arrays(rec.states, start, end, ("position", "velocity", "effort"))
    t_r, r = rec.arrays(rec.torques, start, end, ("effort",))
    applied = replay(model, t, q, qd, effort, gain)   # effort[k]: applied over (t[k-1], t[k]]
    fits = {}
    index = np.searchsorted(t, t_r)
    ok = (index < len(t)) & (np.abs(t[np.minimum(index, len(t) - 1)] - t_r) < 1e-6)
    for m in range(0, 9):
        # assumed over (t[k-1], t[k]]: what the plant applied m states later
        shifted = np.concatenate([effort[m:], np.repeat(effort[-1:], m, axis=0)])
        guess = replay(model, t, q, qd, shifted, gain)
        fits[m] = float(np.sqrt(np.mean((guess[index[ok]] - r[ok]) ** 2))) if ok.any() else np.inf
    peak = np.max(np.abs(r), axis=0) if len(r) else np.zeros(len(rec.joints))
    return dict(peak=float(peak.max()), joint=rec.joints[int(np.argmax(peak))],
                applied=float(np.max(np.abs(applied))) if len(applied) else 0.0,
                answered=len(t_r) / max(len(t), 1), delay=min(fits, key=fits.get),
                speed=float(np.max(np.abs(qd))) if len(qd) else 0.0)


def controller_yaml(arm, model, mode, extra, directory: Path) -> Path:
    parameters = controller_parameters(find_config_file())
    parameters.update(mode=mode, joints=list(model.joint_names), ee_link=arm.ee_link,
                      **{"contact.enabled": True, "contact.reaction": "none"}, **extra)
    path = directory / "controller.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameters}}))
    return path


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(node, executor, arm, load, trials, mode, extra, log_root):
    from rbd_control.ros.conversions import joint_trajectory_msg
    from rbd_control.ros.description_publisher import make_description_publisher

    model = load_urdf(arm.urdf)
    joints = list(model.joint_names)
    home = np.array([arm.home.get(j, 0.0) for j in joints])
    points = fast_points(model, home)
    log_dir = log_root / f"{arm.name}-{load}"
    log_dir.mkdir(parents=True)
    config = BringupConfig(urdf=arm.urdf, mode=mode, initial_positions=dict(arm.home),
                           config_file=controller_yaml(arm, model, mode, extra, log_dir),
                           log_dir=log_dir)
    publisher = make_description_publisher(node, arm.urdf)
    rec = Recorder(node, executor, joints)
    loops = busy_loops() if load == "busy" else []
    gain = float(extra.get("contact.observer_gain", 200.0))
    rows = []
    try:
        with Bringup(config) as bringup:
            alive = bringup.check_alive
            rec.spin_until(lambda: len(rec.torques) > 200, 120.0, alive)
            for k in range(trials):
                rec.status.clear()
                start = rec.now()
                rec.trajectory.publish(joint_trajectory_msg(joints, points))
                end = start + points[-1][0] + 0.5
                rec.spin_until(lambda: rec.now() >= end, 60.0, alive)
                flags = [s.level for s in rec.status if s.level != b"\x00"]
                row = analyse(model, rec, start, end, gain)
                row.update(flags=len(flags), collision=any(s.level == b"\x02" for s in
                                                           rec.status),
                           reason=next((s.message for s in rec.status if s.message), ""),
                           load=load_average())
                rows.append(row)
                print(f"  {arm.name} {load} trial {k}: peak |r| {row['peak']:.2f} N m "
                      f"({row['joint']}), replayed with the applied torque "
                      f"{row['applied']:.2f}; answered {100 * row['answered']:.0f} %, "
                      f"delay {row['delay']} states; up to {row['speed']:.2f} rad/s; "
                      f"flags {row['flags']} {row['reason']!r}; load {row['load']}",
                      flush=True)
                if row["collision"]:
                    rec.spin_until(lambda: rec.now() >= end + 0.3, 30.0, alive)
                    rec.reset_collision(alive)
                del rec.states[:-10], rec.torques[:-10]
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
        rec.close()
        node.destroy_publisher(publisher)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", nargs="+", default=["default_arm", "ur5"])
    parser.add_argument("--loads", nargs="+", default=["quiet", "busy"],
                        choices=("quiet", "busy"))
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--mode", default="computed_torque")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="more rbd_controller parameters (YAML values)")
    args = parser.parse_args(argv)
    extra = {name: yaml.safe_load(value) for name, value in
             (item.split("=", 1) for item in args.set)}
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(140, 160)))
    from rbd_control.ros.run import ros_session

    log_root = Path(tempfile.mkdtemp(prefix="rbd_contact_rt_"))
    print(f"logs in {log_root}; {args.mode}, {extra or 'defaults'}", flush=True)
    table = []
    with ros_session("rbd_contact_rt", args=[]) as (node, executor):
        for name in args.arms:
            for load in args.loads:
                rows = run(node, executor, load_arm(name), load, args.trials, args.mode,
                           extra, log_root)
                table.append((name, load, rows))
    print("\n| arm | load | trials | false flags | peak \\|r\\| N m (median / max) | "
          "replayed with the applied torque, max | answered | delay, states | uptime load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, load, rows in table:
        peaks = [r["peak"] for r in rows]
        print(f"| {name} | {load} | {len(rows)} | {sum(r['flags'] > 0 for r in rows)} | "
              f"{np.median(peaks):.2f} / {max(peaks):.2f} | "
              f"{max(r['applied'] for r in rows):.2f} | "
              f"{100 * min(r['answered'] for r in rows):.0f}-"
              f"{100 * max(r['answered'] for r in rows):.0f} % | "
              f"{min(r['delay'] for r in rows)}-{max(r['delay'] for r in rows)} | "
              f"{rows[-1]['load']} |")
    return 0 if all(r["flags"] == 0 for _, _, rows in table for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
