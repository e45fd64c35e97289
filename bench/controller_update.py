"""Python cost of one Controller.update per law, on the default arm: µs per state.

    python bench/controller_update.py              # best of 7 runs of 5000 states per mode
    python bench/controller_update.py --profile    # plus cProfile of feedforward_pd
    python bench/controller_update.py --profile-contact   # cProfile with contact awareness on

The input is what rbd_controller's state path passes (ros/controller/state_path.py): the
joint names as the message's one list object, reused state after state, listed in a shuffled
order, and q, qd as float64 arrays. The controller tracks a moving trajectory in the tracking
modes, so the whole path (plan sample, law, clamp, integral) runs. Times are this thread's CPU time
(time.thread_time); the best of several runs is the figure to read on a shared machine.
The "+contact" column runs the same mode with contact awareness on (ControllerConfig.contact:
momentum observer, wrench at tool0, detection; reaction none, so the law is the same) and
"cost" is the median of the differences of paired runs (the two alternate). The random states
jump between updates, so the residual is large and the detector takes its slower, in-contact
branch on every state: an upper bound.
Not a test: nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rbd_control.control import Controller, ControllerConfig  # noqa: E402
from rbd_control.control.contact import ContactConfig  # noqa: E402
from rbd_control.control.trajectory.message import JointTrajectory, TrajectoryPoint  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import load_urdf  # noqa: E402

MODES = ("gravity_compensation", "feedforward_pd", "computed_torque")
PERIOD = 1e-3


def make_controller(model, mode: str, contact: bool = False) -> Controller:
    config = ContactConfig(reaction="none") if contact else None
    controller = Controller(model, ControllerConfig(mode=mode, max_state_age=0.005,
                                                    contact=config))
    return controller


def shuffled_state(model, seed: int = 0):
    """names (one list object, as rclpy's JointState.name: the arm's joints plus a gripper
    finger the model does not have, shuffled) and where each name's value comes from in a
    model-order vector extended by one entry for the finger."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(model.nq + 1)
    full = list(model.joint_names) + ["gripper_finger_joint"]
    return [full[i] for i in order], order


def run(controller: Controller, model, states: int, start: float) -> float:
    """Seconds of CPU per update over `states` states from time `start`."""
    names, order = shuffled_state(model)
    rng = np.random.default_rng(1)
    q = rng.uniform(-0.3, 0.3, (states, model.nq + 1))[:, order]
    qd = rng.uniform(-0.1, 0.1, (states, model.nq + 1))[:, order]
    controller.update(start, names, q[0], qd[0])
    if controller.mode != "gravity_compensation":
        n = len(controller.joint_names)
        controller.set_trajectory(JointTrajectory(controller.joint_names, [
            TrajectoryPoint(positions=np.full(n, 0.2), time_from_start=states * PERIOD * 0.6),
            TrajectoryPoint(positions=np.full(n, -0.1), time_from_start=states * PERIOD * 1.2),
        ]), start)
    update = controller.update
    t0 = time.thread_time()
    for k in range(states):
        update(start + (k + 1) * PERIOD, names, q[k], qd[k], age=2e-4)
    return (time.thread_time() - t0) / states


def bench(repeats: int, states: int):
    model = load_urdf(default_arm_urdf())
    print(f"default arm, {model.nq} joints; µs per Controller.update, best of {repeats} "
          f"x {states} states (median in parentheses); cost: median of the {repeats} paired "
          "differences")
    print(f"  {'mode':22s} {'update':>15s} {'+contact':>15s} {'cost':>6s}")
    for mode in MODES:
        controllers = {contact: make_controller(model, mode, contact) for contact in (False, True)}
        for controller in controllers.values():
            controller.update(0.0, *_first_state(model))   # warm up (compile, caches)
        times = {False: [], True: []}
        for r in range(repeats):
            # the two alternate, so a slow spell of a shared machine hits both of a pair
            start = 1.0 + r * (states + 10) * PERIOD
            for contact, controller in controllers.items():
                times[contact].append(run(controller, model, states, start))
        plain, with_contact = (np.array(times[c]) * 1e6 for c in (False, True))
        cost = np.median(with_contact - plain)
        print(f"  {mode:22s} {plain.min():7.1f} ({np.median(plain):5.1f}) "
              f"{with_contact.min():7.1f} ({np.median(with_contact):5.1f}) {cost:6.1f}")


def _first_state(model):
    names, _ = shuffled_state(model)
    return names, np.zeros(len(names)), np.zeros(len(names))


def profile(mode: str, states: int, contact: bool = False):
    model = load_urdf(default_arm_urdf())
    controller = make_controller(model, mode, contact)
    controller.update(0.0, *_first_state(model))
    profiler = cProfile.Profile()
    profiler.enable()
    run(controller, model, states, 1.0)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--states", type=int, default=5000)
    parser.add_argument("--profile", action="store_true", help="cProfile feedforward_pd too")
    parser.add_argument("--profile-contact", action="store_true",
                        help="cProfile feedforward_pd with contact awareness on")
    args = parser.parse_args()
    bench(args.repeats, args.states)
    if args.profile or args.profile_contact:
        profile("feedforward_pd", args.states, contact=args.profile_contact)


if __name__ == "__main__":
    main()
