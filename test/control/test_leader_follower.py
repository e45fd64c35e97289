"""Leader and follower without ROS, in lock step (rbd_control/demo/teleop.py): a hand moves the
weightless leader around a 20 s lap, its states stream to the follower's joint_impedance at
50 Hz, the follower presses on a box the leader's world lacks, and the follower's estimated
external torque is fed back to the leader."""
import numpy as np
import pytest

from rbd_control.demo import teleop
from rbd_control.dynamics import frame_jacobian


@pytest.fixture(scope="module")
def run(arm_urdf, arm_model):
    return teleop.simulate(arm_urdf, arm_model)


def test_the_follower_tracks_the_leader_within_0_02_rad_rms(run):
    moved = np.ptp(run.leader, axis=0)
    print(f"leader moved {np.round(moved, 3).tolist()} rad; follower RMS error "
          f"{run.rms() * 1e3:.2f} mrad, largest {np.abs(run.error).max() * 1e3:.1f} mrad")
    assert moved.max() > 0.2, "the hand must move the leader"
    assert run.rms() < 0.02


def test_the_box_is_detected_on_the_follower_while_it_touches(run):
    touching = np.abs(run.contact_torque).max(axis=1) > 1.0
    assert touching.any(), "the follower must reach the box"
    first_touch = run.time[np.argmax(touching)]
    first_flag = run.time[np.argmax(run.contact_flagged)]
    print(f"touch at {first_touch:.3f} s, flagged at {first_flag:.3f} s; flagged "
          f"{run.contact_flagged.sum()} samples, touching {touching.sum()}")
    assert run.contact_flagged.any() and 0.0 <= first_flag - first_touch < 0.1
    # no flag in free motion: every flagged sample is within 0.1 s of a touch
    near = np.convolve(touching, np.ones(100), mode="same") > 0
    assert not (run.contact_flagged & ~near).any()


def test_the_feedback_pushes_the_leaders_tool_back_from_the_box(run, arm_model):
    """The torque fed to the leader, as a force at its tool0, points back out of the box (+x,
    the box's face normal; mostly along it) while the follower presses on it."""
    pressed = np.flatnonzero(run.contact_flagged)
    assert pressed.size
    k = pressed[np.argmax(np.abs(run.feedback[pressed]).max(axis=1))]
    J = frame_jacobian(arm_model, run.leader[k], teleop.EE_LINK)[3:]
    force = np.linalg.lstsq(J.T, run.feedback[k], rcond=None)[0]
    print(f"feedback at its peak: {np.round(run.feedback[k], 2).tolist()} N m, as a force at "
          f"tool0 {np.round(force, 1).tolist()} N")
    assert force[0] > 1.0 and force[0] > 0.5 * np.linalg.norm(force)
