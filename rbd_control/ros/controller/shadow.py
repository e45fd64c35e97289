"""Shadow mode on rbd_controller's interface (the core: rbd_control/control/model/shadow.py).

With mode:=shadow the controller commands nothing, ever: no command on command_topic, no safe
action's either (StatePath.publish). The robot moves under its own controller (its teach
pendant, its driver's trajectory controller) and this node says, per joint state, what the
model predicts its joints carry:

  out  ~/shadow_effort   sensor_msgs/JointState, stamped with the state's stamp, joints in
                         command order: position and velocity as measured, effort = the
                         model's torque there, H(q) qdd + C(q, qd) qd + g(q) + friction(qd),
                         qdd a low-passed finite difference of the measured qd
  out  ~/model_error     diagnostic_msgs/DiagnosticStatus every REPORT_PERIOD: per joint the
                         RMS and the peak of (model - joint_states' effort) over the last
                         shadow.window seconds of states, N m (N)
  out  /diagnostics      the same status as one more line of the node's DiagnosticArray

JointState for the prediction, not Float64MultiArray: it names the joints and carries the
state's stamp, so PlotJuggler or rqt_plot lays it over /joint_states' effort joint by joint.
DiagnosticStatus for the error, as ~/contact_state: its key/values name each figure, and
rqt_robot_monitor shows it as it is. Trajectories are refused in shadow mode (not a tracking
mode): the robot follows its own controller, and the model is checked at the state it
measures.
"""
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState

from rbd_control.control.model.shadow import ModelError
from rbd_control.ros.controller.diagnostics import status_name
from rbd_control.ros.conversions import fill_joint_state

__all__ = ['ShadowTopics']

REPORT_PERIOD = 0.5     # s, steady time
OK, WARN = (bytes([level]) for level in (0, 1))


class ShadowTopics:
    """~/shadow_effort and ~/model_error of one ControllerNode; the ControllerContext gives
    the controller, its lock and shadow.window."""

    def __init__(self, node, context):
        self._context = context
        self._effort_pub = node.create_publisher(JointState, '~/shadow_effort', 10)
        self._error_pub = node.create_publisher(DiagnosticStatus, '~/model_error', 10)
        self._msg = None
        self._error = ModelError(context.value('shadow.window'))
        self._shadowing = False
        self._name = status_name(node, 'model error')
        node.create_timer(REPORT_PERIOD, self._report,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def publish(self, now, command, stamp, names, effort):
        """After a shadow command (the state thread, under the lock): the prediction out, its
        error against the state's effort into the window."""
        if command.mode != 'shadow':
            self._shadowing = False
            return
        if not self._shadowing:                 # (re)entering shadow mode: a fresh window
            self._error.clear()
            self._shadowing = True
        msg = self._msg
        if msg is None or tuple(msg.name) != command.joint_names:
            msg = self._msg = JointState(name=list(command.joint_names))
        self._effort_pub.publish(fill_joint_state(msg, stamp, position=command.actual_q,
                                                  velocity=command.actual_qd,
                                                  effort=command.feedforward))
        self._error.add(now, command.joint_names, command.feedforward, names, effort)

    def _status(self):
        """The window's DiagnosticStatus, None outside shadow mode."""
        controller = self._context.controller
        if controller is None or controller.mode != 'shadow':
            return None
        self._error.window = self._context.value('shadow.window')
        report = self._error.report()
        missing = self._error.missing_effort
        values = [('window_s', f'{self._error.window:g}'),
                  ('states without effort', str(missing))]
        if report is None:
            message = ('no joint state with an effort of every joint yet' if missing
                       else 'no joint state yet')
            return DiagnosticStatus(level=WARN if missing else OK, name=self._name,
                                    message=message,
                                    values=[KeyValue(key=k, value=v) for k, v in values])
        worst = int(report.rms.argmax())
        values += [('samples', str(report.samples)), ('span_s', f'{report.span:.3f}')]
        for joint, rms, peak in zip(report.joint_names, report.rms, report.peak):
            values += [(f'{joint} rms', f'{rms:.6g}'), (f'{joint} peak', f'{peak:.6g}')]
        message = (f'model error over {report.span:.2f} s: largest RMS '
                   f'{report.rms[worst]:.3g} at {report.joint_names[worst]}')
        return DiagnosticStatus(level=OK, name=self._name, message=message,
                                values=[KeyValue(key=k, value=v) for k, v in values])

    def _report(self):
        with self._context.lock:
            status = self._status()
        if status is not None:
            self._error_pub.publish(status)

    def diagnostics(self):
        """The model-error line of /diagnostics: [status] in shadow mode, [] otherwise."""
        with self._context.lock:
            status = self._status()
        return [] if status is None else [status]
