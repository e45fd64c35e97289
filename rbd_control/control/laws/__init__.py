"""The control laws and their gains: joint.py (gravity compensation, feedforward PD, computed
torque), gains.py (model-derived default gains), gain_table.py (where each joint's gains come
from), cartesian.py + cartesian_mode.py + pose.py (Cartesian impedance, its targets, quaternions).
"""
