"""Property tests: whatever arrives, the controller outputs finite effort within the limit
or refuses with its own error type (StateError / TrajectoryError) — never anything else."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rbd_control.control import (MODES, Controller, ControllerConfig, JointTrajectory, StateError,
                                 TrajectoryError, TrajectoryPoint)

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
# mostly plausible numbers, sometimes extreme or non-finite ones
joint_value = st.one_of(st.floats(-4.0, 4.0), st.floats(-1e3, 1e3), any_float)
gain = st.one_of(st.none(), st.floats(0.0, 1e9))


def assert_safe(command, controller):
    limit = controller._limiter.limit
    assert np.all(np.isfinite(command.tau)), command.tau
    assert np.all(np.abs(command.tau) <= limit), (command.tau, limit)
    for name in ("desired_q", "desired_qd", "desired_qdd", "error"):
        assert np.all(np.isfinite(getattr(command, name))), name


@st.composite
def configs(draw):
    return ControllerConfig(
        mode=draw(st.sampled_from(MODES)),
        kp=draw(gain), kd=draw(gain), ki=draw(gain), i_clamp=draw(gain),
        effort_scale=draw(st.floats(0.01, 1.0)),
        safe_action=draw(st.sampled_from(["hold", "zero"])),
        damping=draw(st.one_of(st.none(), st.floats(0.0, 1e3))),
        allow_partial_joints_goal=draw(st.booleans()),
        ee_link="tool0",        # so that cartesian_impedance is fuzzed too
    )


@st.composite
def states(draw, names):
    """A measured state: usually the right joints in a shuffled order, sometimes broken."""
    chosen = list(draw(st.permutations(names)))
    if draw(st.integers(0, 9)) == 0:
        chosen = chosen[: draw(st.integers(0, len(chosen)))]
    if draw(st.booleans()):
        chosen.append("unknown_joint")
    n = len(chosen) + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))
    q = draw(st.lists(joint_value, min_size=max(n, 0), max_size=max(n, 0)))
    qd = draw(st.lists(joint_value, min_size=len(chosen), max_size=len(chosen)))
    return chosen, q, qd


@st.composite
def trajectories(draw, names):
    """Half of them well-formed (so they are accepted and followed), half anything at all."""
    clean = draw(st.booleans())
    joints = list(draw(st.permutations(names)))
    if not clean or draw(st.booleans()):
        joints = joints[: draw(st.integers(1, len(names)))]
    n_points = draw(st.integers(1 if clean else 0, 4))
    fields = draw(st.sampled_from(["p", "pv", "pva", "pva_e"]))
    value = st.floats(-2.0, 2.0) if clean else st.one_of(st.floats(-2.0, 2.0), joint_value)
    step = st.floats(0.01, 1.0) if clean else st.floats(-0.1, 1.0)
    vec = st.lists(value, min_size=len(joints), max_size=len(joints))
    points = []
    t = draw(st.floats(0.0, 1.0) if clean else st.floats(-0.5, 1.0))
    for _ in range(n_points):
        t += draw(step)
        points.append(TrajectoryPoint(
            positions=draw(vec),
            velocities=draw(vec) if "v" in fields else None,
            accelerations=draw(vec) if "a" in fields else None,
            effort=draw(vec) if "e" in fields else None,
            time_from_start=t,
        ))
    return JointTrajectory(joints, points, start_time=draw(st.sampled_from([0.0, 0.5, 2.0])))


@FUZZ
@given(data=st.data())
def test_fuzzed_states_give_safe_effort_or_state_error(arm_model, data):
    names = arm_model.joint_names
    controller = Controller(arm_model, data.draw(configs()))
    now = 0.0
    for _ in range(data.draw(st.integers(1, 5))):
        now += data.draw(st.floats(0.0, 0.2))
        state = data.draw(states(names))
        try:
            command = controller.update(now, *state)
        except StateError as exc:
            assert str(exc)  # a reason is given
            continue
        assert_safe(command, controller)
    safe = controller.check_watchdog(now + data.draw(st.floats(0.0, 1.0)))
    if safe is not None:
        assert_safe(safe, controller)


@FUZZ
@given(data=st.data())
def test_fuzzed_trajectories_give_safe_effort_or_trajectory_error(arm_model, data):
    names = arm_model.joint_names
    config = data.draw(configs())
    controller = Controller(arm_model, config)
    q0 = np.array(data.draw(st.lists(st.floats(-2.0, 2.0), min_size=6, max_size=6)))
    qd0 = np.array(data.draw(st.lists(st.floats(-3.0, 3.0), min_size=6, max_size=6)))
    controller.update(0.0, names, q0, qd0)
    try:
        controller.set_trajectory(data.draw(trajectories(names)), 0.01)
        event("trajectory accepted")
    except TrajectoryError as exc:
        assert str(exc)
        event("trajectory rejected")
    for now in data.draw(st.lists(st.floats(0.0, 6.0), min_size=1, max_size=6)):
        q = q0 + np.array(data.draw(st.lists(st.floats(-0.5, 0.5), min_size=6, max_size=6)))
        try:
            command = controller.update(now, names, q, qd0)
        except StateError as exc:   # a state stamped before the last one is refused
            assert "older than the last one" in str(exc)
            event("state out of order")
            continue
        assert_safe(command, controller)
