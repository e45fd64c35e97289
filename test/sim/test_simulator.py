"""The ROS-free Simulator: command semantics, time, state, and physics that agree with
Pinocchio."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rbd_control.sim.simulator import Simulator

PANDA = "panda_description/urdf/panda.urdf"
HOME = {"panda_joint2": -0.6, "panda_joint4": -2.2, "panda_joint6": 1.6, "panda_joint7": 0.8}


@pytest.fixture
def panda(robot_urdf):
    return robot_urdf(PANDA)


def _arm_joints(names):
    return [n for n in names if "finger" not in n]


def test_initial_pose_time_and_reported_names(panda):
    sim = Simulator(panda, initial_positions=HOME)
    state = sim.state()
    assert state.time == 0.0
    assert set(state.names) == {f"panda_joint{i}" for i in range(1, 8)} | {
        "panda_finger_joint1",
        "panda_finger_joint2",
    }
    assert state.position[state.names.index("panda_joint4")] == -2.2
    assert np.all(state.velocity == 0) and np.all(state.effort == 0)
    sim.step(250)
    assert sim.time == pytest.approx(0.25) and sim.steps == 250


def test_gravity_torque_from_pinocchio_holds_the_arm(panda):
    # The plant's gravity equals the URDF model's, so τ = G(q) from an independent
    # library must hold the arm still (damping off: nothing else could hide an error).
    model = pin.buildModelFromXML(panda)
    names = [model.names[i] for i in range(1, model.njoints)]
    sim = Simulator(panda, commanded_joints=names, joint_damping=False, initial_positions=HOME)
    q0 = np.array([HOME.get(n, 0.0) for n in names])
    q0[names.index("panda_finger_joint1")] = q0[names.index("panda_finger_joint2")] = 0.02
    sim.reset(dict(zip(names, q0)))
    assert sim.set_command(pin.computeGeneralizedGravity(model, model.createData(), q0))
    sim.step(2000)
    state = sim.state()
    position = np.array([state.position[state.names.index(n)] for n in names])
    assert np.abs(position - q0).max() < 1e-6


def test_without_torque_the_arm_falls(panda):
    sim = Simulator(panda, initial_positions=HOME)
    before = sim.state().position
    sim.step(500)
    assert np.abs(sim.state().position - before).max() > 0.05


def test_commands_follow_the_commanded_order_and_are_reported_as_effort(panda):
    order = list(reversed(_arm_joints(Simulator(panda).joint_names)))
    sim = Simulator(panda, commanded_joints=order)
    command = np.arange(1.0, 8.0)
    assert sim.set_command(command)
    state = sim.state()
    for name, value in zip(order, command):
        assert state.effort[state.names.index(name)] == value
    assert state.effort[state.names.index("panda_finger_joint1")] == 0.0


def test_commands_saturate_at_the_urdf_effort_limit(panda):
    sim = Simulator(panda, commanded_joints=["panda_joint1", "panda_joint7"])
    sim.set_command([1000.0, -1000.0])
    np.testing.assert_array_equal(sim.command, [87.0, -12.0])
    unclamped = Simulator(panda, commanded_joints=["panda_joint1"], clamp_effort=False)
    unclamped.set_command([1000.0])
    assert unclamped.command[0] == 1000.0


@pytest.mark.parametrize("bad", [[np.nan, 0.0], [np.inf, 0.0], [1.0], [1.0, 2.0, 3.0]])
def test_bad_commands_are_refused_and_the_last_good_one_stays(panda, bad):
    sim = Simulator(panda, commanded_joints=["panda_joint1", "panda_joint2"])
    assert sim.set_command([1.0, 2.0])
    assert not sim.set_command(bad)
    np.testing.assert_array_equal(sim.command, [1.0, 2.0])
    assert sim.rejected_commands == 1
    sim.step(10)
    assert np.all(np.isfinite(sim.state().position))


def test_last_command_is_held_across_steps_like_joint_group_effort_controller(panda):
    sim = Simulator(panda, commanded_joints=["panda_joint1"], joint_damping=False)
    sim.set_command([5.0])
    sim.step(100)
    v1 = sim.state().velocity[0]
    sim.step(100)
    v2 = sim.state().velocity[0]
    assert v2 > v1 > 0  # a constant torque keeps accelerating the base joint


def test_reset_returns_to_rest_at_time_zero(panda):
    sim = Simulator(panda, initial_positions=HOME)
    sim.set_command([1.0] * 9)
    sim.step(100)
    sim.reset({"panda_joint1": 0.5})
    state = sim.state()
    assert sim.time == 0.0 and np.all(state.velocity == 0) and np.all(sim.command == 0)
    assert state.position[state.names.index("panda_joint1")] == 0.5
    with pytest.raises(KeyError, match="nope"):
        sim.reset({"nope": 1.0})


def test_unknown_commanded_joint_is_refused(panda):
    with pytest.raises(KeyError, match="nope"):
        Simulator(panda, commanded_joints=["nope"])


def test_same_commands_give_the_same_trajectory(panda):
    # Lockstep determinism rests on this: identical inputs, identical bits.
    runs = []
    for _ in range(2):
        sim = Simulator(panda, initial_positions=HOME)
        for k in range(300):
            sim.set_command(np.full(9, np.sin(k * 0.01)))
            sim.step()
        runs.append(sim.state().position)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_diverging_simulation_is_counted_not_hidden(panda):
    import mujoco

    warnings = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(warnings.append)  # not into MUJOCO_LOG.TXT in the cwd
    try:
        sim = Simulator(panda, commanded_joints=["panda_joint1"], clamp_effort=False)
        assert sim.blow_ups == 0
        sim.step(100)
        sim.set_command([1e30])  # absurd torque: MuJoCo detects the bad acceleration, resets
        sim.step(5)
        assert sim.time == pytest.approx(0.105), "time must keep running through a reset"
    finally:
        mujoco.set_mju_user_warning(previous)
    assert sim.blow_ups >= 1
    assert any("unstable" in w for w in warnings)


def test_a_joint_disturbance_adds_to_the_command_and_is_not_reported_as_effort(panda):
    # the same gravity-holding command with and without an external torque on joint 4
    model = pin.buildModelFromXML(panda)
    names = [model.names[i] for i in range(1, model.njoints)]
    q0 = np.array([HOME.get(n, 0.0) for n in names])
    tau = pin.computeGeneralizedGravity(model, model.createData(), q0)
    runs = []
    for disturbance in ({}, {"panda_joint4": 5.0}):
        sim = Simulator(panda, commanded_joints=names, joint_damping=False,
                        initial_positions=dict(zip(names, q0)))
        sim.set_command(tau)
        sim.set_disturbance(disturbance)
        sim.step(200)
        runs.append(sim.state())
    moved = runs[1].position - runs[0].position
    assert moved[runs[1].names.index("panda_joint4")] > 0.05
    np.testing.assert_array_equal(runs[0].effort, runs[1].effort)
    sim.set_disturbance({})
    with pytest.raises(KeyError, match="elbow"):
        sim.set_disturbance({"elbow": 1.0})
    with pytest.raises(ValueError, match="not finite"):
        sim.set_disturbance({"panda_joint4": float("nan")})


def test_a_hand_holds_a_link_at_its_target_and_refuses_bad_input(panda):
    """sim/hand.py: a hand on panda_link8 moved 5 cm pulls it there (the arm floats: the plant
    adds its gravity; a spring-damper every physics step); an unknown link, a non-unit
    quaternion and a negative gain are refused naming them; gains None lets go."""
    from rbd_control.sim.hand import HandGains
    sim = Simulator(panda, initial_positions=HOME, compensates_gravity=True)
    body = sim.model.body("panda_link8").id
    start = sim.data.xpos[body].copy()
    quat = sim.data.xquat[body]        # w, x, y, z
    target = start + [0.05, 0.0, 0.0]
    sim.set_hand("panda_link8", target, [*quat[1:], quat[0]], HandGains())
    sim.step(3000)
    assert np.linalg.norm(sim.data.xpos[body] - target) < 0.01
    with pytest.raises(KeyError, match="no link 'nowhere'"):
        sim.set_hand("nowhere", target, [0, 0, 0, 1], HandGains())
    with pytest.raises(ValueError, match="unit quaternion"):
        sim.set_hand("panda_link8", target, [0, 0, 0, 2], HandGains())
    with pytest.raises(ValueError, match="hand damping"):
        HandGains(damping=-1.0)
    sim.set_hand("panda_link8", target, [0, 0, 0, 1], None)
    assert sim._hand is None
