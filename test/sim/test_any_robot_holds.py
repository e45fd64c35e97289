"""Robots that used to be refused (broken inertias, point-mass feet) are controlled: gravity
compensation holds a subset of their joints in MuJoCo at 1 kHz, ROS-free.

The Controller under test commands only the subset (`joints`), with every model joint's
measured q entering its dynamics; the other joints are held by a second Controller (hold at the
first measured pose: gravity feedforward plus default PD), as a robot's other controllers would.
The plant is rbd_control.sim.Simulator, whose MuJoCo model has the inertias MuJoCo refuses
balanced (reported in model_adjustments); masses and centres of mass are as written, so gravity
compensation from the URDF is exact on it.
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.safety.command_limits import LimitsConfig
from rbd_control.dynamics import ModelError, gravity, load_urdf
from rbd_control.sim import Simulator

DURATION = 5.0
DRIFT_LIMIT = 1e-3    # rad (m for prismatic joints)

# (URDF, commanded joints or None for all, pose overrides). PR2's shoulders need more than
# their 30 N m <limit effort> to hold the arm level (the real robot has a counterbalance spring
# the URDF does not model), so its arms hang lower.
CASES = {
    "pr2 right arm": ("pr2_description/urdf/pr2.urdf",
                      ("r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
                       "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint",
                       "r_wrist_roll_joint"),
                      {"r_shoulder_lift_joint": 1.1, "l_shoulder_lift_joint": 1.1}),
    "allegro hand": ("allegro_hand_description/urdf/allegro_right_hand.urdf", None, {}),
    "hyq left front leg": ("hyq_description/robots/hyq_no_sensors.urdf",
                           ("lf_haa_joint", "lf_hfe_joint", "lf_kfe_joint"), {}),
}


def hold_pose(model, overrides):
    """Mid-range where limited, 0.3 rad where not, then the overrides."""
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    limited = np.isfinite(lower) & np.isfinite(upper)
    q = np.full(model.nq, 0.3)
    q[limited] = 0.5 * (lower[limited] + upper[limited])
    for name, value in overrides.items():
        q[model.joint_names.index(name)] = value
    return q


def run_hold(urdf, joints, overrides):
    model = load_urdf(urdf)
    joints = model.joint_names if joints is None else joints
    others = tuple(name for name in model.joint_names if name not in joints)
    sim = Simulator(urdf, commanded_joints=tuple(joints) + others, timestep=1e-3)
    q0 = dict(zip(model.joint_names, hold_pose(model, overrides)))
    needed = np.abs(gravity(model, list(q0.values())))
    assert np.all(needed < 0.8 * model.effort_limit), "the pose must be holdable within limits"
    sim.reset(q0)
    # the hold, not the start: the plant starts unheld, and the torque rate's ramp from zero
    # lets the PR2's heavy torso and arms sink first (test_command_limits.py tests the rate)
    no_rate = LimitsConfig(torque_rate=0.0)
    arm = Controller(model, ControllerConfig(mode="gravity_compensation", joints=joints,
                                             limits=no_rate))
    rest = (Controller(model, ControllerConfig(mode="feedforward_pd", joints=others,
                                               limits=no_rate))
            if others else None)
    start = np.array([q0[name] for name in joints])
    drift = 0.0
    for _ in range(int(round(DURATION / sim.timestep))):
        state = sim.state()
        tau = arm.update(state.time, state.names, state.position, state.velocity).tau
        if rest is not None:
            held = rest.update(state.time, state.names, state.position, state.velocity).tau
            tau = np.concatenate([tau, held])
        assert np.all(np.isfinite(tau))
        assert sim.set_command(tau)
        sim.step()
        position = dict(zip(state.names, state.position))
        drift = max(drift, float(np.max(np.abs([position[n] - s for n, s in zip(joints, start)]))))
    assert sim.blow_ups == 0
    return model, sim, drift


@pytest.mark.parametrize("case", sorted(CASES))
def test_gravity_compensation_holds_a_subset_of_a_robot_with_dubious_inertias(robot_urdf, case):
    relative, joints, overrides = CASES[case]
    model, sim, drift = run_hold(robot_urdf(relative), joints, overrides)
    print(f"{case}: drift {drift:.2e} rad over {DURATION} s; "
          f"{len(model.warnings)} load warnings, {len(sim.model_adjustments)} MuJoCo adjustments")
    assert model.warnings, "the robot was chosen for its dubious inertias"
    assert drift < DRIFT_LIMIT, f"{case} drifted {drift:.2e} rad"


def test_the_simulator_refuses_nan_damping_by_joint():
    urdf = ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='1'/>"
            "<inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/></inertial>"
            "</link><joint name='elbow' type='revolute'><parent link='a'/><child link='b'/>"
            "<dynamics damping='nan'/><axis xyz='0 1 0'/>"
            "<limit lower='-1' upper='1' effort='10' velocity='1'/></joint></robot>")
    with pytest.raises(ModelError, match="'elbow' <damping>"):
        Simulator(urdf)
