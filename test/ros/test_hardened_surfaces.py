"""rbd_controller's newer surfaces (keepalive, ~/payload, Cartesian mode, action server) under
hostile input, through the node in its own process: every case answered with a refusal that
names what is wrong, the keepalive alive, and the commands finite, within the URDF limits and
without gaps."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from geometry_msgs.msg import InertiaStamped
from std_msgs.msg import Float64MultiArray

import ros_helpers as helpers
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf

NODE, MODULE = 'rbd_controller', 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
URDF = default_arm_urdf()
MODEL = load_urdf(URDF)
JOINTS = list(MODEL.joint_names)
LIMITS = np.asarray(MODEL.effort_limit)
HOLD = np.full(6, 0.1)
SLOW_START = str(Path(__file__).with_name('slow_start_node.py'))


def test_the_keepalive_survives_a_start_up_where_it_runs_before_the_state_path(spawn_node,
                                                                              ros_node):
    # the keepalive's beat is old once the description is parsed: a keepalive started before
    # the state path exists would run the watchdog while it is being built
    process = spawn_node(SLOW_START, {'robot_description': URDF, 'state_timeout': 0.02})
    process.wait_for_log("model 'rbd_arm'", timeout=60)
    ros_node.wait_for_publishers(COMMANDS)
    ros_node.spin_for(0.5)
    log = process.log()
    assert 'Traceback' not in log and 'Error' not in log, log
    assert process.alive()
