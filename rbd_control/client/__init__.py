"""A short Python client of rbd_controller for policies, notebooks and scripts: ArmClient sends
joint and pose targets, sets the mode and reads the arm's state, with no ROS knowledge needed
by its user (it runs rclpy in a context and a thread of its own). doc/howto/client.md shows it.
"""
from rbd_control.client.arm import ArmClient

__all__ = ["ArmClient"]
