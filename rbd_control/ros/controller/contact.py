"""Contact awareness on rbd_controller's interface (the core: rbd_control/control/contact/).

  out  ~/external_torque   sensor_msgs/JointState: effort = the observer's residual r ~ tau_ext,
                           N m (N), joint names in command order, stamped with the state's stamp
  out  ~/external_wrench   geometry_msgs/WrenchStamped: F = (J J^T + lambda^2 1)^-1 J r at the
                           origin of contact.wrench_link, in the URDF root link's axes
                           (frame_id: the root link; the point is the link's origin)
  out  ~/contact_state     diagnostic_msgs/DiagnosticStatus, transient_local, on every change:
                           level OK (no contact) / WARN (contact) / ERROR (collision latched),
                           message = the collision's reason, values = which joints and axes
                           are in contact or collision, the wrench frame, the reaction, and
                           detected_at (the control time, s, of the state the collision
                           latched on: the joint state's stamp)
  out  /diagnostics        the same status as one more line of the node's DiagnosticArray
  srv  ~/reset_collision   std_srvs/Trigger: clear a latched collision (refused, success false
                           with the reason, while still in contact), then hold the pose

~/contact_state is a DiagnosticStatus rather than a std_msgs/String of JSON: it is available
here (diagnostic_msgs is already a dependency for /diagnostics), its level says none / contact /
collision at a glance, its key/values name the joints and axes, and rqt_robot_monitor and
diagnostic_aggregator read it as they are; JSON would need parsing and says nothing to tools.

Parameters: contact.* (params/controller.py; config.contact_from_parameters reads them); all
but contact.enabled and contact.wrench_link can be set at runtime (Controller.set_contact: a
latched collision and r are kept).

The torque and wrench topics are filled only while someone subscribes (looked up every 0.2 s,
as the tuning topics); the state is published when it changes.
"""
import time

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from rbd_control.control.contact.detection import AXES
from rbd_control.control.errors import ControlError
from rbd_control.ros.controller.diagnostics import status_name
from rbd_control.ros.conversions import fill_joint_state

__all__ = ['ContactTopics']

SUBSCRIBER_CHECK_PERIOD = 0.2   # s
STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)
OK, WARN, ERROR = (bytes([level]) for level in (0, 1, 2))


class ContactTopics:
    """The contact topics and service of one ControllerNode; the ControllerContext gives the
    controller, its time and its lock."""

    def __init__(self, node, context):
        self._context = context
        self._torque_pub = node.create_publisher(JointState, '~/external_torque', 10)
        self._wrench_pub = node.create_publisher(WrenchStamped, '~/external_wrench', 10)
        self._state_pub = node.create_publisher(DiagnosticStatus, '~/contact_state', STATE_QOS)
        node.create_service(Trigger, '~/reset_collision', self._on_reset)
        self._torque_msg, self._wrench_msg = None, WrenchStamped()
        self._wanted = (False, False)
        self._next_check = 0.0
        self._last_flags = None
        self._name = status_name(node, 'contact')

    def publish(self, command, stamp):
        """After a command: the residual, the wrench (if subscribed) and the state (if changed)."""
        controller = self._context.controller
        contact = None if controller is None else controller.contact
        if contact is None:
            return
        if time.monotonic() >= self._next_check:
            self._wanted = (self._torque_pub.get_subscription_count() > 0,
                            self._wrench_pub.get_subscription_count() > 0)
            self._next_check = time.monotonic() + SUBSCRIBER_CHECK_PERIOD
        if self._wanted[0]:
            msg = self._torque_msg
            if msg is None or tuple(msg.name) != command.joint_names:
                msg = self._torque_msg = JointState(name=list(command.joint_names))
            self._torque_pub.publish(fill_joint_state(msg, stamp, effort=contact.tau_ext))
        if self._wanted[1]:
            self._publish_wrench(contact, controller.model, stamp)
        detector = contact.detector
        flags = (detector.contact_joints.tobytes(), detector.collision_joints.tobytes(),
                 detector.contact_axes.tobytes(), detector.collision_axes.tobytes(),
                 detector.collided)
        if flags != self._last_flags:
            self._last_flags = flags
            self._state_pub.publish(self._status(contact))

    def _publish_wrench(self, contact, model, stamp):
        msg = self._wrench_msg
        msg.header.stamp = stamp
        msg.header.frame_id = model.link_names[0]      # world (root) axes, at the link origin
        f = contact.wrench
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, f[:3])
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = map(float, f[3:])
        self._wrench_pub.publish(msg)

    def _status(self, contact):
        detector = contact.detector
        names = detector.joint_names

        def listed(flags, labels):
            return ', '.join(label for label, flag in zip(labels, flags) if flag)

        if detector.collided:
            level, message = ERROR, detector.reason + ' (latched: ~/reset_collision)'
        elif detector.in_contact:
            level, message = WARN, 'contact'
        else:
            level, message = OK, 'no contact'
        values = [
            ('contact_joints', listed(detector.contact_joints, names)),
            ('collision_joints', listed(detector.collision_joints, names)),
            ('contact_axes', listed(detector.contact_axes, AXES)),
            ('collision_axes', listed(detector.collision_axes, AXES)),
            ('wrench_frame', contact.wrench_estimator.frame),
            ('reaction', contact.config.reaction),
            ('detected_at', '' if contact.detected_at is None else f'{contact.detected_at:.6f}'),
        ]
        return DiagnosticStatus(level=level, name=self._name, message=message,
                                values=[KeyValue(key=k, value=v) for k, v in values])

    def diagnostics(self):
        """The contact line of /diagnostics: [the ~/contact_state status], [] when off."""
        with self._context.lock:
            controller = self._context.controller
            contact = None if controller is None else controller.contact
            return [] if contact is None else [self._status(contact)]

    def _on_reset(self, request, response):
        with self._context.lock:
            controller = self._context.controller
            try:
                if controller is None:
                    raise ControlError('no robot model yet')
                controller.reset_collision(self._context.control_time())
            except ControlError as error:
                response.success, response.message = False, str(error)
                return response
            response.success, response.message = True, 'collision cleared; holding the pose'
            if controller.contact is not None:
                self._last_flags = None   # publish the cleared state with the next command
        return response
