"""Joint-state intake (rbd_control/ros/controller/intake.py): how old a state is when answered;
and the StateLoop (rbd_control/ros/state_loop.py) that takes a subscription on its own thread
(a real rclpy node in this process)."""
import threading

import pytest
from sensor_msgs.msg import JointState

from rbd_control.ros.controller.intake import MAX_PLAUSIBLE_AGE, state_age
from rbd_control.ros.state_loop import StateLoop

WALL = 1.795e9          # a wall-clock time, s


@pytest.mark.parametrize('now, stamp, wall_now, published, expected', [
    (WALL, WALL - 0.020, WALL, WALL - 0.001, 0.020),    # late stamp on the node's clock
    (3.000, 3.000, WALL, WALL - 0.015, 0.015),           # sim time: /clock as late as the state
    (WALL, 2.5, WALL, WALL - 0.002, 0.002),              # sim-time stamp on a wall-time node
    (WALL, 0.0, WALL, WALL - 0.004, 0.004),              # unstamped
    (WALL, WALL + 0.001, WALL, 0.0, 0.0),                # /clock behind the state: 0, not negative
    (WALL, 2.5, WALL, 0.0, None),                        # neither clock usable
    (WALL, 0.0, WALL, 0.0, None),                        # nothing known
    (WALL, WALL - 2 * MAX_PLAUSIBLE_AGE, WALL, WALL - 0.003, 0.003),
])
def test_state_age_takes_the_larger_usable_age(now, stamp, wall_now, published, expected):
    age = state_age(now, stamp, wall_now, published)
    assert age == (None if expected is None else pytest.approx(expected, abs=1e-6))


def state_loop(ros_node, received, errors):
    def on_state(msg, info):
        received.append((threading.current_thread().name, msg.name[0], info))
    return StateLoop(lambda group: ros_node.node.create_subscription(
        JointState, 'loop_states', on_state, 100, callback_group=group),
        JointState, on_state, ros_node.context, errors.append)


def publish_and_collect(ros_node, received, count):
    publisher = ros_node.node.create_publisher(JointState, 'loop_states', 100)
    ros_node.wait_for_subscribers(publisher)
    for k in range(count):
        publisher.publish(JointState(name=[f'j{k}']))
        ros_node.spin_for(0.005)       # the executor runs too: it must leave these alone
    ros_node.wait_for(lambda: len(received) >= count, 10, f'{count} states')
    return publisher


def test_started_state_loop_takes_every_message_on_its_own_thread(ros_node):
    received, errors = [], []
    loop = state_loop(ros_node, received, errors)
    loop.start()
    try:
        publisher = publish_and_collect(ros_node, received, 20)
    finally:
        loop.stop()
    assert [name for _, name, _ in received] == [f'j{k}' for k in range(20)]
    assert {thread for thread, _, _ in received} == {'rbd_state_loop'}
    assert all(info['source_timestamp'] > 0 for _, _, info in received)   # MessageInfo kept
    publisher.publish(JointState(name=['after']))
    ros_node.spin_for(0.3)                       # stopped: nobody takes it, not the executor
    assert len(received) == 20 and not errors


def test_a_state_loop_not_started_leaves_its_subscription_to_the_executor(ros_node):
    received, errors = [], []
    state_loop(ros_node, received, errors)
    publish_and_collect(ros_node, received, 5)
    assert {thread for thread, _, _ in received} == {threading.current_thread().name}
