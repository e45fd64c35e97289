"""Per-message and per-model costs of the controller core on huge input (a benchmark, not a
test: nothing here asserts a time).

    python bench/hostile_input.py [--joints 1000 3000 5000]

Prints milliseconds for: rclpy's deserialisation of the messages the node bounds (with a ROS
environment), a 40,007-name joint state (first time a name list is seen, and
repeated), the same with a duplicate (refused), a 40,007-name trajectory (refused), a
10,000-point trajectory on the 6-joint arm (accepted), and Controller() on comb-shaped robots
of --joints joints (default gains; peak traced allocation, tracemalloc), beside the former rule
(the minimum over 65 full CRBAs) where that is affordable.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "control"))

from rbd_control.control import (Controller, ControllerConfig, JointTrajectory,  # noqa: E402
                                 StateError, TrajectoryError, TrajectoryPoint)
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import load_urdf  # noqa: E402


def ms(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return 1e3 * best


def refused(fn, error):
    def run():
        try:
            fn()
        except error:
            return
        raise AssertionError("not refused")
    return run


def message_costs():
    model = load_urdf(default_arm_urdf())
    config = ControllerConfig(state_timeout=10.0)
    names = list(model.joint_names) + [f"junk_{i}" for i in range(40_001)]
    q = np.zeros(len(names))
    controller = Controller(model, config)
    orders = [names, names[::-1]]   # alternate, so each call sees a new name list

    def new_list():
        orders.reverse()
        controller.update(0.0, orders[0], q, q)
    print(f"40,007-name state, new name list each time   {ms(new_list):8.2f} ms")
    controller.update(0.0, names, q, q)
    repeated = ms(lambda: controller.update(0.0, names, q, q))
    print(f"40,007-name state, repeated name list        {repeated:8.2f} ms")
    dup = names + ["junk_3"]
    qq = np.zeros(len(dup))
    duplicate = ms(refused(lambda: Controller.update(controller, 0.0, list(dup), qq, qq),
                           StateError))
    print(f"40,008-name state with a duplicate (refused) {duplicate:8.2f} ms")
    point = TrajectoryPoint(np.zeros(len(names)), time_from_start=1.0)
    big = JointTrajectory(names, [point])
    print(f"40,007-name trajectory (refused)             "
          f"{ms(refused(lambda: controller.set_trajectory(big, 0.0), TrajectoryError)):8.2f} ms")
    t = np.linspace(0.1, 100.0, 10_000)
    path = 0.5 * np.sin(np.outer(t, np.ones(6)) * 0.3)
    points = [TrajectoryPoint(p, np.gradient(path, t, axis=0)[k], time_from_start=tk)
              for k, (p, tk) in enumerate(zip(path, t))]
    long = JointTrajectory(model.joint_names, points)
    controller.update(0.0, model.joint_names, np.zeros(6), np.zeros(6))
    print(f"10,000-point cubic trajectory (accepted)     "
          f"{ms(lambda: controller.set_trajectory(long, 0.0)):8.2f} ms")


def message_deserialisation():
    """rclpy's deserialisation of the messages the node bounds (needs a ROS environment)."""
    try:
        from rclpy.serialization import deserialize_message, serialize_message
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from trajectory_msgs.msg import JointTrajectory as TrajectoryMsg
        from trajectory_msgs.msg import JointTrajectoryPoint
    except ImportError:
        print("(no ROS environment: message deserialisation not measured)")
        return
    for n in (1000, 5000, 10_000, 40_007):
        msg = JointState(name=[f"joint_{i}" for i in range(n)], position=[0.1] * n,
                         velocity=[0.2] * n)
        data = serialize_message(msg)
        print(f"JointState {n:6d} names {len(data):9d} B  "
              f"{ms(lambda: deserialize_message(data, JointState)):8.2f} ms")
    for points in (1000, 10_000):
        msg = TrajectoryMsg(joint_names=[f"j{i}" for i in range(6)], points=[
            JointTrajectoryPoint(positions=[0.1] * 6, velocities=[0.2] * 6)] * points)
        data = serialize_message(msg)
        print(f"JointTrajectory {points:6d} points {len(data):9d} B  "
              f"{ms(lambda: deserialize_message(data, TrajectoryMsg), 3):8.2f} ms")
    data = serialize_message(String(data="x" * 30 * 2**20))
    print(f"String 30 MB {ms(lambda: deserialize_message(data, String), 3):8.2f} ms")


def build_in_subprocess(joints, old_rule):
    code = f"""
import json, sys, time, tracemalloc
import numpy as np
sys.path[:0] = {[str(ROOT), str(ROOT / 'test' / 'control')]!r}
from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.laws.loop_design import reference_poses
from rbd_control.dynamics import crba, load_urdf
from test_hostile_input import comb_urdf
model = load_urdf(comb_urdf({joints} // 30, 30))
Controller(load_urdf(comb_urdf(2, 3)))  # compile / load kernels outside the timing
tracemalloc.start()
start = time.perf_counter()
if {old_rule}:
    np.array([np.diag(crba(model, q)) for q in reference_poses(model)]).min(axis=0)
else:
    Controller(model, ControllerConfig())
print(json.dumps([time.perf_counter() - start, tracemalloc.get_traced_memory()[1] / 2**20]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def model_costs(sizes, old_limit):
    print(f"{'joints':>8} {'Controller() s':>15} {'peak MB':>12} {'old rule s':>11} {'old MB':>8}")
    for n in sizes:
        seconds, mb = build_in_subprocess(n, False)
        old = build_in_subprocess(n, True) if n <= old_limit else None
        old_text = f"{old[0]:11.2f} {old[1]:8.0f}" if old else f"{'-':>11} {'-':>8}"
        print(f"{n:8d} {seconds:15.3f} {mb:12.0f} {old_text}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--joints", type=int, nargs="+", default=[1020, 3000, 5010])
    parser.add_argument("--old-rule-up-to", type=int, default=1020,
                        help="also time the former 65-full-CRBA rule up to this many joints")
    args = parser.parse_args()
    message_costs()
    message_deserialisation()
    model_costs(args.joints, args.old_rule_up_to)


if __name__ == "__main__":
    main()
