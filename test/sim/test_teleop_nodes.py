"""Leader and follower through the real nodes, in real time: `rbd_bringup --namespace leader`
in gravity_compensation and `rbd_bringup --namespace follower` in joint_impedance, each with its
own simulator on the wall clock; this test's node is the one who moves the hand and the link
between the arms (rbd_control/demo/teleop.py has the same run ROS-free):

    hand      50 Hz: the leader's simulator holds tool0 with a hand (hand.link, sim/hand.py: a
              spring-damper and a grip at every physics step); its target runs along a 20 s
              ellipse, on /leader/rbd_mujoco_sim/hand_target
    stream    50 Hz: the leader's newest joint state (position, velocity) on
              /follower/rbd_controller/target_joint_state
    feedback  50 Hz: the follower's ~/external_torque on the leader's joints
              (/leader/rbd_mujoco_sim/joint_disturbance)

The follower's simulator has a box on the path that the leader's lacks. Asked: the follower's
RMS error of the leader under 0.02 rad over the lap, the box seen on the follower (its
~/external_torque over its contact level while its simulator reports the touch), the feedback
on the leader's joints, and SIGINT ending both runs with status 0.
"""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.demo import teleop

# Two arms in real time are four 1 kHz nodes, two bringups and this test's 50 Hz loop on a
# 2-core machine: the figure depends on the load (RMS 18.8 and 24.0 mrad at a load average of
# ~6, 48 mrad beside another job's tests), so the CI run leaves it out; run it by hand:
#   RBD_TELEOP_REALTIME=1 python -m pytest test/sim/test_teleop_nodes.py -s
# The same run in lock step is a CI test: test/control/test_leader_follower.py.
pytestmark = [pytest.mark.wall_clock, pytest.mark.skipif(
    not os.environ.get("RBD_TELEOP_REALTIME"),
    reason="two arms in real time depend on the machine's load: run by hand with "
           "RBD_TELEOP_REALTIME=1 (lock step: test/control/test_leader_follower.py)")]

ARMS = ("leader", "follower")
STARTUP_S = 60.0
TICK_S = 0.02           # 50 Hz: hand target, stream, feedback
STOP_S = 5.0
# both controllers: the loop declared as it runs (a state every 1 ms from the simulator,
# answered within ~2 ms), so the follower's stiffness bound is that loop's, not the default
# declaration's 4 ms / 10 ms; and a loaded 2-core machine may hold a state back longer than
# the default 0.1 s (test_two_arms.py): rbd_bringup --lockstep's 1 s
COMMON = ("    expected_state_period: 0.001\n    expected_delay: 0.002\n"
          "    state_timeout: 1.0\n")


def parameter_files(model, tmp_path):
    box = teleop.obstacle(model, DEFAULT_ARM_HOME)
    leader = tmp_path / "leader.yaml"
    leader.write_text("/**/rbd_controller:\n  ros__parameters:\n" + COMMON
                      + "/**/rbd_mujoco_sim:\n  ros__parameters:\n"
                      f"    hand.link: {teleop.EE_LINK}\n")
    follower = tmp_path / "follower.yaml"
    follower.write_text(
        "/**/rbd_controller:\n  ros__parameters:\n" + COMMON
        # a 50 Hz stream of a moving leader: filtered over one sample period (the default
        # 0.05 s smooths slower, sparser streams; its lag, T v, is 15 mrad at 0.3 rad/s)
        + f"    joint_impedance.filter_time_constant: {TICK_S}\n"
        + "    contact.enabled: true\n    contact.reaction: none\n"
        f"    contact.wrench_link: {teleop.EE_LINK}\n"
        f"    contact.torque_thresholds: {[float(x) for x in teleop.CONTACT_LEVELS]}\n"
        "/**/rbd_mujoco_sim:\n  ros__parameters:\n"
        f"    obstacle.box: {[float(x) for x in [*box.centre, *box.half_size]]}\n"
        f"    obstacle.probe_link: {teleop.EE_LINK}\n"
        f"    obstacle.probe_radius: {float(box.probe_radius)}\n")
    return leader, follower


