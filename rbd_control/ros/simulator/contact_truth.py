"""rbd_mujoco_sim's ground truth of the obstacle contact (obstacle.box, MuJoCo only).

    out  ~/contact_torque   sensor_msgs/JointState, with every joint state while subscribed:
                            effort = the joint torques of the constraints (MuJoCo's
                            qfrc_constraint: the probe's contact with the box, and joint
                            limits), N m, the reported joints' names, the state's stamp
    out  ~/contact_force    std_msgs/Float64, right after each of those: the largest contact
                            normal force at that state, N (0 without contact)

What the controller's momentum observer should see as tau_ext (~/external_torque): the demo's
contact phase and tests compare the two. Created only when the plant has an obstacle.
The physics is Simulator.contact_torque / contact_force; this is the adapter.
"""
from __future__ import annotations

import time

from sensor_msgs.msg import JointState
from std_msgs.msg import Float64

SUBSCRIBER_CHECK_PERIOD = 0.2   # s, as the controller's tuning topics


class ContactTruthTopics:
    def __init__(self, node) -> None:
        self._torque = node.create_publisher(JointState, "~/contact_torque", 10)
        self._force = node.create_publisher(Float64, "~/contact_force", 10)
        self._wanted = False
        self._next_check = 0.0

    def publish(self, sim, stamp, names) -> None:
        """After a joint state (stamp, names) of `sim`: the truth, if someone listens."""
        now = time.monotonic()
        if now >= self._next_check:
            self._wanted = (self._torque.get_subscription_count() > 0
                            or self._force.get_subscription_count() > 0)
            self._next_check = now + SUBSCRIBER_CHECK_PERIOD
        if not self._wanted:
            return
        msg = JointState(name=list(names), effort=sim.contact_torque().tolist())
        msg.header.stamp = stamp
        self._torque.publish(msg)
        self._force.publish(Float64(data=sim.contact_force()))
