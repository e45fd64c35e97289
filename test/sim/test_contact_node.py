"""Contact awareness through the nodes: rbd_mujoco_sim and rbd_controller with contact.enabled,
this process as the user.

In real time: the simulator's obstacle (obstacle.box, a sphere on tool0) stands in the way of a
FollowJointTrajectory goal: the goal aborts with the collision and the arm stops (every joint
below 0.01 rad/s) within 200 ms of the detection (~/contact_state's detected_at). Fast goals in
free space, the observer fed the effort the simulator applied (contact.use_measured_effort),
succeed with no contact flag.

In lockstep:

A FollowJointTrajectory goal is running when the simulator's ~/external_wrench pushes the
tool hard: the goal aborts with the collision as its error string, ~/contact_state turns ERROR
naming the joints, ~/external_torque shows the push (J^T f), ~/external_wrench carries its
frame; ~/reset_collision is refused while the push lasts and accepted once it is gone.
"""
from __future__ import annotations

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import frame_jacobian, frame_pose, load_urdf

from by_path import load
from test_follow_joint_trajectory import ACTION, HOME, MOVE, Rig, goal_to, offset
from test_in_the_loop import (ARM_JOINTS, SIM_NODE, controller_parameters, positions,
                              sim_parameters, stamp_of, start_loop, wait_for_commands)

ros_helpers = load("ros/ros_helpers.py", "rbd_test_contact_ros_helpers")
set_parameters, RELIABLE_DEEP = ros_helpers.set_parameters, ros_helpers.RELIABLE_DEEP
LATCHED = __import__("rbd_control.ros.controller.contact", fromlist=["STATE_QOS"]).STATE_QOS
PUSH = np.array([40.0, 0.0, -40.0])     # N on tool0, world axes


class ContactRig(Rig):
    def __init__(self, ros_node, spawn_node, monkeypatch):
        contact = {"contact.enabled": True, "contact.reaction": "hold",
                   "contact.wrench_link": "tool0"}
        original = controller_parameters

        def with_contact(*args, **kwargs):
            return original(*args, **kwargs, **contact)
        monkeypatch.setattr("test_follow_joint_trajectory.controller_parameters", with_contact)
        self.torque = ros_node.collect(JointState, "/rbd_controller/external_torque", 1000)
        self.wrench = ros_node.collect(WrenchStamped, "/rbd_controller/external_wrench", 1000)
        self.contact_state = ros_node.collect(DiagnosticStatus, "/rbd_controller/contact_state",
                                              LATCHED)
        self.diagnostics = ros_node.collect(DiagnosticArray, "/diagnostics", 100)
        super().__init__(ros_node, spawn_node)
        self.push_pub = ros_node.node.create_publisher(
            WrenchStamped, f"/{SIM_NODE}/external_wrench", 10)

    def push(self, force):
        msg = WrenchStamped()
        msg.header.frame_id = "tool0"
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
        self.ros.wait_for_subscribers(self.push_pub)
        self.push_pub.publish(msg)

    def reset(self):
        client = self.ros.node.create_client(Trigger, "/rbd_controller/reset_collision")
        self.ros.wait_for(client.service_is_ready, 30.0, "~/reset_collision")
        future = client.call_async(Trigger.Request())
        self.wait(future.done, "the reset's reply")
        return future.result()


