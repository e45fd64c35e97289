"""~/follow_joint_trajectory driven as MoveIt's FollowJointTrajectory controller handler drives
it: a real rclpy ActionClient in this process, rbd_controller and rbd_mujoco_sim (lockstep,
sim time: deterministic) in theirs. Goals carry header stamp 0 and a goal_time_tolerance; the
controller's constraints.* parameters give the default tolerances, as a MoveIt user sets them.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from rclpy.action import ActionClient
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.description import default_arm_urdf

from test_in_the_loop import (ARM_JOINTS, SIM_NODE, controller_parameters, positions,
                              sim_parameters, stamp_of, start_loop, wait_for_commands)

ACTION = "/rbd_controller/follow_joint_trajectory"
Result = FollowJointTrajectory.Result
HOME = np.array([DEFAULT_ARM_HOME[j] for j in ARM_JOINTS])
# the node's defaults a MoveIt user would set in the controller's YAML
PATH_TOLERANCE = 0.1
GOAL_TOLERANCE = 0.01
CONSTRAINTS = {
    "constraints.goal_time": 0.5,
    "constraints.stopped_velocity_tolerance": 0.02,
    **{f"constraints.{j}.trajectory": PATH_TOLERANCE for j in ARM_JOINTS},
    **{f"constraints.{j}.goal": GOAL_TOLERANCE for j in ARM_JOINTS},
    "action_monitor_rate": 20.0,
    "state_publish_rate": 50.0,
    # the watchdog is not under test: a loaded machine may stall the loop for 0.1 s of wall
    # time, and a trip re-anchors the hold (and drops a goal's trajectory)
    "state_timeout": 2.0,
}
WALL_TIMEOUT = 180.0      # lockstep runs as fast as the machine allows; a loaded one is slow


class Rig:
    """Simulator + controller in lockstep, an ActionClient and observers in this process."""

    def __init__(self, ros_node, spawn_node):
        urdf = default_arm_urdf()
        self.ros = ros_node
        self.states = ros_node.collect(JointState, "/joint_states", 1000)
        self.controller_state = ros_node.collect(
            JointTrajectoryControllerState, "/rbd_controller/controller_state", 1000)
        commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
        self.sim, self.controller = start_loop(
            ros_node, spawn_node, self.states,
            sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=True),
            controller_parameters(urdf, ARM_JOINTS, "computed_torque", use_sim_time=True,
                                  **CONSTRAINTS))
        wait_for_commands(ros_node, commands, 20, [self.sim, self.controller])
        self.client = ActionClient(ros_node.node, FollowJointTrajectory, ACTION)
        ros_node.wait_for(self.client.server_is_ready, 30.0, "the action server")
        self.trajectory_pub = ros_node.node.create_publisher(
            JointTrajectory, "/rbd_controller/joint_trajectory", 10)
        self.disturbance_pub = ros_node.node.create_publisher(
            JointState, f"/{SIM_NODE}/joint_disturbance", 10)

    def logs(self):
        return "\n".join(f"--- {p.module} ---\n{p.log()[-3000:]}"
                         for p in (self.sim, self.controller))

    def send(self, goal, feedback=None):
        future = self.client.send_goal_async(goal, feedback_callback=feedback)
        self.ros.wait_for(future.done, 30.0, "the goal response")
        handle = future.result()
        assert handle.accepted, "goals are accepted; a refused one ends with its error code"
        return handle

    def result(self, handle):
        future = handle.get_result_async()
        self.wait(future.done, "the goal's result")
        return future.result()

    def wait(self, predicate, what):
        try:
            self.ros.wait_for(predicate, WALL_TIMEOUT, what)
        except BaseException:
            print(self.logs())
            raise

    def sim_time(self):
        return stamp_of(self.states[-1])

    def wait_sim_time(self, t):
        self.wait(lambda: self.states and self.sim_time() >= t, f"sim time {t:.2f} s")

    def q(self):
        return positions(self.states[-1], ARM_JOINTS)


def goal_to(joints, waypoints, *, goal_time=0.5, goal_tolerance=()):
    """A goal through `waypoints` [(t, {joint: q})] with zero end velocity, header stamp 0."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(joints)
    for t, q in waypoints:
        point = JointTrajectoryPoint(positions=[float(q[j]) for j in joints],
                                     velocities=[0.0] * len(joints))
        point.time_from_start = Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))
        goal.trajectory.points.append(point)
    goal.goal_time_tolerance = Duration(sec=int(goal_time),
                                        nanosec=int(round((goal_time % 1) * 1e9)))
    goal.goal_tolerance = [JointTolerance(name=name, position=value)
                           for name, value in goal_tolerance]
    return goal


