"""rbd_controller, the rclpy adapter of rbd_control.control: node.py wires the features (one
module each) around state_path.py, the path of a joint state to its effort command.
"""