def test_a_push_aborts_the_goal_latches_a_collision_and_reset_waits_for_release(
        ros_node, spawn_node, monkeypatch):
    rig = ContactRig(ros_node, spawn_node, monkeypatch)
    rig.wait(lambda: rig.contact_state, "the first ~/contact_state")
    assert rig.contact_state[-1].level == DiagnosticStatus.OK, rig.contact_state[-1]
    handle = rig.send(goal_to(ARM_JOINTS, [(3.0, offset(MOVE))]))
    rig.wait_sim_time(rig.sim_time() + 0.5)
    rig.push(PUSH)
    response = rig.result(handle)
    assert response.status == GoalStatus.STATUS_ABORTED, rig.logs()
    assert "collision detected" in response.result.error_string, response.result.error_string
    rig.wait(lambda: rig.contact_state[-1].level == DiagnosticStatus.ERROR, "contact_state ERROR")
    state = rig.contact_state[-1]
    values = {kv.key: kv.value for kv in state.values}
    assert values["collision_joints"] and "tool0" in values["wrench_frame"], state

    # held against the push: the residual is J^T f at the measured pose
    rig.wait_sim_time(rig.sim_time() + 0.3)
    rig.wait(lambda: rig.torque and rig.wrench, "~/external_torque and ~/external_wrench")
    model = load_urdf(default_arm_urdf())
    torque = rig.torque[-1]
    q = np.array([rig.states[-1].position[list(rig.states[-1].name).index(j)]
                  for j in model.joint_names])
    expected = frame_jacobian(model, q, "tool0")[3:].T @ PUSH
    measured = np.array([torque.effort[list(torque.name).index(j)] for j in model.joint_names])
    print(f"\nexternal torque {np.round(measured, 2)} vs J^T f {np.round(expected, 2)}; "
          f"wrench {rig.wrench[-1].wrench.force} in {rig.wrench[-1].header.frame_id!r}")
    assert np.max(np.abs(measured - expected)) < 0.05 * np.max(np.abs(expected))
    assert rig.wrench[-1].header.frame_id == model.link_names[0]

    refused = rig.reset()
    assert not refused.success and "still in contact" in refused.message, refused.message
    rig.push([0.0, 0.0, 0.0])
    rig.wait_sim_time(rig.sim_time() + 0.3)
    accepted = rig.reset()
    assert accepted.success, accepted.message
    rig.wait(lambda: rig.contact_state[-1].level == DiagnosticStatus.OK, "contact_state OK")
    # the same line on /diagnostics
    rig.wait(lambda: any(status.name == "rbd_controller: contact" for array in rig.diagnostics
                         for status in array.status), "the contact line on /diagnostics")
    # motion is accepted again
    handle = rig.send(goal_to(ARM_JOINTS, [(1.0, offset(np.zeros(6)))]))
    assert rig.result(handle).status == GoalStatus.STATUS_SUCCEEDED, rig.logs()

    # settings change at runtime; inconsistent levels are refused with the reason
    results = set_parameters(rig.ros, "rbd_controller",
                             {"contact.torque_thresholds": [30.0, 20.0, 5.0, 10.0]})
    refused = results["contact.torque_thresholds"]
    assert not refused.successful and "contact.torque_thresholds" in refused.reason, refused
    results = set_parameters(rig.ros, "rbd_controller", {"contact.reaction": "none",
                                                         "contact.observer_gain": 100.0})
    assert all(r.successful for r in results.values()), results


@pytest.mark.wall_clock
def test_real_time_obstacle_aborts_the_goal_and_the_arm_stops_within_200_ms(ros_node,
                                                                            spawn_node):
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    q_hit = HOME.copy()
    q_hit[0] += 0.6
    direction = frame_jacobian(model, q_hit, "tool0")[3:, 0]
    centre = (frame_pose(model, q_hit, "tool0")[:3, 3]
              + 0.07 * direction / np.linalg.norm(direction))
    states = ros_node.collect(JointState, "/joint_states", RELIABLE_DEEP)
    contact_state = ros_node.collect(DiagnosticStatus, "/rbd_controller/contact_state", LATCHED)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
    sim_params = sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=False)
    sim_params.update({"obstacle.box": [*map(float, centre), 0.05, 0.05, 0.05],
                       "obstacle.probe_link": "tool0"})
    sim, controller = start_loop(
        ros_node, spawn_node, states, sim_params,
        controller_parameters(urdf, ARM_JOINTS, "computed_torque", use_sim_time=True,
                              **{"contact.enabled": True, "state_timeout": 0.5}))
    wait_for_commands(ros_node, commands, 20, [sim, controller])
    client = ActionClient(ros_node.node, FollowJointTrajectory, ACTION)
    ros_node.wait_for(client.server_is_ready, 30.0, "the action server")
    target = dict(zip(ARM_JOINTS, HOME + np.array([1.2, 0, 0, 0, 0, 0])))
    future = client.send_goal_async(goal_to(ARM_JOINTS, [(2.0, target)]))
    ros_node.wait_for(future.done, 30.0, "the goal response")
    result = future.result().get_result_async()
    ros_node.wait_for(result.done, 60.0, "the goal's result")
    response = result.result()
    logs = "\n".join(f"--- {p.module} ---\n{p.log()[-3000:]}" for p in (sim, controller))
    assert response.status == GoalStatus.STATUS_ABORTED, logs
    assert "collision detected" in response.result.error_string, response.result.error_string
    ros_node.wait_for(lambda: contact_state and contact_state[-1].level == DiagnosticStatus.ERROR,
                      10.0, "contact_state ERROR")
    detected = float({kv.key: kv.value for kv in contact_state[-1].values}["detected_at"])
    ros_node.wait_for(lambda: stamp_of(states[-1]) >= detected + 0.5, 30.0, "0.5 s more")
    after = [s for s in states if stamp_of(s) >= detected]
    stopped = next(stamp_of(s) for s in after
                   if np.all(np.abs(np.asarray(s.velocity)[[list(s.name).index(j)
                                                            for j in ARM_JOINTS]]) < 0.01))
    print(f"\nreal time: collision detected at {detected:.3f} s (sim), "
          f"{response.result.error_string}; stopped {1e3 * (stopped - detected):.0f} ms later; "
          f"pan at {positions(after[-1], ARM_JOINTS)[0]:.3f} rad (box at ~{q_hit[0]:.2f})")
    assert stopped - detected <= 0.200


