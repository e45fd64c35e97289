"""Late joint states and /diagnostics: rbd_controller in its own process, fed by a publisher
process whose states turn late (stamped 0.4 s in the past) for a while (a sustained overload:
softened gains, then the trajectory aborted), then fresh again.
The thresholds sit well above the latency a busy machine adds, so only the late stamps count."""
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from ros_helpers import RELIABLE_DEEP, get_parameters

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

NODE = 'rbd_controller'
MODULE = 'rbd_control.ros.controller.node'
COMMANDS = '/effort_controller/commands'
STREAM_SCRIPT = str(Path(__file__).with_name('publish_states.py'))
JOINTS = list(load_urdf(default_arm_urdf()).joint_names)
MAX_STATE_AGE = 0.1
LATE_FROM, LATE_TO, DELAY = 1.0, 3.0, 0.4       # stream seconds; states 0.4 s old
DURATION = 5.0


def stamp_of(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def statuses(messages):
    """(receive order) [(level, message, {key: value})] of the control-loop status."""
    found = []
    for array in messages:
        for status in array.status:
            if status.name == f'{NODE}: control loop':
                values = {kv.key: kv.value for kv in status.values}
                found.append((status.level, status.message, values))
    return found


def feedback_scale(error, feedback, actual, kp, kd):
    """s with feedback = s^2 kp e - s kd qd (the hold plan wants qd = 0), least squares over
    the joints; None when the error is too small to tell."""
    e, fb, qd = (np.asarray(m, dtype=float)
                 for m in (error.position, feedback.effort, actual.velocity))
    if np.abs(kp * e).max() < 1e-3:
        return None
    candidates = np.linspace(0.01, 1.0, 991)
    residual = [np.abs(s * s * kp * e - s * kd * qd - fb).max() for s in candidates]
    return float(candidates[int(np.argmin(residual))])


def test_late_states_soften_the_gains_show_on_diagnostics_and_recover(spawn_node, ros_node):
    controller = spawn_node(MODULE, {
        'robot_description': default_arm_urdf(), 'mode': 'feedforward_pd', 'state_timeout': 1.0,
        'max_state_age': MAX_STATE_AGE, 'diagnostics_period': 0.2,
        # constant gains, so the scale can be read off the feedback (no inertia scheduling)
        'inertia_scheduling': False,
        # 0.4 s old states: above the warn threshold, below the error one
        'diagnostics.state_age_warn': 0.2, 'diagnostics.state_age_error': 1.0,
        'diagnostics.compute_warn': 0.5, 'diagnostics.compute_error': 1.0})
    controller.wait_for_log("model 'rbd_arm'", timeout=60)
    diagnostics = ros_node.collect(DiagnosticArray, '/diagnostics', 100)
    error = ros_node.collect(JointState, f'/{NODE}/error', RELIABLE_DEEP)
    feedback = ros_node.collect(JointState, f'/{NODE}/feedback', RELIABLE_DEEP)
    actual = ros_node.collect(JointState, f'/{NODE}/actual', RELIABLE_DEEP)
    ros_node.wait_for(lambda: statuses(diagnostics), 20, 'the first /diagnostics')
    gains = get_parameters(ros_node, NODE, [f'gains.{j}.{f}' for j in JOINTS for f in ('p', 'd')])
    kp = np.array([gains[f'gains.{j}.p'] for j in JOINTS])
    kd = np.array([gains[f'gains.{j}.d'] for j in JOINTS])

    stream = spawn_node(STREAM_SCRIPT, node_name='state_stream', args=[
        '--rate', '200', '--duration', str(DURATION), '--names', *JOINTS,
        '--handshake-topic', COMMANDS, '--ready-pause', '0.5',
        '--late', str(LATE_FROM), str(LATE_TO), str(DELAY)])
    ros_node.wait_for(lambda: 'ready' in stream.log() or not stream.alive(), 30, 'the stream')
    diagnostics.clear()
    ros_node.wait_for(lambda: not stream.alive(), DURATION + 30, 'the end of the stream')
    ros_node.spin_for(0.5)
    assert 'sent' in stream.log(), stream.log()

    # the tuning topics of one state share its stamp; the scale of each answered state
    by_stamp = {stamp_of(m): m for m in actual}
    fb_by_stamp = {stamp_of(m): m for m in feedback}
    scales = [(stamp_of(e),
               feedback_scale(e, fb_by_stamp[stamp_of(e)], by_stamp[stamp_of(e)], kp, kd))
              for e in error if stamp_of(e) in by_stamp and stamp_of(e) in fb_by_stamp]
    scales = [(t, s) for t, s in scales if s is not None]
    start = min(t for t, _ in scales)
    softened = [s for t, s in scales if s < 0.5]
    assert softened, f'no state answered with softened gains: {controller.log()[-2000:]}'
    # s = max_state_age / age = 0.1 s / 0.4 s (plus transport, so a little less)
    assert 0.2 < np.median(softened) <= 0.25 + 1e-3
    # fresh again from LATE_TO; full gains after 0.5 s of fresh states
    recovered = [s for t, s in scales if t > start + LATE_TO + 0.7]
    assert recovered and max(recovered) > 0.99, 'full gains did not return once states were fresh'

    seen = statuses(diagnostics)
    engaged = [(level, text, values) for level, text, values in seen
               if values['age guard'] == 'engaged']
    assert engaged, [text for _, text, _ in seen]
    level, text, _ = engaged[0]
    assert level == DiagnosticStatus.WARN and 'softened' in text, text
    # the guard engages at the first late state; the window's p99 passes state_age_warn once
    # a few of them are in it, which may be a report later (seen in CI-like runs)
    assert any('state age p99' in text for _, text, _ in engaged), [t for _, t, _ in engaged]
    assert max(float(values['state age p99 [ms]']) for _, _, values in engaged) > 300.0
    after = seen[seen.index(engaged[-1]) + 1:]
    assert any(values['age guard'] == 'idle' for _, _, values in after), \
        'no recovery on /diagnostics'
    # late for 2 s: first softened, then (late for 0.2 s) an overload that holds
    assert 'ms old (max_state_age 100 ms): feedback softened' in controller.log()
    assert 'states late for 0.2 s, holding with softened gains' in controller.log()
    assert any('overload' in text and values['age guard overloads'] == '1'
               for _, text, values in engaged), [text for _, text, _ in engaged]
