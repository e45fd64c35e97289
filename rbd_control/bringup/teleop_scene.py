"""The teleoperation scene, ROS-free: the hand's scripted path, the box on the follower's way,
the stream's period, the feedback gain and the follower's contact levels. One home for
both runs of it: the lock-step one without ROS (rbd_control/demo/teleop.py) and
`rbd_bringup --teleop` through the nodes (bringup/teleop.py). It lives in bringup/ because
the bringup may not import the demo (ARCHITECTURE.md's layers). No numpy at import:
rbd_bringup's arguments read FEEDBACK_CHOICES, and --help answers at once.

    path    an ellipse in the horizontal plane through tool0's start position, one lap in
            LAP_S, counter-clockwise from its +x end; the hand (sim/hand.py) pulls tool0
            along it at tool0's start orientation
    box     its +x face BOX_INSET inside the path's -x end, at tool0's height: the follower's
            tool0 (a sphere of PROBE_RADIUS) presses on it around half a lap in
"""
from __future__ import annotations

import math

LAP_S = 20.0              # s, one lap of the hand's path
PATH_RADII = (0.12, 0.08)  # m, the ellipse's half axes (x, y) around tool0's start position
STREAM_PERIOD = 0.02      # s: targets at 50 Hz
FEEDBACK_GAIN = 1.0       # of the follower's tau_ext, added to the leader's joints
# when the leader gets it: always, only while the follower flags a contact, never
FEEDBACK_CHOICES = ("on", "contact", "off")
BOX_HALF = 0.05           # m
BOX_INSET = 0.01          # m the box's face stands inside the path's -x end
PROBE_RADIUS = 0.03       # m, the sphere on the follower's tool0
# the follower's contact.torque_thresholds: a teleoperated touch is light (the follower's
# spring presses with K times the clipped error), so contact is flagged from 1 N m at constant
# velocity (the default 5 N m is set for a trajectory's residual in real time)
CONTACT_LEVELS = [2.0, 20.0, 1.0, 10.0]


def path_point(start, t):
    """Where the hand pulls tool0 at time t: an ellipse through `start` (tool0's start
    position), its +x end, counter-clockwise; the -x end at half a lap."""
    phase = 2.0 * math.pi * t / LAP_S
    return start + [PATH_RADII[0] * (math.cos(phase) - 1.0), PATH_RADII[1] * math.sin(phase),
                    0.0]


def obstacle(model, start, link):
    """The box: its +x face BOX_INSET inside the path's -x end, at the height of `link`
    (the hand's and the probe's) in the pose `start` ({joint: rad})."""
    import numpy as np

    from rbd_control.dynamics import frame_pose
    from rbd_control.sim.mujoco_model import Obstacle

    q = np.array([start[j] for j in model.joint_names])
    far = frame_pose(model, q, link)[:3, 3] - [2.0 * PATH_RADII[0], 0.0, 0.0]
    centre = far - [BOX_HALF + PROBE_RADIUS - BOX_INSET, 0.0, 0.0]
    return Obstacle(centre, [BOX_HALF] * 3, link, PROBE_RADIUS)
