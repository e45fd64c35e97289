"""rbd_control.identification: inertial parameters, friction and payload from recorded motion.

ROS-free. tau = Y(q, qd, qdd) pi + Y_f(qd) phi, fitted by weighted least squares with every body
kept physically consistent (see fit.py).
"""
