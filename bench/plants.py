"""Real-time factor of the two plants on the default arm: DART (sim/dart_plant.py) beside MuJoCo
(sim/simulator.py), in one run.

    python bench/plants.py                  # best of 5 runs of 5000 steps of 1 ms per plant
    python bench/plants.py --steps 20000 --runs 3

Each run holds the arm at home under a constant gravity-compensation torque (the core's g(q),
set once) and times plant.step() alone, one call per 1 ms step as the simulator node makes
them, plus plant.state() per step (the node publishes one per step in lockstep). The real-time
factor is simulated seconds per CPU second of this thread (time.thread_time), the best run
being the figure to read on a shared machine: the other runs lost time to other processes.
Both plants run with their default joint losses and limits (the default arm has no damping
or friction). Not a test: nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import gravity, load_urdf  # noqa: E402
from rbd_control.sim.simulator import Simulator  # noqa: E402

TIMESTEP = 1e-3


def plants():
    """(label, class) of each plant this machine can run."""
    found = [("MuJoCo", Simulator)]
    try:
        from rbd_control.sim.dart_plant import DART_VERSION, DartSimulator
    except ImportError:
        print("DART: dartpy is not installed (pip install rbd_control[dart]); MuJoCo only")
    else:
        found.append((f"DART {DART_VERSION}", DartSimulator))
    return found


def one_run(plant, torque, steps: int, with_state: bool) -> float:
    """Simulated seconds per CPU second for `steps` steps from home at rest."""
    plant.reset(DEFAULT_ARM_HOME)
    plant.set_command(torque)
    start = time.thread_time()
    for _ in range(steps):
        plant.step()
        if with_state:
            plant.state()
    return steps * TIMESTEP / (time.thread_time() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    import mujoco

    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    home = np.array([DEFAULT_ARM_HOME[name] for name in model.joint_names])
    print(f"default arm, {model.nq} joints, {TIMESTEP * 1e3:g} ms steps, {args.steps} steps "
          f"per run, best of {args.runs}; MuJoCo {mujoco.__version__}")
    print(f"{'plant':>14}  {'step only':>12}  {'step + state':>13}  {'drift [rad]':>12}")
    for label, plant_class in plants():
        plant = plant_class(urdf, commanded_joints=model.joint_names, timestep=TIMESTEP)
        torque = gravity(model, home)   # commanded in the model's joint order
        factors = {with_state: max(one_run(plant, torque, args.steps, with_state)
                                   for _ in range(args.runs))
                   for with_state in (False, True)}
        drift = np.abs(plant.state().position - [DEFAULT_ARM_HOME[n] for n in plant.joint_names])
        print(f"{label:>14}  {factors[False]:>10.0f} x  {factors[True]:>11.0f} x  "
              f"{drift.max():>12.1e}")
    print("real-time factor = simulated s / CPU s of this thread (2 shared cores: noisy); drift:\n"
          "largest joint offset from home after the last run, open loop (the constant torque\n"
          "holds an unstable equilibrium, so rounding grows; falling, the arm moves ~3 rad)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
