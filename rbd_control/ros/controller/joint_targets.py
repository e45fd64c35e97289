"""The joint_impedance topics of rbd_controller: messages in, nothing else.

  in   ~/target_joint_state      sensor_msgs/JointState: the streamed target by joint name
                                 (a subset keeps the other joints' targets); position
                                 required, velocity optional (empty, or one per name),
                                 effort ignored
  in   ~/target_joint_stiffness  sensor_msgs/JointState used as a named map: position[i] is
                                 the stiffness K of name[i] (N m/rad), velocity (optional) its
                                 damping ratio; it applies from its arrival on (variable
                                 impedance). A companion topic, not a convention on the
                                 target's own fields, so a plain JointState (a leader arm's
                                 /joint_states) is a target as it is.

The law, the shaping of the target and every check live in rbd_control.control
(Controller.set_joint_target / set_joint_stiffness, laws/joint_impedance.py).
"""
from sensor_msgs.msg import JointState

from rbd_control.ros.controller.targets import apply_target


class JointTargetTopics:
    """Subscriptions of mode joint_impedance for one ControllerNode; the ControllerContext
    gives the controller, its lock, its time and the throttled log lines."""

    def __init__(self, node, context):
        self._context = context
        node.create_subscription(JointState, '~/target_joint_state', self._on_target, 10)
        node.create_subscription(JointState, '~/target_joint_stiffness', self._on_stiffness,
                                 10)

    def _on_target(self, msg):
        def apply(controller, now):
            controller.set_joint_target(list(msg.name), list(msg.position),
                                        list(msg.velocity), now)
        apply_target(self._context, 'joint target', apply)

    def _on_stiffness(self, msg):
        def apply(controller, now):
            controller.set_joint_stiffness(list(msg.name), list(msg.position),
                                           list(msg.velocity))
        apply_target(self._context, 'joint stiffness', apply)
