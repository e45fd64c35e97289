"""Contact awareness (control/contact/) against MuJoCo's ground truth, no ROS.

- a known wrench on a link: the residual r settles within 5 % of J^T f after 5/K_O s
  (the default arm and UR5 of example-robot-data), with the commanded or the measured effort;
- an obstacle in the arm's path: the collision is detected within 10 ms of the true external
  torque (MuJoCo's qfrc_constraint) passing the collision level, and the arm stops (every joint
  below 0.01 rad/s) within 200 ms; the peak contact force is printed;
- the demo trajectory with the exact model raises no contact flag at the default thresholds;
- bad gains and thresholds are refused with a named error; a reset in contact is refused.
Run with -s to see the figures.
"""
from __future__ import annotations

import pathlib
import sys
import numpy as np
import pytest

from closed_loop_support import DT, Plant, residual_over_the_demo
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryPoint
from rbd_control.control.contact import ContactConfig, ContactConfigError, ContactResetError
from rbd_control.control.errors import ConfigError, TrajectoryError
from rbd_control.dynamics import frame_jacobian, frame_pose, load_urdf
from rbd_control.sim import mujoco_model
from rbd_control.sim.simulator import Simulator

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

read_robot = load("dynamics/dynamics_oracles.py", "rbd_test_dynamics_oracles").read_robot

K_O = 50.0
UR5 = "ur_description/urdf/ur5_robot.urdf"


def controller_for(model, mode="computed_torque", **contact):
    contact.setdefault("observer_gain", K_O)
    return Controller(model, ControllerConfig(mode=mode, contact=ContactConfig(**contact)))


def home(model):
    return np.array([DEFAULT_ARM_HOME.get(name, 0.3) for name in model.joint_names])


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, named", [
    ("observer_gain", float("nan"), "contact.observer_gain"),
    ("observer_gain", -1.0, "contact.observer_gain"),
    ("observer_gain", 0.0, "contact.observer_gain"),
    ("torque_thresholds", [10.0, float("nan"), 5.0, 10.0], "contact.torque_thresholds"),
    ("torque_thresholds", [10.0, -20.0, 5.0, 10.0], "contact.torque_thresholds"),
    ("torque_thresholds", [30.0, 20.0, 5.0, 10.0], "contact.torque_thresholds"),
    ("torque_thresholds", [10.0, 20.0, 5.0], "contact.torque_thresholds"),
    ("force_thresholds", [-1.0, 2.0, 1.0, 2.0], "contact.force_thresholds"),
    ("moment_thresholds", [1.0, 2.0, float("inf"), 2.0], "contact.moment_thresholds"),
    ("reaction", "explode", "contact.reaction"),
    ("reflex_gain", -0.5, "contact.reflex_gain"),
    ("wrench_damping", float("nan"), "contact.wrench_damping"),
])
def test_bad_gains_and_thresholds_are_refused_by_name(arm_model, field, value, named):
    with pytest.raises(ContactConfigError, match=named.replace(".", r"\.")):
        controller_for(arm_model, **{field: value})


def test_per_joint_thresholds_of_the_wrong_length_are_refused(arm_model):
    with pytest.raises(ContactConfigError, match="torque_thresholds"):
        controller_for(arm_model, torque_thresholds=[[1.0, 2.0], 20.0, 5.0, 10.0])


def test_unknown_wrench_link_is_refused(arm_model):
    with pytest.raises(ConfigError, match="wrench_link"):
        controller_for(arm_model, wrench_link="no_such_link")


# --- a known wrench -------------------------------------------------------------------------

def model_q(controller, state):
    return controller._mapper.map(state.names, state.position, state.velocity)[0]


