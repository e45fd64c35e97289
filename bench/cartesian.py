"""Cost of one Controller.update in mode cartesian_impedance, and of the law's parts.

    python bench/cartesian.py              # µs per update on the default arm and the Panda
    python bench/cartesian.py --profile    # cProfile of 2000 updates on the Panda

Each update gets a new state near a fixed pose (so nothing is cached between updates) while
the law holds its target. CPU time of this thread (time.thread_time), median of 5 runs.
Not a test: these machines are noisy, so nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dynamics import panda_urdf  # noqa: E402  (bench/dynamics.py)
from rbd_control.control import Controller, ControllerConfig  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import load_urdf  # noqa: E402

UPDATES = 2000


def updates(model, ee_link):
    """A controller holding its first pose and a function running UPDATES updates."""
    controller = Controller(model, ControllerConfig(mode="cartesian_impedance", ee_link=ee_link))
    lower, upper = model.position_limits.T
    q0 = np.clip(np.full(model.nq, 0.3), lower + 0.01, upper - 0.01)
    names = model.joint_names
    controller.update(0.0, names, q0, np.zeros(model.nq))
    rng = np.random.default_rng(0)
    Q = q0 + 0.05 * rng.standard_normal((UPDATES, model.nq))
    QD = 0.1 * rng.standard_normal((UPDATES, model.nq))

    def run():
        for k in range(UPDATES):
            controller.update(0.001 * (k + 1), names, Q[k], QD[k])
    return controller, run


def per_update_us(model, ee_link) -> tuple[float, float]:
    """(µs per Controller.update, µs per law.torques) at the same states."""
    totals, laws = [], []
    for _ in range(5):
        controller, run = updates(model, ee_link)
        start = time.thread_time()
        run()
        totals.append((time.thread_time() - start) / UPDATES * 1e6)
        law, q, qd = controller._cartesian, controller._q, np.full(model.nq, 0.1)
        start = time.thread_time()
        for k in range(UPDATES):
            law.torques(controller.model, q, qd, 1.0 + 0.001 * k)
        laws.append((time.thread_time() - start) / UPDATES * 1e6)
    return statistics.median(totals), statistics.median(laws)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="cProfile the Panda's updates")
    args = parser.parse_args()
    robots = (("default arm", load_urdf(default_arm_urdf()), "tool0"),
              ("Panda", load_urdf(panda_urdf()), "panda_hand"))
    if args.profile:
        _, run = updates(*robots[1][1:])
        profile = cProfile.Profile()
        profile.runcall(run)
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        return
    print(f"{'robot':12}  {'update µs':>9}  {'law µs':>7}")
    for name, model, ee_link in robots:
        total, law = per_update_us(model, ee_link)
        print(f"{name:12}  {total:9.1f}  {law:7.1f}")


if __name__ == "__main__":
    main()
