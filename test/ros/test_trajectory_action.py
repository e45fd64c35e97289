"""rbd_controller without control_msgs: the action is off with one log line, the rest runs."""
import time

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from ros_helpers import RELIABLE_DEEP, joint_state

MODULE = 'rbd_control.ros.controller.node'
URDF = default_arm_urdf()
JOINTS = list(load_urdf(URDF).joint_names)
OFF = '~/follow_joint_trajectory and ~/controller_state are off: control_msgs is not importable'


def test_without_control_msgs_the_action_is_off_with_one_log_line(spawn_node, ros_node, ros_env,
                                                                  tmp_path):
    hidden = tmp_path / 'hide' / 'control_msgs'
    hidden.mkdir(parents=True)
    (hidden / '__init__.py').write_text("raise ImportError('control_msgs hidden by the test')\n")
    env = {'PYTHONPATH': f"{hidden.parent}:{ros_env['PYTHONPATH']}"}
    process = spawn_node(MODULE, {'robot_description': URDF, 'state_timeout': 5.0}, env=env)
    process.wait_for_log("model 'rbd_arm'", timeout=60)
    states = ros_node.node.create_publisher(JointState, 'joint_states', 10)
    commands = ros_node.collect(Float64MultiArray, '/effort_controller/commands', RELIABLE_DEEP)
    end = time.monotonic() + 30.0
    while not commands:
        assert time.monotonic() < end and process.alive(), process.log()
        states.publish(joint_state(JOINTS, np.full(len(JOINTS), 0.1), np.zeros(len(JOINTS))))
        ros_node.spin_for(0.1)
    log = process.log()
    assert log.count(OFF) == 1, log
    assert 'control_msgs hidden by the test' in log
    names = [name for name, _ in ros_node.node.get_topic_names_and_types()]
    assert '/rbd_controller/controller_state' not in names
