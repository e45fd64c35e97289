"""The latency floor for bench/latency.py: the most trivial rclpy node in rbd_controller's place.

It subscribes to joint_states with rbd_controller's QoS and publishes each state's positions
as a std_msgs/Float64MultiArray on /effort_controller/commands: one message in, one out, no
computation, rclpy's default executor (or `--executor state_thread`: the states taken by
rbd_controller's StateLoop, ros/state_loop.py). Whatever latency and CPU it shows is
rclpy + Fast DDS.

    python bench/echo_node.py [--executor single_threaded|state_thread|events]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rclpy  # noqa: E402
from rclpy.executors import ExternalShutdownException  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from rbd_control.ros.qos import COMMAND_QOS, JOINT_STATE_QOS  # noqa: E402
from rbd_control.ros.run import executor_option, make_executor  # noqa: E402
from rbd_control.ros.state_loop import StateLoop  # noqa: E402


def main():
    kind, argv = executor_option(sys.argv, default='single_threaded')
    rclpy.init(args=argv)
    node = rclpy.create_node('bench_echo')
    publisher = node.create_publisher(Float64MultiArray, '/effort_controller/commands',
                                      COMMAND_QOS)

    def echo(msg, info=None):
        publisher.publish(Float64MultiArray(data=msg.position))

    loop = StateLoop(lambda group: node.create_subscription(
        JointState, 'joint_states', echo, JOINT_STATE_QOS, callback_group=group),
        JointState, echo, node.context, print)
    if kind == 'state_thread':
        loop.start()
    elif kind == 'events':
        loop.without_info()
    executor = make_executor(kind)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        loop.stop()
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
