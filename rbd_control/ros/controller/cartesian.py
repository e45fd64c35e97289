"""The cartesian_impedance topics of rbd_controller: messages in and out, nothing else.

  in   ~/target_pose     geometry_msgs/PoseStamped: the end effector's goal pose. The frame
                         must be the base: the URDF root link, a link welded to it (e.g.
                         base_link), or "" (= the root). Any other frame is refused with the
                         reason in the log (no tf lookups here).
  in   ~/target_wrench   geometry_msgs/WrenchStamped: feedforward wrench at the end effector,
                         same frame rule.
  out  ~/current_pose    geometry_msgs/PoseStamped of the end effector (root frame), and
  out  ~/desired_pose    the interpolated target it is pulled towards, both stamped with the
                         joint state's stamp, while the mode is cartesian_impedance.

The law, the interpolation and every check of a target live in rbd_control.control
(Controller.set_pose_target / set_wrench_target).
"""
import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped

from rbd_control.control import TrajectoryError
from rbd_control.control.laws.pose import quat_from_matrix, quat_multiply
from rbd_control.dynamics import frame_pose
from rbd_control.ros.controller.targets import apply_target


def mode_refusal(by_name, ee_link):
    """Why a parameter set would leave cartesian_impedance without an end effector, or None."""
    if by_name.get('mode') == 'cartesian_impedance' and not by_name.get('ee_link', ee_link):
        return 'mode cartesian_impedance needs the ee_link parameter (a URDF link name)'
    return None


class CartesianTopics:
    """Subscriptions and publishers of the Cartesian mode for one ControllerNode; the
    ControllerContext gives the controller, its time and the throttled log lines."""

    def __init__(self, node, context):
        self._context = context
        node.create_subscription(PoseStamped, '~/target_pose', self._on_pose, 10)
        node.create_subscription(WrenchStamped, '~/target_wrench', self._on_wrench, 10)
        self._current = node.create_publisher(PoseStamped, '~/current_pose', 10)
        self._desired = node.create_publisher(PoseStamped, '~/desired_pose', 10)
        self._msgs = (PoseStamped(), PoseStamped())

    def publish(self, stamp):
        """After a command: the pose and target of that step (cartesian_impedance only)."""
        controller = self._context.controller
        if controller is None or controller.mode != 'cartesian_impedance':
            return
        state = controller.cartesian_state
        if state is None:
            return
        frame = controller.model.link_names[0]
        for msg, publisher, position, quaternion in (
                (self._msgs[0], self._current, state.position, state.quaternion_xyzw),
                (self._msgs[1], self._desired, state.target_position,
                 state.target_quaternion_xyzw)):
            msg.header.stamp, msg.header.frame_id = stamp, frame
            p, o = msg.pose.position, msg.pose.orientation
            p.x, p.y, p.z = (float(x) for x in position)
            o.x, o.y, o.z, o.w = (float(x) for x in quaternion)
            publisher.publish(msg)

    def _base_from(self, controller, frame_id):
        """World <- frame_id for a base frame; TrajectoryError naming the frame otherwise."""
        model = controller.model
        if frame_id in ('', model.link_names[0]):
            return np.eye(4)
        if model.link_body.get(frame_id, 0) < 0:   # welded to the base: a constant transform
            return frame_pose(model, np.zeros(model.nq), frame_id)
        base = [link for link in model.link_names if model.link_body[link] < 0]
        raise TrajectoryError(f"frame '{frame_id}' is not the base frame; give the target in "
                              f"one of {base} (or leave frame_id empty)")

    def _on_pose(self, msg):
        def apply(controller, now):
            T = self._base_from(controller, msg.header.frame_id)
            p, o = msg.pose.position, msg.pose.orientation
            position = T[:3, :3] @ [p.x, p.y, p.z] + T[:3, 3]
            # q_world = q_frame * q (the frame's orientation, then the goal's in it)
            quaternion = quat_multiply(quat_from_matrix(T[:3, :3]), [o.x, o.y, o.z, o.w])
            controller.set_pose_target(position, quaternion, now)
        apply_target(self._context, 'target pose', apply)

    def _on_wrench(self, msg):
        def apply(controller, now):
            R = self._base_from(controller, msg.header.frame_id)[:3, :3]
            f, t = msg.wrench.force, msg.wrench.torque
            wrench = np.concatenate([R @ [f.x, f.y, f.z], R @ [t.x, t.y, t.z]])
            controller.set_wrench_target(wrench, now)
        apply_target(self._context, 'target wrench', apply)
