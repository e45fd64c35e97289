"""rbd_controller's log names why, through the node in its own process: six different
malformed ~/payload messages in a burst give a line for each reason (control/throttle.py
throttles per reason); joint states refused for a missing effort field say so, not "no joint
state" while states arrive."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import InertiaStamped

import ros_helpers as helpers
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf

MODULE = 'rbd_control.ros.controller.node'
URDF = default_arm_urdf()
JOINTS = list(load_urdf(URDF).joint_names)


def payload(link, mass, ixx=0.01, com_z=0.0):
    msg = InertiaStamped()
    msg.header.frame_id = link
    msg.inertia.m, msg.inertia.com.z = mass, com_z
    msg.inertia.ixx = msg.inertia.iyy = msg.inertia.izz = ixx
    return msg


MALFORMED = [   # (message, what its line names)
    (payload('tool0', float('nan')), 'got nan'),
    (payload('tool0', -1.0), 'got -1.0'),
    (payload('tool0', 1.0, ixx=-0.01), 'not physically consistent'),
    (payload('base_link', 1.0), "link 'base_link'"),
    (payload('', 1.0), "link ''"),
    (payload('tool0', 1.0, com_z=float('inf')), 'com must be'),
]


def test_six_different_payload_refusals_are_each_named(spawn_node, ros_node):
    process = spawn_node(MODULE, {'robot_description': URDF})
    process.wait_for_log("model 'rbd_arm'", timeout=60)
    publisher = ros_node.node.create_publisher(InertiaStamped, '/rbd_controller/payload', 10)
    ros_node.wait_for_subscribers(publisher)
    for msg, _ in MALFORMED:                         # six messages in 0.6 s
        publisher.publish(msg)
        ros_node.spin_for(0.1)
    process.wait_for_log(MALFORMED[-1][1], timeout=10)
    log = process.log()
    for _, named in MALFORMED:
        assert named in log, (named, log)
    assert 'Traceback' not in log


def test_states_without_effort_say_the_effort_field_is_missing(spawn_node, ros_node):
    from builtin_interfaces.msg import Time
    process = spawn_node(MODULE, {'robot_description': URDF, 'contact.enabled': True,
                                  'contact.use_measured_effort': True, 'state_timeout': 0.05})
    process.wait_for_log("model 'rbd_arm'", timeout=60)
    states = ros_node.node.create_publisher(helpers.JointState, 'joint_states', 10)
    ros_node.wait_for_subscribers(states)
    for k in range(400):               # 2 s of states at 200 Hz; after 0.5 s without effort
        t = 1.0 + 0.005 * k
        state = helpers.joint_state(JOINTS, np.full(6, 0.1), np.zeros(6),
                                    Time(sec=int(t), nanosec=int((t % 1) * 1e9)))
        if k < 100:
            state.effort = [0.0] * 6
        states.publish(state)
        ros_node.spin_for(0.005)
    log = process.log()
    assert 'the joint state has no efforts (its effort field is empty)' in log, log
    assert 'every joint state refused for over state_timeout (0.05 s), the last: ' in log, log
    assert 'no joint state for over state_timeout' not in log, log


def test_a_bandwidth_the_design_cannot_meet_is_refused_by_name(spawn_node):
    """bandwidth_hz 1e-300 was inside the table's range (0, 1000] and refused later, as the
    model, for "no default gains ... with a state period of 0.004 s": the table names it."""
    process = spawn_node(MODULE, {'robot_description': URDF, 'bandwidth_hz': 1e-300})
    process.wait_for_log('bandwidth_hz', timeout=20)
    log = process.log()
    assert 'no default gains' not in log and 'Traceback' not in log, log


def test_states_to_a_node_without_a_model_are_an_error_on_diagnostics(spawn_node, ros_node):
    """A refused description leaves the node up without a model: while states arrive,
    /diagnostics says ERROR and why nothing is commanded."""
    from builtin_interfaces.msg import Time
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    broken = URDF.replace('<joint ', '<joint type="no_such_type" ', 1)
    process = spawn_node(MODULE, {'robot_description': broken})
    diagnostics = ros_node.collect(DiagnosticArray, '/diagnostics')
    process.wait_for_log('rejected robot description', timeout=20)
    states = ros_node.node.create_publisher(helpers.JointState, 'joint_states', 10)
    ros_node.wait_for_subscribers(states)

    def no_model_error():
        states.publish(helpers.joint_state(JOINTS, np.full(6, 0.1), np.zeros(6), Time(sec=1)))
        return [s.message for m in diagnostics for s in m.status
                if s.level == DiagnosticStatus.ERROR and 'no model is in use' in s.message]
    ros_node.wait_for(no_model_error, 10.0, '/diagnostics: ERROR, no model')
    assert 'description refused' in no_model_error()[-1], no_model_error()
