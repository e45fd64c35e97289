"""rbd_control.params — the declared inputs, and nothing heavier than the standard library.

    table.py       Parameter / ParameterTable: one entry per parameter (type, default,
                   description, read-only or runtime, range, choices, check)
    controller.py  rbd_controller's table (CONTROLLER_PARAMETERS, MODES, TRACKING_MODES)
    simulator.py   rbd_mujoco_sim's table (SIM_PARAMETERS)
    bounds.py      every plausibility bound (what no robot has), shared by the tables and the core
    docs.py        the documentation's parameter reference, generated from the tables

No numpy, numba or rclpy: launch files, --help and the documentation read it instantly
(test/test_layout.py checks that importing it loads no kernel).
"""
