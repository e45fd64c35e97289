"""rbd_controller in mode shadow, fed by a replayed log (bench/replay_log.py, the log's own
uneven stamps, a few hundred Hz, a few seconds): ~/shadow_effort carries the model's torque,
~/model_error and /diagnostics its error, and the command topic receives nothing, not even the
watchdog's safe action once the log ends. On the default arm with torques its own model
produced, and on a real Franka Panda's log (../shared/data, skipped where absent) with
example-robot-data's panda.urdf, whose finger joints the log lacks."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf, rnea_batch

if str(pathlib.Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

shared = load("shared_data.py", "rbd_test_ros_shared_data")
MODULE = 'rbd_control.ros.controller.node'
REPLAY = str(pathlib.Path(__file__).resolve().parents[2] / 'bench' / 'replay_log.py')


def shadow_replay(ros_node, spawn_node, log, urdf, joints, every, duration):
    """(the ~/shadow_effort messages, the last ~/model_error, the last /diagnostics line of
    the model error, the command count) of one replay, and the watchdog's second after it."""
    shadow = ros_node.collect(JointState, '/rbd_controller/shadow_effort')
    reports = ros_node.collect(DiagnosticStatus, '/rbd_controller/model_error')
    diagnostics = ros_node.collect(DiagnosticArray, '/diagnostics')
    commands = ros_node.collect(Float64MultiArray, '/effort_controller/commands')
    node = spawn_node(MODULE, {'robot_description': urdf, 'mode': 'shadow', 'joints': joints,
                               'shadow.window': 30.0, 'state_timeout': 0.1})
    ros_node.wait_for(lambda: reports, 60, 'the node to use its model (~/model_error)')
    replay = spawn_node(REPLAY, node_name='replay',
                        args=[str(log), '--every', str(every), '--duration', str(duration)])
    ros_node.wait_for(lambda: not replay.alive(), duration + 30, 'the replay to end')
    ros_node.spin_for(1.0)                  # the watchdog trips: still nothing commanded
    assert 'sent' in replay.log()
    lines = [s for a in diagnostics for s in a.status if s.name.endswith('model error')]
    assert node.alive(), node.log()
    return shadow, reports[-1], lines[-1], len(commands)


def figures(status):
    values = {v.key: v.value for v in status.values}
    return values, {k[:-4]: float(v) for k, v in values.items() if k.endswith(' rms')}


def test_shadow_on_the_default_arm_commands_nothing_and_reports_a_small_error(
        ros_node, spawn_node, tmp_path):
    """Torques the arm's own model produced: the error left is the acceleration estimate's
    lag (a slow sine, so a small one), and none of it is commanded."""
    model = load_urdf(default_arm_urdf())
    rng = np.random.default_rng(4)
    t = np.cumsum(rng.uniform(0.0007, 0.0088, 1500))          # uneven, as a real robot's
    w = 2 * np.pi * 0.5
    q = 0.3 * np.sin(w * t)[:, None] * np.ones(model.nq)
    qd, qdd = 0.3 * w * np.cos(w * t)[:, None] * np.ones(model.nq), -w * w * q
    tau = rnea_batch(model, q, qd, qdd)
    np.savez(tmp_path / 'arm.npz', t=t, q=q, qd=qd, tau=tau, joints=np.array(model.joint_names))
    shadow, report, line, commands = shadow_replay(ros_node, spawn_node, tmp_path / 'arm.npz',
                                                   default_arm_urdf(), list(model.joint_names),
                                                   1, 3.0)
    assert commands == 0
    assert len(shadow) > 100
    values, rms = figures(report)
    assert set(rms) == set(model.joint_names) and int(values['samples']) > 100
    size = np.sqrt(np.mean(tau ** 2, axis=0))
    for j, joint in enumerate(model.joint_names):
        assert rms[joint] < 0.05 * size[j] + 0.01, (joint, rms[joint], size[j])
    assert figures(line)[1].keys() == rms.keys()


def test_shadow_on_a_real_panda_log(ros_node, spawn_node):
    """3 s of a real Panda at ~250 Hz, with the published panda.urdf (no friction in it, so
    an error of a few N m where the real joints carry up to ~20 N m): the figures are those
    of the replayed torques, and the command topic stays silent."""
    log, why = shared.panda_log()
    if log is None:
        pytest.skip(why)
    with np.load(log) as data:
        joints, tau = [str(j) for j in data['joints']], data['tau']
    shadow, report, line, commands = shadow_replay(
        ros_node, spawn_node, log, shared.panda_urdf().read_text(), joints, 4, 3.0)
    assert commands == 0
    assert len(shadow) > 100 and tuple(shadow[0].name) == tuple(joints)
    values, rms = figures(report)
    assert set(rms) == set(joints)
    # the big joints err by much less than they carry, but by more than nothing
    for joint in ('panda_joint2', 'panda_joint4'):
        assert 0.1 < rms[joint] < 0.5 * np.sqrt(np.mean(tau[:, joints.index(joint)] ** 2))
