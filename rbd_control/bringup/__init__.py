"""One-command bringup without ros2 launch: launcher.py (rbd_bringup), processes.py (its child
processes), excite.py (--excite: record an identification run), waypoints.py (the default arm's
home pose and demo trajectory, shared by bringup, the demo and the tests).
"""