@pytest.mark.parametrize("robot, link", [("default", "tool0"), (UR5, "wrist_3_link")])
@pytest.mark.parametrize("measured", [False, True], ids=["commanded", "measured_effort"])
def test_known_wrench_gives_residual_within_5_percent_of_JT_f(arm_urdf, robot, link, measured):
    urdf = arm_urdf if robot == "default" else read_robot(robot)
    model = load_urdf(urdf)
    q0 = home(model)
    sim = Simulator(urdf, joint_damping=False, initial_positions=dict(zip(model.joint_names, q0)))
    controller = controller_for(model, reaction="none", use_measured_effort=measured,
                                wrench_link=link)
    force = np.array([8.0, -5.0, 12.0])
    push_at = 0.2
    settle = push_at + 5.0 / K_O
    worst, pushed = 0.0, False
    while sim.time < settle + 0.05:
        state = sim.state()
        if state.time >= push_at and not pushed:
            sim.set_external_wrench(link, force)
            pushed = True
        command = controller.update(state.time, state.names, state.position, state.velocity,
                                    effort=state.effort)
        sim.set_command(command.tau)
        sim.step()
        if state.time >= settle:
            # the force acts at the link origin: tau_ext = J_v^T f (J rows [omega; v])
            expected = frame_jacobian(model, model_q(controller, state), link)[3:].T @ force
            expected = expected[controller._map.index]
            error = (np.max(np.abs(controller.contact.tau_ext - expected))
                     / np.max(np.abs(expected)))
            worst = max(worst, error)
    print(f"\n{robot} {link} ({'measured' if measured else 'commanded'} effort): "
          f"max |r - J^T f| / max |J^T f| = {worst:.4f} over the 50 ms after 5/K_O s; "
          f"F estimate {np.round(controller.contact.wrench[:3], 2)} N for {force} N")
    assert worst < 0.05


# --- an obstacle ----------------------------------------------------------------------------

@pytest.mark.parametrize("reaction", ["hold", "reflex", "float"])
def test_obstacle_collision_is_detected_within_10_ms_and_the_arm_stops(arm_urdf, arm_model,
                                                                       reaction):
    names = arm_model.joint_names
    q0 = home(arm_model)
    q_end = q0.copy()
    q_end[0] += 1.2                                    # swing the shoulder
    q_hit = q0.copy()
    q_hit[0] += 0.6
    centre = frame_pose(arm_model, q_hit, "tool0")[:3, 3]
    # the box's near face on the path of the tool: offset along the motion direction
    direction = frame_jacobian(arm_model, q_hit, "tool0")[3:, 0]
    centre = centre + 0.07 * direction / np.linalg.norm(direction)
    sim = Simulator(arm_urdf, joint_damping=False, initial_positions=dict(zip(names, q0)),
                    obstacles=[mujoco_model.Obstacle(centre, (0.05, 0.05, 0.05), "tool0")])
    controller = controller_for(arm_model, reaction=reaction,
                                observer_gain=ContactConfig().observer_gain)   # the default
    state = sim.state()
    controller.update(0.0, state.names, state.position, state.velocity)
    controller.set_trajectory(
        JointTrajectory(names, [TrajectoryPoint(q_end, time_from_start=2.0)]), 0.0)
    contact = controller.contact
    true_over = detected = stopped = None
    peak = 0.0
    while sim.time < 3.0:
        state = sim.state()
        t, qd = state.time, state.velocity
        level = contact.thresholds.levels(contact._accelerating)[1]
        command = controller.update(t, state.names, state.position, qd)
        sim.set_command(command.tau)
        sim.step()
        peak = max(peak, sim.contact_force())
        if true_over is None and np.any(np.abs(sim.contact_torque()) > level):
            true_over = sim.time
        if detected is None and contact.collided:
            detected = t
            assert "collision detected" in controller.abort_reason
        if detected is not None and stopped is None and np.all(np.abs(qd) < 0.01) \
                and reaction != "float":
            stopped = t
    assert true_over is not None, "the arm never hit the box"
    print(f"\n{reaction}: true |tau_ext| over the collision level at {true_over:.3f} s, "
          f"detected at {detected:.3f} s (+{1e3 * (detected - true_over):.0f} ms), "
          f"stopped at {stopped if stopped is None else round(stopped, 3)} s; peak contact "
          f"force {peak:.1f} N; {contact.reason}")
    assert detected is not None and detected - true_over <= 0.010 + 1e-9
    assert controller.trajectory_end_time is None or controller.trajectory_end_time < 3.0
    if reaction != "float":     # float leaves the arm to gravity compensation: it drifts
        reflex = controller.config.contact.reflex_duration if reaction == "reflex" else 0.0
        assert stopped is not None and stopped - detected <= reflex + 0.200
    # a latched collision refuses new motion until reset
    back = JointTrajectory(names, [TrajectoryPoint(q0, time_from_start=2.0)])
    with pytest.raises(TrajectoryError, match="reset"):
        controller.set_trajectory(back, sim.time)


