"""Leader and follower, ROS-free and in lock step: two copies of the default arm in MuJoCo, each
under its own Controller, the leader's states streamed to the follower as joint targets.

    leader    gravity_compensation: weightless, so a hand moves it. The hand is the plant's
              (sim/hand.py, its default HandGains: a spring-damper and a grip evaluated at
              every physics step) holding tool0 at a point that runs along a scripted path
              (an ellipse in the horizontal plane through the start pose, one lap in LAP_S)
              and at tool0's orientation there.
    stream    every STREAM_PERIOD (50 Hz) the leader's measured q and qd become the follower's
              joint target (Controller.set_joint_target: what rbd_controller's
              ~/target_joint_state takes).
    follower  joint_impedance (laws/joint_impedance.py: its filter, clip, timeout and the
              torque rate), contact on with reaction none (CONTACT_LEVELS), and a box on its
              path that the leader's world does not have: the follower's tool0 presses on it
              around the path's -x end (half a lap in), and its momentum observer sees it.
    feedback  optional: the follower's estimated external torque (tau_ext), times
              FEEDBACK_GAIN, added to the leader's joints, so the hand feels the box.

The scene (path, box, stream period, feedback gain, contact levels) is bringup/teleop_scene.py's,
shared with `rbd_bringup --teleop`, which runs it through the nodes in real time.
`simulate` returns the recorded run; test/control/test_leader_follower.py holds it to the
follower's RMS error of the leader, the detection on the follower and the feedback on the
leader. The loop is declared as it runs (a state every 1 ms, answered within 1 ms). No rclpy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_control.bringup.teleop_scene import (CONTACT_LEVELS, FEEDBACK_GAIN, LAP_S,
                                              STREAM_PERIOD, obstacle, path_point)
from rbd_control.bringup.waypoints import WORK_JOINTS
from rbd_control.demo.cartesian import EE_LINK

LOOP = dict(expected_state_period=0.001, expected_delay=0.001)


@dataclass
class TeleopRun:
    time: np.ndarray          # s
    leader: np.ndarray        # (samples, joints) rad
    follower: np.ndarray      # (samples, joints) rad
    contact_torque: np.ndarray    # (samples, joints) the follower's true contact torque, N m
    tau_ext: np.ndarray       # (samples, joints) the follower's estimate, N m
    feedback: np.ndarray      # (samples, joints) what the leader was given of it, N m
    contact_flagged: np.ndarray   # (samples,) the follower's contact flag
    joints: tuple

    @property
    def error(self) -> np.ndarray:
        """The follower's error of the leader, per sample and joint (rad)."""
        return self.leader - self.follower

    def rms(self) -> float:
        return float(np.sqrt(np.mean(np.square(self.error))))


def simulate(urdf: str, model, seconds: float = LAP_S, feedback: bool = True) -> TeleopRun:
    """The run (module doc), from rest at the work pose, for `seconds` of sim time."""
    from rbd_control.control import Controller, ControllerConfig
    from rbd_control.control.contact import ContactConfig
    from rbd_control.control.laws.pose import quat_from_matrix
    from rbd_control.dynamics import frame_pose
    from rbd_control.sim.hand import HandGains
    from rbd_control.sim.simulator import Simulator

    names = model.joint_names
    leader_sim = Simulator(urdf, commanded_joints=names, initial_positions=WORK_JOINTS)
    follower_sim = Simulator(urdf, commanded_joints=names, initial_positions=WORK_JOINTS,
                             obstacles=[obstacle(model, WORK_JOINTS, EE_LINK)])
    leader = Controller(model, ControllerConfig(mode="gravity_compensation", **LOOP))
    follower = Controller(model, ControllerConfig(
        mode="joint_impedance", contact=ContactConfig(
            reaction="none", wrench_link=EE_LINK, torque_thresholds=CONTACT_LEVELS), **LOOP))
    start = frame_pose(model, leader_sim.state().position, EE_LINK)
    origin, grip = start[:3, 3], quat_from_matrix(start[:3, :3])
    record = {key: [] for key in ("time", "leader", "follower", "contact", "tau_ext",
                                  "feedback", "flag")}
    fed = np.zeros(len(names))
    next_target = 0.0
    while leader_sim.time < seconds:
        lead, follow = leader_sim.state(), follower_sim.state()
        now = lead.time
        leader_sim.set_command(leader.update(now, names, lead.position, lead.velocity).tau)
        if now >= next_target - 1e-9:      # the stream: the leader's state at 50 Hz
            follower.update(now, names, follow.position, follow.velocity)  # active first
            follower.set_joint_target(names, lead.position, lead.velocity, now)
            next_target += STREAM_PERIOD
        command = follower.update(now, names, follow.position, follow.velocity)
        follower_sim.set_command(command.tau)
        leader_sim.set_hand(EE_LINK, path_point(origin, now), grip, HandGains())
        tau_ext = follower.contact.tau_ext.copy()
        fed = FEEDBACK_GAIN * tau_ext if feedback else np.zeros(len(names))
        leader_sim.set_disturbance(dict(zip(names, map(float, fed))))
        for key, value in (("time", now), ("leader", lead.position), ("follower",
                           follow.position), ("contact", follower_sim.contact_torque()),
                           ("tau_ext", tau_ext), ("feedback", fed),
                           ("flag", follower.contact.detector.in_contact)):
            record[key].append(np.copy(value))
        leader_sim.step()
        follower_sim.step()
    return TeleopRun(np.array(record["time"]), np.array(record["leader"]),
                     np.array(record["follower"]), np.array(record["contact"]),
                     np.array(record["tau_ext"]), np.array(record["feedback"]),
                     np.array(record["flag"], dtype=bool), tuple(names))
