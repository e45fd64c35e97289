"""The controller's tuning topics: ~/desired ~/actual ~/error ~/feedforward ~/feedback.

sensor_msgs/JointState in `joints` order, stamped with the state's stamp: desired q/qd;
actual q/qd + commanded effort; error q/qd; feedforward and feedback efforts (before
clamping). JointState rather than Float64MultiArray because it names every value, so
PlotJuggler labels curves by joint and aligns topics by stamp; rqt_plot reads
/rbd_controller/error/position[1].

A topic nobody subscribes to is not published (filling and publishing the five messages
would cost more than the control step); subscribers are looked up every
SUBSCRIBER_CHECK_PERIOD, so a new one gets messages within that time.
"""
import time

import numpy as np
from rclpy.event_handler import PublisherEventCallbacks
from sensor_msgs.msg import JointState

from rbd_control.dynamics.joint_map import JointMap
from rbd_control.ros.conversions import fill_joint_state

TOPICS = ('desired', 'actual', 'error', 'feedforward', 'feedback')
SUBSCRIBER_CHECK_PERIOD = 0.2   # s


class TuningPublisher:

    def __init__(self, node):
        self._node = node
        # Without rclpy's default QoS-event handlers: each one is another entry in
        # the wait set the executor rebuilds for every joint state.
        quiet = PublisherEventCallbacks(use_default_callbacks=False)
        self._pubs = {topic: node.create_publisher(JointState, f'~/{topic}', 10,
                                                   event_callbacks=quiet) for topic in TOPICS}
        self._msgs = {}              # one reused JointState per topic
        self._state_map = None       # where each controlled joint sits in the state
        self._wanted = set()         # topics with subscribers, as of _next_check
        self._next_check = 0.0

    def publish(self, command, state_stamp, names, q, qd):
        if time.monotonic() >= self._next_check:
            self._wanted = {t for t, pub in self._pubs.items() if pub.get_subscription_count()}
            self._next_check = time.monotonic() + SUBSCRIBER_CHECK_PERIOD
        if not self._wanted:
            return
        stamp = state_stamp if (state_stamp.sec or state_stamp.nanosec) else \
            self._node.get_clock().now().to_msg()
        joints = command.joint_names
        if self._state_map is None or self._state_map.full_names != tuple(names) \
                or self._state_map.names != joints:
            # The core does its own matching; this only reorders what it accepted.
            self._state_map = JointMap.by_name(joints, tuple(names), 'the joint state')
            self._msgs = {}
        qd = np.zeros(len(q)) if qd is None else qd
        actual_q, actual_qd = self._state_map.take(q), self._state_map.take(qd)
        self._publish('desired', joints, stamp, command.desired_q, command.desired_qd)
        self._publish('actual', joints, stamp, actual_q, actual_qd, command.tau)
        self._publish('error', joints, stamp, command.error,
                      np.asarray(command.desired_qd) - actual_qd)
        self._publish('feedforward', joints, stamp, effort=command.feedforward)
        self._publish('feedback', joints, stamp, effort=command.feedback)

    def _publish(self, topic, joints, stamp, position=(), velocity=(), effort=()):
        if topic not in self._wanted:
            return
        # Reusing the message saves re-validating the joint names at 1 kHz.
        msg = self._msgs.get(topic)
        if msg is None:
            msg = self._msgs[topic] = JointState(name=list(joints))
        fill_joint_state(msg, stamp, position, velocity, effort)
        self._pubs[topic].publish(msg)