# --- no false detection ---------------------------------------------------------------------

def fast_points(names, q0):
    """Every joint swung back and forth at rest-to-rest quintic segments of 1 s, peaking at
    95 % of the default arm's velocity limits (2, 2, 3, 3.5, 3.5, 4 rad/s)."""
    limits = np.array([2.0, 2.0, 3.0, 3.5, 3.5, 4.0])[:len(names)]
    swing = 0.95 * limits / 1.875 / 2.0     # quintic: peak speed 1.875 x distance / time
    points, t = [], 0.3
    for k, sign in enumerate((0, 1, -1, 1, 0)):
        points.append(TrajectoryPoint(q0 + sign * swing, np.zeros(len(names)),
                                      np.zeros(len(names)), time_from_start=t))
        t += 1.0 if k else 0.5
    return points


@pytest.mark.parametrize("trajectory", ["demo", "fast"])
def test_no_false_detection_with_the_exact_model(arm_urdf, arm_model, trajectory):
    names = arm_model.joint_names
    q0 = home(arm_model)
    plant = Plant(mujoco_model.build_mujoco_model(arm_urdf, joint_damping=False, timestep=DT),
                  names)
    plant.reset(q0)
    controller = controller_for(arm_model, observer_gain=ContactConfig().observer_gain)
    controller.update(0.0, names, *plant.state())
    if trajectory == "demo":
        points = [TrajectoryPoint(q, v, a, time_from_start=t)
                  for t, q, v, a in demo_waypoints(DEFAULT_ARM_HOME, names)]
    else:
        points = fast_points(names, q0)
    controller.set_trajectory(JointTrajectory(names, points), 0.0)
    end = points[-1].time_from_start + 0.5
    peak, fastest = np.zeros(len(names)), 0.0
    flagged = 0
    while plant.time < end:
        q, qd = plant.state()
        command = controller.update(plant.time, names, q, qd)
        plant.step(command.tau)
        peak = np.maximum(peak, np.abs(controller.contact.tau_ext))
        fastest = max(fastest, float(np.max(np.abs(qd))))
        flagged += controller.contact.detector.in_contact
    levels = controller.config.contact.torque_thresholds
    print(f"\n{trajectory} trajectory (up to {fastest:.1f} rad/s), exact model: peak |r| per "
          f"joint {np.round(peak, 3)} N m (levels {levels}); states flagged in contact: {flagged}")
    assert flagged == 0 and not controller.contact.collided


# --- reset ----------------------------------------------------------------------------------

def test_reset_is_refused_in_contact_and_accepted_after(arm_urdf, arm_model):
    names = arm_model.joint_names
    q0 = home(arm_model)
    sim = Simulator(arm_urdf, joint_damping=False, initial_positions=dict(zip(names, q0)))
    controller = controller_for(arm_model, reaction="hold")

    def run(seconds):
        end = sim.time + seconds
        while sim.time < end:
            state = sim.state()
            sim.set_command(controller.update(state.time, state.names, state.position,
                                              state.velocity).tau)
            sim.step()

    run(0.1)
    sim.set_external_wrench("tool0", [0.0, 0.0, -80.0])     # a hard push down on the tool
    run(0.3)
    assert controller.contact.collided
    with pytest.raises(ContactResetError, match="still in contact"):
        controller.reset_collision(sim.time)
    sim.set_external_wrench("tool0", [0.0, 0.0, 0.0])
    run(0.3)
    controller.reset_collision(sim.time)
    assert not controller.contact.collided and controller.abort_reason == ""


# --- the model side: friction and payload -----------------------------------------------------

