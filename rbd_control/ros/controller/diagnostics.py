"""/diagnostics: the control loop's health (rbd_control/control/safety/health.py) as
diagnostic_msgs/DiagnosticArray, the way rqt_robot_monitor and diagnostic_aggregator read it.

One DiagnosticStatus named '<node name>: control loop', hardware_id the robot's name, level
OK / WARN / ERROR, a one-line message and the statistics as key/value pairs; and one named
'<node name>: limits': WARN while a joint limit or the torque rate
(rbd_control/control/safety/command_limits.py) acted since the last message, naming each joint
and limit with its count. Published on a steady timer, so it keeps reporting (ERROR: no joint
states) when a simulator and its /clock are gone.

/diagnostics stays absolute in a namespace: diagnostic_aggregator and rqt_robot_monitor read
one global topic. So the node's name in each status is its namespaced one ('left/rbd_controller:
control loop'; in the root namespace 'rbd_controller: ...' as before) and the hardware_id
carries the namespace too ('left/rbd_arm'): two arms of one robot are told apart.
"""
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType

TOPIC = '/diagnostics'


def status_name(node, what):
    """'<node's namespace and name, no leading slash>: <what>', e.g. 'left/rbd_controller:
    contact'; 'rbd_controller: contact' in the root namespace."""
    return f"{node.get_fully_qualified_name().lstrip('/')}: {what}"


def namespaced_hardware_id(node, robot):
    """The robot's name, behind the node's namespace when it has one ('left/rbd_arm')."""
    namespace = node.get_namespace().strip('/')
    return f'{namespace}/{robot}' if namespace and robot else robot


def status_msg(report, name, hardware_id='', values=()):
    """A HealthReport as one DiagnosticStatus, with further (key, text) `values`."""
    return DiagnosticStatus(
        level=bytes([report.level]), name=name, message=report.message, hardware_id=hardware_id,
        values=[KeyValue(key=key, value=text) for key, text in (*report.values, *values)])


def softened_values(softened):
    """(key, text) pairs of what the loop design softens (Controller.softened): the value
    applied and the one asked for, e.g. 'cartesian_stiffness[x] applied' '612.2'."""
    return [pair for s in softened for pair in ((f'{s.name} applied', f'{s.applied:.4g}'),
                                                (f'{s.name} requested', f'{s.requested:.4g}'))]


def limits_status(acting, previous, name, hardware_id=''):
    """The '<node>: limits' DiagnosticStatus from CommandLimits.acting() ({(joint, kind):
    count since start}) and the one of the last message: WARN naming what acted since."""
    recent = {key: count - previous.get(key, 0) for key, count in acting.items()
              if count > previous.get(key, 0)}
    words = ', '.join(f'{joint} {kind} x{count}'
                      for (joint, kind), count in sorted(recent.items()))
    level = DiagnosticStatus.WARN if recent else DiagnosticStatus.OK
    message = f'limits acting: {words}' if recent else 'no limit acting'
    values = [KeyValue(key=f'{joint} {kind}', value=str(count))
              for (joint, kind), count in sorted(acting.items())]
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                            values=values)


class DiagnosticsPublisher:
    """Every `period` seconds: the ControllerContext's LoopHealth report (with the age guard,
    the oscillation detector and the load warnings of the model in use), followed by the
    DiagnosticStatus list `extra()` returns (other features' lines)."""

    def __init__(self, node, context, period, extra=None):
        self._node = node
        self._context = context
        self._extra = extra
        self._name = status_name(node, 'control loop')
        self._limits_name = status_name(node, 'limits')
        self._acting = {}      # the limits' counts in the last message
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self._timer = node.create_timer(period, self._publish,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _publish(self):
        try:
            report, hardware_id, values = self._report()
            extra = [] if self._extra is None else self._extra()
            extra = [*self._limits(hardware_id), *extra]
        except Exception as error:     # diagnostics must never take the node down
            self._node.get_logger().error(f'diagnostics failed: {type(error).__name__}: {error}',
                                          throttle_duration_sec=10.0)
            return
        msg = DiagnosticArray()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.status = [status_msg(report, self._name, hardware_id, values), *extra]
        self._publisher.publish(msg)

    def _limits(self, hardware_id):
        """[the limits' status], or [] before a model is in use."""
        controller = self._context.controller
        if controller is None:
            return []
        acting = controller.command_limits.acting()
        status = limits_status(acting, self._acting, self._limits_name, hardware_id)
        self._acting = acting
        return [status]

    def _report(self):
        """(HealthReport, the robot's name, further (key, text) values)."""
        context = self._context
        controller = context.controller
        guard = controller.age_guard if controller is not None else None
        name = namespaced_hardware_id(self._node, controller.model.name
                                      if controller is not None else '')
        oscillation = controller.oscillation if controller is not None else None
        softened = softened_values(controller.softened) if controller is not None else []
        return context.health.report(time.monotonic(), context.model_warnings, guard,
                                     oscillation), name, softened
