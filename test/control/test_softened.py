"""What the loop design softens is reported (laws/loop_design.py's Softened, model/plan.py's
softened): a cartesian_stiffness whose task-space modes are faster than the design bandwidth,
per axis with the requested and the applied value at the zero pose, and a nullspace stiffness
above its cap d w^2; a soft one is not. The xArm7 of example-robot-data at 1 kHz, as a new user
would try it with the Python API. ROS-free."""
from __future__ import annotations

import importlib.metadata
import pathlib

import numpy as np
import pytest

from rbd_control.control import ControllerConfig
from rbd_control.control.laws.cartesian import AXES, TWIST_TO_CONFIG_ORDER
from rbd_control.control.laws.loop_design import (SOFTENED_TOLERANCE, describe_softened,
                                                  reference_inertia, zero_pose)
from rbd_control.control.model.plan import plan_model
from rbd_control.control.throttle import ThrottledWarnings
from rbd_control.dynamics import load_urdf, operational_space_inertia

STIFF = (800.0, 800.0, 800.0, 10.0, 10.0, 10.0)   # N/m, N m/rad: 800 N/m on the tool
AT_1KHZ = dict(expected_state_period=0.001)       # the default 10 ms of delay


@pytest.fixture(scope="module")
def xarm7():
    robots = importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")
    return load_urdf((pathlib.Path(robots) / "xarm_description/urdf/xarm7.urdf").read_text())


def plan(model, **given):
    config = ControllerConfig(mode="cartesian_impedance", ee_link="link7", **given)
    config.check()
    return plan_model(model, config, ThrottledWarnings())


def test_a_stiffness_beyond_the_loop_design_is_reported_requested_and_applied(xarm7):
    stiff = plan(xarm7, cartesian_stiffness=STIFF, **AT_1KHZ)
    reported = {s.name: s for s in stiff.softened}
    x = reported["cartesian_stiffness[x]"]
    assert x.requested == 800.0 and 0.0 < x.applied < 0.9 * 800.0
    # applied: the diagonal of the stiffness the law applies at the zero pose
    Lambda = operational_space_inertia(xarm7, zero_pose(xarm7), "link7").Lambda
    K, _ = stiff.cartesian.task_gains(Lambda)
    for axis, requested, applied in zip(AXES, STIFF, np.diag(K)[TWIST_TO_CONFIG_ORDER]):
        entry = reported.get(f"cartesian_stiffness[{axis}]")
        if entry is None:
            assert applied >= requested * (1.0 - SOFTENED_TOLERANCE)
        else:
            assert (entry.requested, entry.applied) == (requested, pytest.approx(applied))
    # the nullspace stiffness (10 N m/rad) above the cap d w^2 of a light wrist joint
    w = stiff.cartesian.max_bandwidth
    cap = reference_inertia(xarm7) * w * w
    capped = [f"nullspace_stiffness[{joint}]" for joint, c in zip(xarm7.joint_names, cap)
              if c < 10.0 * (1.0 - SOFTENED_TOLERANCE)]
    assert "nullspace_stiffness[joint7]" in capped
    for name, c in zip(capped, cap[cap < 10.0 * (1.0 - SOFTENED_TOLERANCE)]):
        assert (reported[name].requested, reported[name].applied) == (10.0, pytest.approx(c))
    assert set(reported) - {f"cartesian_stiffness[{a}]" for a in AXES} == set(capped)
    assert "cartesian_stiffness[x] 800 -> " in describe_softened(stiff.softened)


def test_a_stiffness_the_loop_design_allows_is_not_reported(xarm7):
    soft = plan(xarm7, cartesian_stiffness=(100.0, 100.0, 100.0, 1.0, 1.0, 0.05),
                nullspace_stiffness=0.02, **AT_1KHZ)
    assert soft.softened == () and describe_softened(soft.softened) == ""
    # a faster loop, stated, lifts the task-space bound of the stiff one
    fast = plan(xarm7, cartesian_stiffness=STIFF, expected_state_period=1e-4, expected_delay=0.0,
                bandwidth_hz=1000.0)
    assert not [s for s in fast.softened if s.name.startswith("cartesian_stiffness")]


def test_joint_gains_are_never_softened_and_no_law_reports_nothing(xarm7):
    """A user's kp/kd override the default rule (gain_table.py): the design bounds none."""
    config = ControllerConfig(mode="feedforward_pd", kp=1e5, kd=1e3, **AT_1KHZ)
    joint_only = plan_model(xarm7, config, ThrottledWarnings())
    assert joint_only.cartesian is None and joint_only.softened == ()
    np.testing.assert_array_equal(joint_only.gains.kp, 1e5)
