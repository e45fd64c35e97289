"""rbd_mujoco_sim, the rclpy adapter of rbd_control.sim: node.py (joint_states and /clock out,
effort commands in, lockstep or real time), external_wrench.py (~/external_wrench).
"""
