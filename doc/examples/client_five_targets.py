"""Five pose targets from a plain script, the arm's state read at 100 Hz in between, as a
policy would: no rclpy here, only ArmClient (doc/howto/client.md).

Needs rbd_controller with an ee_link (tool0 on the default arm) and a robot or a simulator
publishing joint_states, e.g.

    rbd_bringup --mode cartesian_impedance     # until Ctrl-C; ee_link: tool0

Each target is 3 cm from the start pose, held for HOLD_S of the robot's time (the states'
stamps: the same script runs against a real arm, a simulator in real time or one in lock
step), then the tool's distance from it is printed.
"""
import time

import numpy as np

from rbd_control.client import ArmClient

OFFSETS_M = 0.03 * np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0]])
HOLD_S = 1.0         # robot time on each target: its 0.5 s approach, then settling
PERIOD_S = 0.01      # 100 Hz
GIVE_UP_S = 30.0     # wall time on one target, should the robot's clock stop


def stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def position(pose):
    p = pose.pose.position
    return np.array([p.x, p.y, p.z])


with ArmClient() as arm:
    if arm.mode() != 'cartesian_impedance':
        arm.set_mode('cartesian_impedance')
    start = arm.wait_for_tool_pose()      # published once the mode is active
    o = start.pose.orientation
    orientation = (o.x, o.y, o.z, o.w)    # kept: only the position moves
    reads, stamps, began = 0, set(), time.monotonic()
    for k, offset in enumerate(OFFSETS_M, start=1):
        goal = position(start) + offset
        arm.send_pose_target(goal, orientation)
        sent_at, given_up = stamp(arm.wait_for_state()), time.monotonic() + GIVE_UP_S
        while time.monotonic() < given_up:
            state = arm.state()
            reads += 1
            stamps.add(stamp(state))
            if stamp(state) - sent_at >= HOLD_S:
                break
            time.sleep(PERIOD_S)
        error = np.linalg.norm(position(arm.tool_pose()) - goal)
        print(f'target {k}: {np.round(goal, 3)} m, reached within {error * 1e3:.2f} mm')
    elapsed = time.monotonic() - began
    print(f'read {reads} states in {elapsed:.2f} s ({reads / elapsed:.0f} per second), '
          f'{len(stamps)} of them new')
