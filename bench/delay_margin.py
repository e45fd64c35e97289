"""How much loop delay the controller tolerates (a benchmark, not a test; no ROS).

    python bench/delay_margin.py [--seconds 3] [--mode feedforward_pd]

The default arm in MuJoCo (rbd_control.sim.Simulator, no joint damping) at its home pose,
driven by the Controller with the default gains at 1 kHz, knocked at t = 0.2 s (+0.2 rad/s
on every joint). Two ways a busy machine stretches the loop:

  delay   every command reaches the plant `d` steps after the state it answers
          (a controller that answers late);
  hold    the controller sees only every `n`-th state, and its command is held for n
          steps (a simulator or driver that falls behind and then steps n times at once).

For each, the largest excursion from home and the excursion left at the end are printed;
a loop that has lost stability shows a growing (or diverged: inf) excursion. With
--guard, the controller is told each state's age (`d` or `n` steps) and its
max_state_age guard (rbd_control.control.safety.age_guard) softens the feedback.
"""
import argparse
import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME  # noqa: E402
from rbd_control.control import Controller, ControllerConfig, StateError  # noqa: E402
from rbd_control.description import default_arm_urdf  # noqa: E402
from rbd_control.dynamics import load_urdf  # noqa: E402
from rbd_control.sim.simulator import Simulator  # noqa: E402

KNOCK_AT_STEP = 200
KNOCK_VELOCITY = 0.2    # rad/s added to every joint
DIVERGED = 100.0        # rad: call it gone


def run(args, delay=0, hold=1, guard=False):
    """(largest, final) excursion from home in rad after the knock; inf when diverged."""
    urdf, joints = default_arm_urdf(), list(DEFAULT_ARM_HOME)
    home = np.array([DEFAULT_ARM_HOME[j] for j in joints])
    sim = Simulator(urdf, commanded_joints=joints, initial_positions=DEFAULT_ARM_HOME,
                    joint_damping=False)
    max_state_age = args.max_state_age if guard else 0.0
    controller = Controller(load_urdf(urdf), ControllerConfig(
        mode=args.mode, joints=joints, max_state_age=max_state_age))
    in_flight = collections.deque()     # (step at which it reaches the plant, effort)
    age = max(delay, hold - 1) * sim.timestep
    largest = 0.0
    for step in range(int(args.seconds / sim.timestep)):
        if step % hold == 0:
            s = sim.state()
            try:
                command = controller.update(s.time, s.names, s.position, s.velocity, age=age)
            except StateError:
                return np.inf, np.inf
            in_flight.append((step + delay, command.tau))
        while in_flight and in_flight[0][0] <= step:
            sim.set_command(in_flight.popleft()[1])
        if step == KNOCK_AT_STEP:
            sim.data.qvel[:] += KNOCK_VELOCITY
        sim.step()
        excursion = np.abs(sim.state().position - home).max()
        largest = max(largest, excursion)
        if sim.blow_ups or largest > DIVERGED:
            return np.inf, np.inf
    return largest, excursion


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=3.0)
    parser.add_argument('--mode', default='feedforward_pd')
    parser.add_argument('--max-state-age', type=float, default=0.005,
                        help='guard threshold for the --guard columns (s)')
    args = parser.parse_args()
    print(f'default arm, {args.mode}, default gains, knock {KNOCK_VELOCITY} rad/s; '
          f'excursion from home in rad: largest / at {args.seconds:g} s')
    print(f'{"":>12} {"no guard":>22} {"guard " + format(args.max_state_age, "g") + " s":>22}')
    for kind, values in (('delay', (0, 2, 4, 6, 8, 10, 15, 20, 50)), ('hold', (2, 5, 10, 20, 50))):
        for value in values:
            cells = []
            for guard in (False, True):
                largest, final = run(args, **{kind: value}, guard=guard)
                cells.append(f'{largest:10.3g} / {final:<10.3g}')
            print(f'{kind:>5} {value:3d} ms ' + ' '.join(cells))


if __name__ == '__main__':
    main()