@pytest.mark.wall_clock
def test_real_time_fast_goals_in_free_space_raise_no_contact_flag(ros_node, spawn_node):
    """The simulator on the wall clock, the observer fed the effort it applied
    (contact.use_measured_effort): the command reaches the plant a few ms late, which the
    command as the torque in force left in the residual (bench/contact_realtime.py). Quintic
    segments: across states the controller coalesced the newest state's effort stands for the
    whole gap, so a step in the torque there still shows (cubic segments: 8.4 N m once)."""
    urdf = default_arm_urdf()
    states = ros_node.collect(JointState, "/joint_states", RELIABLE_DEEP)
    torque = ros_node.collect(JointState, "/rbd_controller/external_torque", RELIABLE_DEEP)
    contact_state = ros_node.collect(DiagnosticStatus, "/rbd_controller/contact_state", LATCHED)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
    sim, controller = start_loop(
        ros_node, spawn_node, states, sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=False),
        controller_parameters(urdf, ARM_JOINTS, "computed_torque", use_sim_time=True,
                              **{"contact.enabled": True, "contact.reaction": "hold",
                                 "contact.use_measured_effort": True, "state_timeout": 0.5}))
    wait_for_commands(ros_node, commands, 20, [sim, controller])
    client = ActionClient(ros_node.node, FollowJointTrajectory, ACTION)
    ros_node.wait_for(client.server_is_ready, 30.0, "the action server")
    # 95 % of the default arm's velocity limits at a quintic's peak, as test_contact.py swings
    swing = 0.95 * np.array([2.0, 2.0, 3.0, 3.5, 3.5, 4.0]) / 1.875 / 2.0
    waypoints = [(0.5, offset(swing)), (1.5, offset(-swing)), (2.5, offset(swing)),
                 (3.0, offset(np.zeros(6)))]
    goal = goal_to(ARM_JOINTS, waypoints)
    for point in goal.trajectory.points:   # quintic segments: no step in the torque
        point.accelerations = [0.0] * len(ARM_JOINTS)
    fastest = 0.0
    for _ in range(3):
        future = client.send_goal_async(goal)
        ros_node.wait_for(future.done, 30.0, "the goal response")
        result = future.result().get_result_async()
        ros_node.wait_for(result.done, 60.0, "the goal's result")
        logs = "\n".join(f"--- {p.module} ---\n{p.log()[-3000:]}" for p in (sim, controller))
        assert result.result().status == GoalStatus.STATUS_SUCCEEDED, \
            (result.result().result.error_string, logs)
        fastest = max(fastest, max(float(np.max(np.abs(np.asarray(s.velocity))))
                                   for s in states[-3000:]))
    peak = max((float(np.max(np.abs(np.asarray(m.effort)))) for m in torque), default=0.0)
    flags = [s.message or s.level for s in contact_state if s.level != DiagnosticStatus.OK]
    print(f"\nreal time, 3 fast goals (up to {fastest:.2f} rad/s): peak |r| {peak:.2f} N m over "
          f"{len(torque)} states, contact flags {flags}")
    assert torque and not flags
