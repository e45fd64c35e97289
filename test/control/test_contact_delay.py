"""contact.command_delay (control/contact/applied.py): a plant that applies each command late.

In real time a plant applies the command for a state one or more steps after that state (the
command's transport and computation; rbd_mujoco_sim steps on the wall clock with the last
command it received). The observer then took the command it had just computed as the torque in
force, and the residual showed the delayed change of the command as an external torque: about
delay x dtau/dt: 1.7 N m on shoulder_lift with 2 ms of delay on the fast goals of
test_contact.py, 7x the 0.23 N m of a plant applying on time, and growing with the delay (the
nodes in real time: up to 42.5 N m with a command 6 states late, bench/contact_realtime.py).
Declared (contact.command_delay), the delay leaves the residual of a plant applying on time.
Run with -s to see the figures.
"""
from __future__ import annotations

import numpy as np
import pytest

from closed_loop_support import DT, Plant
from rbd_control.control import Controller, ControllerConfig, JointTrajectory
from rbd_control.control.contact import ContactConfig
from rbd_control.control.contact.applied import AppliedTorque
from rbd_control.sim import mujoco_model
from test_contact import fast_points, home

DELAY_STEPS = 2


def peak_residual(arm_urdf, arm_model, plant_delay_steps, command_delay):
    """The largest |r| over the fast goals, the plant applying every command
    plant_delay_steps steps after the state it answers."""
    names = arm_model.joint_names
    plant = Plant(mujoco_model.build_mujoco_model(arm_urdf, joint_damping=False, timestep=DT),
                  names)
    q0 = home(arm_model)
    plant.reset(q0)
    controller = Controller(arm_model, ControllerConfig(
        mode="computed_torque",
        contact=ContactConfig(reaction="none", command_delay=command_delay)))
    # the plant holds the first command from the start (rbd_mujoco_sim waits for one)
    tau = controller.update(0.0, names, *plant.state()).tau.copy()
    points = fast_points(names, q0)
    controller.set_trajectory(JointTrajectory(names, points), 0.0)
    pending, step = [], 0
    peak = np.zeros(len(names))
    while plant.time < points[-1].time_from_start + 0.5:
        command = controller.update(plant.time, names, *plant.state())
        pending.append((step + plant_delay_steps, command.tau.copy()))
        while pending and pending[0][0] <= step:
            tau = pending.pop(0)[1]
        plant.step(tau)
        step += 1
        peak = np.maximum(peak, np.abs(controller.contact.tau_ext))
    assert not controller.contact.detector.collided or command_delay == 0.0
    return peak


def test_a_declared_delay_removes_the_late_command_from_the_residual(arm_urdf, arm_model):
    late = peak_residual(arm_urdf, arm_model, DELAY_STEPS, 0.0)
    declared = peak_residual(arm_urdf, arm_model, DELAY_STEPS, DELAY_STEPS * DT)
    on_time = peak_residual(arm_urdf, arm_model, 0, 0.0)
    print(f"\nfast goals, the plant {DELAY_STEPS} ms late: peak |r| {late.max():.2f} N m "
          f"assuming it on time, {declared.max():.2f} N m with contact.command_delay "
          f"{DELAY_STEPS * DT:g} s; a plant on time: {on_time.max():.2f} N m")
    assert late.max() > 5.0 * on_time.max()
    assert declared.max() < 1.5 * on_time.max() + 0.05


@pytest.mark.parametrize("a, b, expected", [
    # commands sent at 1, 2, 3 ms, each in force 1.5 ms later: from 2.5, 3.5, 4.5 ms
    (0.003, 0.004, [0.5, 0.5, 0.0]),
    (0.004, 0.005, [0.0, 0.5, 0.5]),
    (0.010, 0.011, [0.0, 0.0, 1.0]),   # the newest holds
    (0.000, 0.001, [1.0, 0.0, 0.0]),   # none in force yet: the oldest known (the plant's)
    (0.002, 0.003, [1.0, 0.0, 0.0]),
])
def test_the_torque_in_force_is_the_time_weighted_commands(a, b, expected):
    applied = AppliedTorque(2, delay=0.0015)
    commands = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    for t, tau in zip((0.001, 0.002, 0.003), commands):
        applied.sent(t, tau)
    np.testing.assert_allclose(applied.over(a, b), np.dot(expected, commands))


def test_without_a_delay_the_command_sent_for_the_step_start_acts():
    applied = AppliedTorque(1)
    for t in (0.001, 0.002, 0.003):
        applied.sent(t, [t])
    assert applied.over(0.003, 0.004)[0] == 0.003
    assert applied.over(0.002, 0.003)[0] == 0.002
