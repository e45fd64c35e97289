"""URDF <dynamics damping friction> in the model-based feedforward (use_urdf_friction): the
xArm7 of example-robot-data declares 1 N m of Coulomb friction and 2-10 N m s/rad of damping on
every joint; MuJoCo applies them (sim/mujoco_model.py: damping, frictionloss; stiff_friction
makes frictionloss the Coulomb friction the URDF means). Untuned, with the default gains, the
arm reaches its goal; without the URDF's friction it stops far short. ROS-free."""
from __future__ import annotations

import collections
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryPoint
from rbd_control.control.model.plan import urdf_friction
from rbd_control.dynamics import gravity, load_urdf
from rbd_control.sim.simulator import Simulator

_spec = importlib.util.spec_from_file_location(
    "delay_margin", pathlib.Path(__file__).resolve().parents[2] / "bench" / "delay_margin.py")
sweep = sys.modules.setdefault("delay_margin", importlib.util.module_from_spec(_spec))
if not hasattr(sweep, "load_arm"):
    _spec.loader.exec_module(sweep)

GOAL_TOLERANCE = 0.017    # rad: the goal tolerance the FollowJointTrajectory run missed
MOVE = np.array([0.5, 0.3, -0.4, 0.4, 0.5, -0.4, 0.6])


@pytest.fixture(scope="module")
def xarm7():
    arm = sweep.load_arm("xarm7")
    return arm, load_urdf(arm.urdf)


def reach(arm, model, *, period=1, delay=0, **config):
    """Move every joint (MOVE, rad) in 2 s, rest-to-rest, then 2 s still; q - goal at the end."""
    joints = model.joint_names
    home = np.array([arm.home[j] for j in joints])
    goal = home + MOVE
    sim = Simulator(arm.urdf, commanded_joints=joints, stiff_friction=True,
                    initial_positions=dict(zip(joints, map(float, home))))
    controller = Controller(model, ControllerConfig(mode="feedforward_pd", **config))
    sim.set_command(gravity(model, home))
    s = sim.state()
    controller.update(s.time, s.names, s.position, s.velocity)
    controller.set_trajectory(JointTrajectory(list(joints), [
        TrajectoryPoint(list(goal), [0.0] * len(joints), time_from_start=2.0)]), s.time)
    in_flight = collections.deque()
    for step in range(4000):
        s = sim.state()
        if step % period == 0:
            command = controller.update(s.time, s.names, s.position, s.velocity)
            in_flight.append((step + delay, command.tau))
        while in_flight and in_flight[0][0] <= step:
            sim.set_command(in_flight.popleft()[1])
        sim.step()
    return sim.state().position - goal


def test_the_urdf_friction_is_read(xarm7):
    _, model = xarm7
    friction = urdf_friction(model)
    assert friction["joint1"] == {"viscous": 10.0, "coulomb": 1.0}
    assert friction["joint7"] == {"viscous": 2.0, "coulomb": 1.0}
    controller = Controller(model, ControllerConfig(friction={"joint1": {"coulomb": 0.5}}))
    compensation = controller._plan_model.friction   # identified values replace the URDF's
    assert compensation.coulomb[0] == 0.5 and compensation.viscous[0] == 0.0
    assert compensation.coulomb[6] == 1.0 and compensation.viscous[6] == 2.0
    off = Controller(model, ControllerConfig(use_urdf_friction=False))._plan_model.friction
    assert not off.active


@pytest.mark.parametrize("period, delay", [(1, 0), (4, 10)])
def test_an_arm_with_urdf_friction_reaches_its_goal_untuned(xarm7, period, delay):
    arm, model = xarm7
    error = reach(arm, model, period=period, delay=delay)
    print(f"xarm7 {1000 // period} Hz {delay} ms: goal error {np.round(error, 4)} rad")
    assert np.abs(error).max() < GOAL_TOLERANCE


def test_without_the_urdf_friction_it_stops_short(xarm7):
    arm, model = xarm7
    error = reach(arm, model, use_urdf_friction=False)
    print(f"xarm7 without its URDF friction: goal error {np.round(error, 3)} rad")
    assert np.abs(error).max() > 0.2
