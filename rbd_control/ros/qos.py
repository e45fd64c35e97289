"""QoS profiles of rbd_control's topics, one home for each."""
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

# As robot_state_publisher publishes it: a late subscriber still gets the last one.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# joint_states may come at 1 kHz and every state is to be answered: the queues ride
# out a stall of the Python process (GC, a busy CPU) of up to a second. Depth does
# not add latency while the node keeps up; under sustained overload the watchdog
# cannot help either way, so a short queue would only drop states.
JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
COMMAND_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
