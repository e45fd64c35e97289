"""The control laws and their gains: joint.py (gravity compensation, feedforward PD, computed
torque), loop_design.py (the discrete-time design the defaults are sized on, and what it
softens), gains.py (model-derived default gains), per_joint.py (a user's per-joint values),
gain_table.py (where each joint's gains come from), cartesian.py + cartesian_mode.py + pose.py
(Cartesian impedance, its targets, quaternions).
"""
