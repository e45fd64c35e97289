"""ROS 2 adapters. The only package of rbd_control that imports rclpy
(besides the simulator's node in rbd_control/sim/ros_node.py)."""
