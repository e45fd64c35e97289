"""QoS profiles of rbd_control's topics, one home for each."""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

# As robot_state_publisher publishes it: a late subscriber still gets the last one.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# joint_states may come at 1 kHz; after a stall only the newest queued state is answered
# (ros/intake.py), so a short queue loses nothing the controller would use.
JOINT_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
COMMAND_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