def test_the_follower_tracks_the_leader_and_feels_the_box(ros_env, ros_node, spawn_node,
                                                          tmp_path):
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState

    from rbd_control.control.angles import wrap_to_pi
    from rbd_control.control.laws.pose import quat_from_matrix
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import frame_pose, load_urdf

    model = load_urdf(default_arm_urdf())
    names = list(model.joint_names)
    files = dict(zip(ARMS, parameter_files(model, tmp_path)))
    modes = {"leader": "gravity_compensation", "follower": "joint_impedance"}
    runs = {arm: spawn_node("rbd_control.bringup.launcher", node_name=f"bringup_{arm}",
                            args=["--namespace", arm, "--mode", modes[arm],
                                  "--params-file", str(files[arm])]) for arm in ARMS}
    states = {arm: ros_node.collect(JointState, f"/{arm}/joint_states") for arm in ARMS}
    tau_ext = ros_node.collect(JointState, "/follower/rbd_controller/external_torque")
    touch = ros_node.collect(JointState, "/follower/rbd_mujoco_sim/contact_torque")
    node = ros_node.node
    hand_pub = node.create_publisher(PoseStamped, "/leader/rbd_mujoco_sim/hand_target", 10)
    feedback_pub = node.create_publisher(JointState, "/leader/rbd_mujoco_sim/joint_disturbance",
                                         10)
    target_pub = node.create_publisher(JointState, "/follower/rbd_controller/target_joint_state",
                                       10)
    ros_node.wait_for(lambda: all(states.values()), STARTUP_S, "both arms' joint states")
    ros_node.wait_for(lambda: hand_pub.get_subscription_count() > 0
                      and target_pub.get_subscription_count() > 0, STARTUP_S,
                      "the hand's and the follower's target subscriptions")
    ros_node.spin_for(1.0)

    def newest(arm):
        msg = states[arm][-1]
        order = [list(msg.name).index(j) for j in names]
        return np.array(msg.position)[order], np.array(msg.velocity)[order]

    start = frame_pose(model, newest("leader")[0], teleop.EE_LINK)
    origin, grip = start[:3, 3], quat_from_matrix(start[:3, :3])
    hand = PoseStamped()
    hand.pose.orientation.x, hand.pose.orientation.y, hand.pose.orientation.z, \
        hand.pose.orientation.w = map(float, grip)
    began = time.monotonic()
    samples, fed_peak = [], 0.0
    while (elapsed := time.monotonic() - began) < teleop.LAP_S:
        point = teleop.path_point(origin, elapsed)
        hand.pose.position.x, hand.pose.position.y, hand.pose.position.z = map(float, point)
        hand_pub.publish(hand)
        q, qd = newest("leader")
        target_pub.publish(JointState(name=names, position=list(map(float, q)),
                                      velocity=list(map(float, qd))))
        if tau_ext:
            fed = teleop.FEEDBACK_GAIN * np.array(tau_ext[-1].effort)
            fed_peak = max(fed_peak, float(np.abs(fed).max()))
            feedback_pub.publish(JointState(name=list(tau_ext[-1].name),
                                            effort=list(map(float, fed))))
        samples.append((q, newest("follower")[0]))
        ros_node.spin_for(max(0.0, TICK_S - (time.monotonic() - began - elapsed)))
    for run in runs.values():
        run.process.send_signal(signal.SIGINT)
    for run in runs.values():
        assert run.process.wait(STOP_S) == 0, run.log()

    leader, follower = (np.array(side) for side in zip(*samples))
    error = wrap_to_pi(leader - follower)
    rms = float(np.sqrt(np.mean(np.square(error))))
    estimated = max((float(np.abs(m.effort).max()) for m in tau_ext), default=0.0)
    true = max((float(np.abs(m.effort).max()) for m in touch), default=0.0)
    print(f"leader moved {np.round(np.ptp(leader, axis=0), 3).tolist()} rad; follower RMS "
          f"{rms * 1e3:.2f} mrad over {len(samples)} samples (largest "
          f"{np.abs(error).max() * 1e3:.1f}); contact torque peak {true:.2f} N m, estimated "
          f"{estimated:.2f}; feedback peak {fed_peak:.2f} N m")
    assert np.ptp(leader, axis=0).max() > 0.2, "the hand must move the leader"
    assert rms < 0.02
    assert true > 1.0, "the follower must reach the box"
    assert estimated > teleop.CONTACT_LEVELS[2], "the follower must see the box"
    assert fed_peak > teleop.CONTACT_LEVELS[2], "the feedback must reach the leader"
