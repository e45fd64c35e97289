"""Trajectories with joint_trajectory_controller's semantics: message.py (the input, shaped like
trajectory_msgs/JointTrajectory), validation.py (JTC's acceptance rules), polynomials.py (the
segments and their sampling), plan.py (the blend and the plan of every joint), path_limits.py
(the interpolated path against the position limits), tolerances.py (path and goal tolerances).
"""
