"""The controller's tuning topics: ~/desired ~/actual ~/error ~/feedforward ~/feedback.

sensor_msgs/JointState in `joints` order, stamped with the state's stamp: desired q/qd;
actual q/qd + commanded effort; error q/qd; feedforward and feedback efforts (before
clamping). JointState rather than Float64MultiArray because it names every value, so
PlotJuggler labels curves by joint and aligns topics by stamp; rqt_plot reads
/rbd_controller/error/position[1].
"""
import numpy as np
from rclpy.event_handler import PublisherEventCallbacks
from sensor_msgs.msg import JointState

from rbd_control.control.joint_map import JointMap
from rbd_control.ros.conversions import fill_joint_state

TOPICS = ('desired', 'actual', 'error', 'feedforward', 'feedback')


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

    def publish(self, command, state_stamp, names, q, qd):
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
        # Reusing the message saves re-validating the joint names at 1 kHz.
        msg = self._msgs.get(topic)
        if msg is None:
            msg = self._msgs[topic] = JointState(name=list(joints))
        fill_joint_state(msg, stamp, position, velocity, effort)
        self._pubs[topic].publish(msg)
