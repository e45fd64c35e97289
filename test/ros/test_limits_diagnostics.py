"""The '<node>: limits' status on /diagnostics (ros/controller/diagnostics.py limits_status):
WARN naming each joint and limit that acted since the last message, with its count; the
counts since start as key/value pairs. No node."""
from diagnostic_msgs.msg import DiagnosticStatus

from rbd_control.ros.controller.diagnostics import limits_status


def test_a_limit_that_acted_is_a_warn_naming_the_joint_and_the_limit():
    first = {("elbow", "position"): 12, ("wrist_1", "torque_rate"): 3}
    status = limits_status(first, {}, "rbd_controller: limits", "rbd_arm")
    assert status.level == DiagnosticStatus.WARN
    assert "elbow position x12" in status.message and "wrist_1 torque_rate x3" in status.message
    assert {(v.key, v.value) for v in status.values} == {("elbow position", "12"),
                                                         ("wrist_1 torque_rate", "3")}
    later = {("elbow", "position"): 15, ("wrist_1", "torque_rate"): 3}
    status = limits_status(later, first, "rbd_controller: limits")
    assert status.level == DiagnosticStatus.WARN and status.message.endswith("elbow position x3")
    quiet = limits_status(later, later, "rbd_controller: limits")
    assert quiet.level == DiagnosticStatus.OK and quiet.message == "no limit acting"
