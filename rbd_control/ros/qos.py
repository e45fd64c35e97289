"""QoS profiles of rbd_control's topics, one home for each."""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

# As robot_state_publisher publishes it: a late subscriber still gets the last one.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# joint_states may come at 1 kHz; after a stall only the newest queued state is answered
# and the others are counted as coalesced (ros/controller/intake.py, /diagnostics). The deep queue
# keeps that count honest through a stall of up to a second; a stale state costs only
# its take (microseconds), not a control step.
JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
COMMAND_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