def offset(delta):
    """HOME + delta (per joint, ARM_JOINTS order) as {joint: q}."""
    return dict(zip(ARM_JOINTS, HOME + np.asarray(delta, dtype=float)))


MOVE = [0.4, -0.3, 0.4, 0.3, -0.3, 0.5]


@pytest.fixture
def rig(ros_node, spawn_node):
    return Rig(ros_node, spawn_node)


def test_goal_in_shuffled_joint_order_succeeds_within_goal_tolerance(rig):
    shuffled = [ARM_JOINTS[i] for i in (3, 0, 5, 1, 4, 2)]
    target = offset(MOVE)
    feedback = []
    start = rig.sim_time()
    handle = rig.send(goal_to(shuffled, [(0.8, offset(np.multiply(MOVE, 0.5))), (1.5, target)],
                              goal_tolerance=[("wrist_3", 0.005)]),
                      feedback=feedback.append)
    response = rig.result(handle)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, rig.logs()
    assert response.result.error_code == Result.SUCCESSFUL
    assert response.result.error_string == "Goal successfully reached!"
    q = rig.q()
    error = np.abs(q - np.array([target[j] for j in ARM_JOINTS]))
    assert error.max() < GOAL_TOLERANCE, f"per joint {error}"
    # feedback: named in the controller's order, at action_monitor_rate of sim time
    assert feedback and list(feedback[-1].feedback.joint_names) == ARM_JOINTS
    stamps = np.array([stamp_of(f.feedback) for f in feedback])
    spacing = np.diff(stamps[:-1])     # (the last one comes with the verdict)
    assert np.all(spacing >= 0.05 - 1e-6) and np.median(spacing) < 0.06
    assert stamps[0] - start < 0.2 and len(stamps) >= 0.5 * 1.5 * 20
    last = feedback[-1].feedback
    np.testing.assert_allclose(
        np.asarray(last.desired.positions) - np.asarray(last.actual.positions),
        last.error.positions, atol=1e-12)
    # ~/controller_state at state_publish_rate, reference = the goal's end after it
    rig.wait_sim_time(rig.sim_time() + 0.1)
    states = [s for s in rig.controller_state if stamp_of(s) > start]
    spacing = np.diff([stamp_of(s) for s in states])
    assert len(states) > 20 and np.all(spacing >= 0.02 - 1e-6) and np.median(spacing) < 0.025
    final = states[-1]
    np.testing.assert_allclose(final.reference.positions, [target[j] for j in ARM_JOINTS],
                               atol=1e-9)
    np.testing.assert_allclose(final.reference.velocities, 0.0, atol=1e-9)
    assert len(final.output.effort) == len(ARM_JOINTS) and list(final.joint_names) == ARM_JOINTS


def test_refused_goals_end_with_their_error_code_and_the_arm_stays(rig):
    before = rig.q()
    unknown = goal_to(ARM_JOINTS[:-1] + ["gripper"], [(1.0, {**offset(MOVE), "gripper": 0.0})])
    response = rig.result(rig.send(unknown))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == Result.INVALID_JOINTS
    assert "gripper" in response.result.error_string

    old = goal_to(ARM_JOINTS, [(0.5, offset(MOVE))])
    old.trajectory.header.stamp.sec = 1       # sim time 1 s + 0.5 s: long past
    rig.wait_sim_time(2.0)
    response = rig.result(rig.send(old))
    assert response.result.error_code == Result.OLD_HEADER_TIMESTAMP
    assert "ends in the past" in response.result.error_string

    moving_end = goal_to(ARM_JOINTS, [(1.0, offset(MOVE))])
    moving_end.trajectory.points[-1].velocities[2] = 0.5
    response = rig.result(rig.send(moving_end))
    assert response.result.error_code == Result.INVALID_GOAL
    assert "allow_nonzero_velocity_at_trajectory_end" in response.result.error_string

    bad_tolerance = goal_to(ARM_JOINTS, [(1.0, offset(MOVE))], goal_tolerance=[("elbow", -3.0)])
    response = rig.result(rig.send(bad_tolerance))
    assert response.result.error_code == Result.INVALID_GOAL
    assert "elbow" in response.result.error_string
    assert np.abs(rig.q() - before).max() < 1e-3