def demo_run(arm_urdf, arm_model, seconds=4.0, damping=0.0, payload=None, **config):
    """The demo trajectory on a plant with viscous joint damping and/or a payload; the peak
    |r| per joint."""
    names = arm_model.joint_names
    payloads = [] if payload is None else [payload]
    plant = Plant(mujoco_model.build_mujoco_model(arm_urdf, joint_damping=False, timestep=DT,
                                                  payloads=payloads), names)
    plant.model.dof_damping[plant.index.dof_adr] = damping
    plant.reset(home(arm_model))
    controller = Controller(arm_model, ControllerConfig(
        mode="computed_torque", contact=ContactConfig(reaction="none"), **config))
    if payload is not None:
        controller.set_payload(payload.link, payload.mass, payload.com)
    controller.update(0.0, names, *plant.state())
    points = [TrajectoryPoint(q, v, a, time_from_start=t)
              for t, q, v, a in demo_waypoints(DEFAULT_ARM_HOME, names)]
    controller.set_trajectory(JointTrajectory(names, points), 0.0)
    peak = np.zeros(len(names))
    while plant.time < seconds:
        command = controller.update(plant.time, names, *plant.state())
        plant.step(command.tau)
        peak = np.maximum(peak, np.abs(controller.contact.tau_ext))
    return peak


def test_identified_friction_and_payload_enter_the_model_side(arm_urdf, arm_model):
    """Viscous friction the controller knows (friction.<joint>.viscous) and a payload it was
    told about (set_payload) leave the residual clean; the same friction unknown shows up in
    r as b qd, which is where unmodelled friction goes."""
    b = 2.0
    friction = {name: {"viscous": b} for name in arm_model.joint_names}
    known = demo_run(arm_urdf, arm_model, damping=b, friction=friction)
    unknown = demo_run(arm_urdf, arm_model, damping=b)
    payload = mujoco_model.Payload("tool0", 1.5, (0.0, 0.0, 0.05))
    carried = demo_run(arm_urdf, arm_model, payload=payload)
    print(f"\npeak |r| [N m]: friction known {np.round(known, 3)}, unknown {np.round(unknown, 2)},"
          f" 1.5 kg payload known {np.round(carried, 3)}")
    assert known.max() < 0.05 and carried.max() < 0.05
    assert unknown.max() > 1.0


# --- the core's rules, without a plant ---------------------------------------------------------

def test_a_stale_gap_carries_the_residual_and_restarts_the_integral(arm_model):
    """Across a gap longer than state_timeout nothing is known of what acted: r is kept as it
    was, and the integral restarts from there; afterwards r converges on the truth (here 0:
    at rest, no contact) at 1 / (1 + K_O dt) per state."""
    controller = controller_for(arm_model, reaction="none")
    names, q, rest = arm_model.joint_names, home(arm_model), np.zeros(6)
    t = 0.0
    for _ in range(50):
        command = controller.update(t, names, q, rest)
        t += DT
    contact = controller.contact
    contact.observer.r[:] = 3.0                       # as if a contact were being seen
    t += 5.0                                          # stale: r carried over
    controller.update(t, names, q, rest)
    assert np.allclose(contact.tau_ext, 3.0)
    controller.update(t + DT, names, q, rest)
    gain = controller.config.contact.observer_gain
    assert np.allclose(contact.tau_ext, 3.0 / (1.0 + gain * DT), atol=1e-6), command


def test_measured_effort_is_required_when_configured(arm_model):
    from rbd_control.control.errors import StateError
    controller = controller_for(arm_model, use_measured_effort=True)
    names, q = arm_model.joint_names, home(arm_model)
    with pytest.raises(StateError, match="efforts"):
        controller.update(0.0, names, q, np.zeros(6), effort=[])
    with pytest.raises(StateError, match="efforts"):
        controller.update(0.0, names, q, np.zeros(6), effort=[0.0, 0.0])
    controller.update(0.0, names, q, np.zeros(6), effort=np.zeros(6))


