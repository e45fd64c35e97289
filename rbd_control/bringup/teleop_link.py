"""The link between the leader and the follower of `rbd_bringup --teleop` (bringup/teleop.py):
what it sends each tick, and everything it records for the report (teleop_report.py).

    out  /leader/rbd_mujoco_sim/hand_target            the hand's point on the path (and tool0's
                                                       start orientation), PoseStamped
    out  /follower/rbd_controller/target_joint_state   the leader's newest q and qd (the stream)
    out  /leader/rbd_mujoco_sim/joint_disturbance      the force feedback (FeedbackPolicy)
    in   /leader/joint_states, /follower/joint_states  recorded at 1 kHz with their source time
    in   /follower/rbd_controller/external_torque      the follower's tau_ext: the feedback
    in   /follower/rbd_mujoco_sim/contact_torque       the box's true joint torques (the truth)
    in   /follower/rbd_controller/contact_state        the follower's contact flag, on change

Every 1 kHz topic is drained between spins (ros/drained.py), not taken by the executor one
wake-up per message: this process takes four of them on a 2-core machine whose four nodes
run 1 kHz loops. Each sample is kept with the DDS source timestamp of its message (the
publishing node's wall clock, one clock for both arms: their header stamps are two different
simulators' sim times), so the report can compare the arms at the same instant.
"""
from __future__ import annotations

import time

import numpy as np

from rbd_control.bringup.teleop_scene import FEEDBACK_CHOICES
from rbd_control.ros.qos import JOINT_STATE_QOS

ARMS = ("leader", "follower")
# ~1 s of a 1 kHz topic: what this process may queue while it draws a slow breath
DEPTH = 1000
WARN = 1    # DiagnosticStatus levels: WARN is contact, ERROR a latched collision


class Series:
    """Samples (source time, values in the link's joint order) of one topic."""

    def __init__(self, joints) -> None:
        self._joints = list(joints)
        self._order: dict[tuple, list[int]] = {}
        self.times: list[float] = []
        self.values: list[np.ndarray] = []

    def ordered(self, names, values) -> np.ndarray:
        """`values` by `names` in the link's joint order (the index cached per name list)."""
        key = tuple(names)
        if key not in self._order:
            self._order[key] = [key.index(joint) for joint in self._joints]
        return np.asarray(values, dtype=float)[self._order[key]]

    def add(self, info, names, values) -> np.ndarray:
        array = self.ordered(names, values)
        self.times.append(info["source_timestamp"] * 1e-9)
        self.values.append(array)
        return array

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self._joints)
        return (np.array(self.times), np.array(self.values).reshape(-1, n))


class FeedbackPolicy:
    """What of the follower's tau_ext the leader gets: `off` nothing; `on` FEEDBACK_GAIN times
    all of it; `contact` that, but only while the follower's contact flag is set (its free-
    motion residual, noise and model error, then never reaches the weightless leader)."""

    def __init__(self, kind: str, gain: float) -> None:
        if kind not in FEEDBACK_CHOICES:
            raise ValueError(f"feedback {kind!r}: one of {', '.join(FEEDBACK_CHOICES)}")
        self.kind, self.gain = kind, gain

    def torque(self, tau_ext: np.ndarray, in_contact: bool) -> np.ndarray:
        if self.kind == "off" or (self.kind == "contact" and not in_contact):
            return np.zeros_like(tau_ext)
        return self.gain * tau_ext