def test_blocked_arm_aborts_with_path_tolerance_violated_and_holds(rig):
    handle = rig.send(goal_to(ARM_JOINTS, [(2.0, offset(MOVE))]))
    rig.wait_sim_time(rig.sim_time() + 0.3)
    # an obstacle mid-motion: more than the elbow's 80 N m effort limit against the motion
    rig.disturbance_pub.publish(JointState(name=["elbow"], effort=[-100.0]))
    response = rig.result(handle)
    assert response.status == GoalStatus.STATUS_ABORTED, rig.logs()
    assert response.result.error_code == Result.PATH_TOLERANCE_VIOLATED
    # (the joint named is the first out of tolerance; with the elbow saturated, computed
    # torque's coupling terms may drag a wrist out first)
    # JTC's error_string verbatim; which joint left its tolerance is in the log
    assert response.result.error_string == "Aborted due to path tolerance violation"
    assert re.search(r"Aborted due to path tolerance violation: joint \w+ position error",
                     rig.controller.log())
    # the obstacle goes away: the arm holds where it was when the goal was aborted
    aborted_at = rig.sim_time()
    rig.disturbance_pub.publish(JointState())
    rig.wait_sim_time(aborted_at + 2.0)
    held = [s for s in rig.controller_state if stamp_of(s) > aborted_at]
    reference = np.array(held[-1].reference.positions)
    np.testing.assert_allclose(held[0].reference.positions, reference, atol=1e-12)
    np.testing.assert_allclose(held[-1].reference.velocities, 0.0, atol=1e-12)
    assert np.abs(rig.q() - reference).max() < 0.02


def test_cancel_holds_the_arm_where_it_is(rig):
    handle = rig.send(goal_to(ARM_JOINTS, [(3.0, offset(MOVE))]))
    rig.wait_sim_time(rig.sim_time() + 1.0)           # mid-motion
    cancel = handle.cancel_goal_async()
    rig.wait(cancel.done, "the cancel response")
    response = rig.result(handle)
    assert response.status == GoalStatus.STATUS_CANCELED, rig.logs()
    canceled_at, q_canceled = rig.sim_time(), rig.q()
    moved = np.abs(q_canceled - HOME)
    assert moved.max() > 0.05, "cancel came before the motion started"
    rig.wait_sim_time(canceled_at + 2.0)
    # held (gravity-compensated by the model law): no sag, no drift towards the goal
    drift = np.abs(rig.q() - q_canceled)
    assert drift.max() < 0.05, f"drift per joint after cancel {drift}"
    assert np.abs(rig.states[-1].velocity).max() < 0.01
    remaining = np.abs(rig.q() - np.array(list(offset(MOVE).values())))
    assert remaining.max() > 0.05, "the arm went on to the canceled goal"


def test_a_new_goal_or_topic_trajectory_preempts_the_running_goal(rig):
    first = rig.send(goal_to(ARM_JOINTS, [(3.0, offset(MOVE))]))
    rig.wait_sim_time(rig.sim_time() + 0.5)
    second = rig.send(goal_to(ARM_JOINTS, [(1.5, offset(np.multiply(MOVE, -0.5)))]))
    response = rig.result(first)       # JTC >= 4.41.0 (ros2_controllers #2423): aborted
    assert response.status == GoalStatus.STATUS_ABORTED, rig.logs()
    assert response.result.error_code == Result.INVALID_GOAL
    assert response.result.error_string == "Current goal preempted by new incoming action."
    response = rig.result(second)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, rig.logs()

    third = rig.send(goal_to(ARM_JOINTS, [(3.0, offset(MOVE))]))
    rig.wait_sim_time(rig.sim_time() + 0.5)
    rig.ros.wait_for_subscribers(rig.trajectory_pub)
    topic = goal_to(ARM_JOINTS, [(1.0, offset(np.zeros(6)))]).trajectory
    rig.trajectory_pub.publish(topic)
    response = rig.result(third)
    assert response.status == GoalStatus.STATUS_ABORTED, rig.logs()
    assert response.result.error_code == Result.INVALID_GOAL
    assert "joint_trajectory" in response.result.error_string
