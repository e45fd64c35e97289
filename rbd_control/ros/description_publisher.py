"""rbd_description_publisher: robot_description from a parameter, as robot_state_publisher
publishes it (std_msgs/String, reliable, transient_local), for where robot_state_publisher is
not installed (arm.launch.py robot_state_publisher:=false) or not wanted (rbd_bringup).

    parameter  robot_description  the URDF text (read-only; arm.launch.py passes it)
    out        robot_description  std_msgs/String, latched: late subscribers get it too;
                                  relative, as robot_state_publisher's: /robot_description
                                  in the root namespace, /left/robot_description under
                                  __ns:=/left

It publishes no TF: rbd_controller and rbd_mujoco_sim need only the description.
"""
from __future__ import annotations

import sys

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node
from std_msgs.msg import String

from rbd_control.ros.parameter_binding import ConfigurationError
from rbd_control.ros.qos import ROBOT_DESCRIPTION_QOS
from rbd_control.ros.run import spin_node

TOPIC = "robot_description"


def make_description_publisher(node: Node, urdf: str):
    """Publish `urdf` on robot_description in `node`'s namespace the way robot_state_publisher
    does; keep the returned publisher (the message stays available while it lives)."""
    publisher = node.create_publisher(String, TOPIC, ROBOT_DESCRIPTION_QOS)
    publisher.publish(String(data=urdf))
    return publisher


class DescriptionPublisher(Node):
    def __init__(self) -> None:
        super().__init__("rbd_description_publisher")
        urdf = self.declare_parameter(
            "robot_description", "",
            ParameterDescriptor(type=ParameterType.PARAMETER_STRING, read_only=True,
                                description="URDF published on robot_description")).value
        if not urdf.strip():
            raise ConfigurationError("robot_description is empty: nothing to publish")
        self._publisher = make_description_publisher(self, urdf)
        self.get_logger().info(f"publishing {self._publisher.topic_name} ({len(urdf)} characters, "
                               "transient_local)")


USAGE = """usage: rbd_description_publisher --ros-args -p robot_description:=\"$(cat robot.urdf)\"

Publishes robot_description on robot_description (std_msgs/String, transient_local; in the
node's namespace: -r __ns:=/left), as robot_state_publisher does, without TF.
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(argv if argv is not None else sys.argv)
    ours = argv[:argv.index("--ros-args")] if "--ros-args" in argv else argv
    if "-h" in ours or "--help" in ours:
        sys.stdout.write(USAGE)
        return 0
    return spin_node("rbd_description_publisher", DescriptionPublisher, argv)


if __name__ == "__main__":
    sys.exit(main())
