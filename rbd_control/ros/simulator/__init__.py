"""rbd_mujoco_sim, the rclpy adapter of rbd_control.sim: node.py (SimulatorNode: joint_states
and /clock out, effort commands in), lockstep.py (one step per command) and pacing.py (real
time), external_wrench.py (~/external_wrench), contact_truth.py (the obstacle's contact truth).
"""