class TeleopLink:
    """The link's publishers and recorders on `node` (the root namespace: every name is
    absolute); drained by the owner after each spin."""

    def __init__(self, node, drained, joints, policy: FeedbackPolicy) -> None:
        from diagnostic_msgs.msg import DiagnosticStatus
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState

        from rbd_control.ros.controller.contact import STATE_QOS

        self.joints, self.policy = list(joints), policy
        self.states = {arm: Series(joints) for arm in ARMS}
        self.newest = {arm: None for arm in ARMS}   # the newest JointState of each arm
        self.tau_ext, self.truth, self.fed = Series(joints), Series(joints), Series(joints)
        self.flags: list[tuple[float, bool]] = []   # (wall time, in contact) on each change
        self.ticks: list[tuple[float, np.ndarray, np.ndarray]] = []   # (time, leader, follower)
        self._hand_pub = node.create_publisher(PoseStamped, "/leader/rbd_mujoco_sim/hand_target",
                                               10)
        self._target_pub = node.create_publisher(
            JointState, "/follower/rbd_controller/target_joint_state", 10)
        self._feedback_pub = node.create_publisher(
            JointState, "/leader/rbd_mujoco_sim/joint_disturbance", 10)
        self._hand, self._target = PoseStamped(), JointState(name=self.joints)
        self._feedback = JointState(name=self.joints)
        self._fed_last = np.zeros(len(self.joints))
        # a non-zero feedback went out to a leader's simulator that subscribes (asked when
        # sent: after a signal's shutdown the publisher can no longer be asked)
        self.feedback_reached = False
        for arm in ARMS:
            drained.subscribe(JointState, f"/{arm}/joint_states",
                              lambda msg, info, arm=arm: self._on_state(arm, msg, info),
                              JOINT_STATE_QOS, with_info=True)
        drained.subscribe(JointState, "/follower/rbd_controller/external_torque",
                          lambda msg, info: self.tau_ext.add(info, msg.name, msg.effort),
                          DEPTH, with_info=True)
        drained.subscribe(JointState, "/follower/rbd_mujoco_sim/contact_torque",
                          lambda msg, info: self.truth.add(info, msg.name, msg.effort),
                          DEPTH, with_info=True)
        node.create_subscription(DiagnosticStatus, "/follower/rbd_controller/contact_state",
                                 self._on_contact_state, STATE_QOS)

    def _on_state(self, arm, msg, info) -> None:
        self.newest[arm] = msg
        self.states[arm].add(info, msg.name, msg.position)

    def _on_contact_state(self, msg) -> None:
        self.flags.append((time.time(), msg.level[0] >= WARN))

    @property
    def in_contact(self) -> bool:
        return bool(self.flags) and self.flags[-1][1]

    def ready(self) -> bool:
        """Both arms' states in, the follower's tau_ext in (its model and contact are up),
        and the hand's and the stream's subscribers there."""
        return (all(self.newest.values()) and bool(self.tau_ext.times)
                and self._hand_pub.get_subscription_count() > 0
                and self._target_pub.get_subscription_count() > 0)

    def newest_position(self, arm) -> np.ndarray:
        msg = self.newest[arm]
        return self.states[arm].ordered(msg.name, msg.position)

    def hold_hand(self, point, grip_xyzw) -> None:
        pose = self._hand.pose
        pose.position.x, pose.position.y, pose.position.z = map(float, point)
        pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = \
            map(float, grip_xyzw)
        self._hand_pub.publish(self._hand)

    def tick(self) -> None:
        """The stream (the leader's newest state as the follower's target) and the feedback;
        the pair of newest positions kept as the link saw them."""
        leader = self.newest["leader"]
        self._target.name, self._target.position = leader.name, leader.position
        self._target.velocity = leader.velocity
        self._target_pub.publish(self._target)
        self._send_feedback()
        self.ticks.append((time.time(), self.newest_position("leader"),
                           self.newest_position("follower")))

    def _send_feedback(self) -> None:
        tau_ext = self.tau_ext.values[-1] if self.tau_ext.values else np.zeros(len(self.joints))
        fed = self.policy.torque(tau_ext, self.in_contact)
        # the simulator keeps a disturbance until the next one: a zero is sent once
        if not fed.any() and not self._fed_last.any():
            return
        self._feedback.effort = fed.tolist()
        self._feedback_pub.publish(self._feedback)
        if fed.any() and not self.feedback_reached:
            self.feedback_reached = self._feedback_pub.get_subscription_count() > 0
        self.fed.add({"source_timestamp": time.time_ns()}, self.joints, fed)
        self._fed_last = fed
