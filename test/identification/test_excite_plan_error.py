"""rbd_bringup --excite judges its recording against the plan (excite.plan_error): an arm
held where the lead-in left it (the controller dropped the trajectory) is not a recording
to fit, one that followed it is; and through the nodes, a dropped excitation is a FAILED run."""
import numpy as np

from rbd_control.bringup.excite import LEAD_IN_S, MAX_RELATIVE_ERROR, plan_error
from rbd_control.identification.recording import Recording
from rbd_control.ros.conversions import joint_trajectory_msg

JOINTS = ("a", "b")
STARTED = 100.0    # the stamp the plan was sent at


def planned(t):
    """A two-joint plan: still during the lead-in, then two sines."""
    moving = np.clip(t - LEAD_IN_S, 0.0, None)
    return np.column_stack([0.5 * np.sin(2 * np.pi * moving / 10),
                            0.3 * np.sin(4 * np.pi * moving / 10)])


def plan_msg():
    times = np.arange(0.0, LEAD_IN_S + 10.0 + 1e-9, 0.02)
    q = planned(times)
    return joint_trajectory_msg(list(JOINTS), [(t, q[k], np.zeros(2), np.zeros(2))
                                               for k, t in enumerate(times)])


def recording_of(q_of_t):
    t = STARTED + np.arange(0.0, LEAD_IN_S + 10.5, 0.001)
    return Recording(JOINTS, t, q_of_t(t - STARTED), np.zeros((len(t), 2)))


def test_an_arm_that_followed_the_plan_is_within_a_hundredth_of_its_motion():
    # the controller starts it once checked: 0.2 s of sim time for a 60 s excitation in lock
    # step; 3 ms, the next state after receiving it
    for late in (0.003, 0.2):
        error, relative, delay = plan_error(plan_msg(), recording_of(lambda t: planned(t - late)),
                                            STARTED)
        assert error < 5e-3 and relative < 0.02 and abs(delay - late) < 0.005, late


def test_an_arm_held_after_the_lead_in_did_not_follow_it():
    held = recording_of(lambda t: planned(np.minimum(t, 3.5)))
    error, relative, _ = plan_error(plan_msg(), held, STARTED)
    assert relative > MAX_RELATIVE_ERROR and error > 0.2


def test_bringup_says_failed_when_the_controller_drops_the_excitation(ros_env, tmp_path):
    """Through the nodes: a state_timeout no state gap can meet makes the watchdog drop the
    trajectory (as late states on a loaded machine did), and the run is a failure."""
    import subprocess
    import sys

    tight = tmp_path / "tight.yaml"
    tight.write_text("/**:\n  ros__parameters:\n    state_timeout: 0.00001\n")
    record = tmp_path / "held.npz"
    result = subprocess.run(
        [sys.executable, "-m", "rbd_control.bringup.launcher", "--excite", "10", "--record",
         str(record), "--params-file", str(tight), "--duration", "120",
         "--log-dir", str(tmp_path)],
        env=ros_env, capture_output=True, text=True, timeout=150)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "rbd_bringup: FAILED: excitation recorded to" in output, output
    assert "the arm did not follow it" in output, output
    assert record.exists()    # kept, for a look