def test_wrench_levels_and_per_joint_levels_are_used(arm_model):
    from rbd_control.control.contact import CollisionDetector, CollisionThresholds
    config = ContactConfig(torque_thresholds=[[1.0, 2, 3, 4, 5, 6], 10.0, 1.0, 10.0],
                           force_thresholds=[5.0, 8.0, 5.0, 8.0])
    config.check()
    detector = CollisionDetector(CollisionThresholds.from_config(config, 6), arm_model.joint_names)
    tau = np.array([0.0, 2.5, 0.0, 0.0, 0.0, 0.0])
    assert not detector.update(tau, np.zeros(6), accelerating=True)
    assert list(detector.contact_joints) == [False, True, False, False, False, False]
    assert not detector.update(np.zeros(6), np.array([0, 6.0, 0, 0, 0, 0]), accelerating=False)
    assert detector.contact_axes[1] and not detector.collided
    assert detector.update(np.zeros(6), np.array([0, 0, -9.0, 0, 0, 0]), accelerating=False)
    assert "fz" in detector.reason and detector.collision_axes[2]
    assert not detector.update(np.zeros(6), np.zeros(6), accelerating=False)  # latched, once
    assert detector.collided and not detector.in_contact
    detector.reset()
    assert not detector.collided


# --- the perturbed plant ---------------------------------------------------------------------

@pytest.mark.parametrize("model_kind", ["plant's own", "nominal"])
def test_perturbed_plant_residual_over_the_demo(arm_urdf, arm_model, model_kind):
    """The demo's perturbed arm (masses and COMs off by up to 25 %, viscous and stiff Coulomb
    friction, a 1.5 kg payload). With the plant's own parameters as the model (what a perfect
    identification gives: rbd_identify's are within 3 % in torque) the default levels raise no
    flag; the residual peaks where Coulomb friction flips (the model's tanh against MuJoCo's
    frictionloss). With the nominal URDF the model error is the residual, and it is printed:
    the levels an unidentified robot would need."""
    from rbd_control.demo.plant import TRUE_PAYLOAD, perturbed_urdf, true_friction_parameters
    from rbd_control.identification import with_payload
    plant_xml = perturbed_urdf(arm_urdf)
    names = arm_model.joint_names
    q0 = home(arm_model)
    sim = Simulator(plant_xml, commanded_joints=names, timestep=DT, payloads=[TRUE_PAYLOAD],
                    initial_positions=dict(zip(names, q0)), stiff_friction=True)
    if model_kind == "nominal":
        model, friction = arm_model, None
    else:
        p = TRUE_PAYLOAD
        model = with_payload(load_urdf(plant_xml), p.link, p.mass, p.com, p.inertia)
        friction = true_friction_parameters()
    controller = Controller(model, ControllerConfig(
        mode="computed_torque", friction=friction, contact=ContactConfig(reaction="none")))
    peak, flagged = residual_over_the_demo(controller, sim, names)
    print(f"\nperturbed plant, {model_kind} model: peak |r| per joint {np.round(peak, 2)} N m; "
          f"states flagged in contact at the default levels: {flagged}")
    if model_kind != "nominal":
        assert flagged == 0 and not controller.contact.collided


def test_settings_change_at_runtime_keeping_a_latched_collision(arm_model):
    from rbd_control.control.contact import ContactMonitor
    controller = controller_for(arm_model, reaction="hold")
    names, q = arm_model.joint_names, home(arm_model)
    controller.update(0.0, names, q, np.zeros(6))
    monitor = controller.contact
    monitor.observer.r[:] = 50.0                       # as if pushed hard
    monitor.detector.update(monitor.tau_ext, None, False)
    assert monitor.collided
    controller.set_contact(ContactConfig(observer_gain=80.0, reaction="float",
                                         torque_thresholds=[60.0, 80.0, 60.0, 80.0]))
    assert controller.contact is monitor and monitor.collided and monitor.observer.gain == 80.0
    assert monitor.thresholds.torque_collision_nominal[0] == 80.0
    with pytest.raises(ContactConfigError, match="observer_gain"):
        controller.set_contact(ContactConfig(observer_gain=float("nan")))
    assert controller.config.contact.observer_gain == 80.0     # refused: nothing changed
    with pytest.raises(ConfigError, match="wrench_link"):
        controller.set_contact(ContactConfig(wrench_link="no_such_link"))
    assert controller.config.contact.observer_gain == 80.0 and controller.contact is monitor
    controller.set_contact(ContactConfig(wrench_link="flange_link"))   # another frame: afresh
    assert isinstance(controller.contact, ContactMonitor) and controller.contact is not monitor
    controller.set_contact(None)
    assert controller.contact is None and controller.abort_reason == ""
