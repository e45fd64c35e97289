"""The ROS 2 adapters: every rclpy node of rbd_control. controller/ (rbd_controller),
simulator/ (rbd_mujoco_sim), and what they share: conversions.py (messages <-> arrays, stamps
<-> seconds), qos.py, run.py (init, executor choice, spin) and parameter_binding.py (a
parameter table -> declarations, descriptors, validation)."""
