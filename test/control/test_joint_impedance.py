"""Mode joint_impedance (laws/joint_impedance.py) on the default arm in MuJoCo at 1 kHz in
lock step: the stiffness and damping it holds with, the shaping of streamed targets, and the
refusals of bad targets (the arm keeps holding)."""
import numpy as np
import pytest

from closed_loop_support import DT
from rbd_control.control import Controller, ControllerConfig, TrajectoryError
from rbd_control.control.errors import ConfigError
from rbd_control.control.laws.joint_impedance import JointImpedanceConfig
from rbd_control.sim.simulator import Simulator

HOME = np.array([0.0, -0.6, 1.2, 0.0, 0.8, 0.0])
ELBOW = 2
# the loop these tests run: a state every DT, its command applied one step later
LOOP = dict(expected_state_period=DT, expected_delay=DT)


def start(arm_urdf, arm_model, **shaping):
    names = arm_model.joint_names
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(zip(names, HOME)))
    c = Controller(arm_model, ControllerConfig(mode="joint_impedance", state_timeout=10.0,
                                               joint_impedance=JointImpedanceConfig(**shaping),
                                               **LOOP))
    state = sim.state()
    c.update(state.time, state.names, state.position, state.velocity)
    return sim, c


def run(sim, c, seconds, on_step=None):
    """(positions, commands) over `seconds` of closed loop; on_step(t) may send targets."""
    positions, commands = [], []
    for _ in range(int(round(seconds / DT))):
        state = sim.state()
        if on_step is not None:
            on_step(state.time)
        tau = c.update(state.time, state.names, state.position, state.velocity).tau.copy()
        sim.set_command(tau)
        sim.step()
        positions.append(sim.state().position.copy())
        commands.append(tau)
    return np.array(positions), np.array(commands)


def test_a_known_disturbance_deflects_the_joint_by_k_inverse_tau(arm_urdf, arm_model):
    """The bias g + C qd is the model's at the measured state, so at rest the spring alone
    carries an external torque: the elbow settles tau / K off its target (within 2 %)."""
    sim, c = start(arm_urdf, arm_model, target_timeout=60.0)
    c.set_joint_target(arm_model.joint_names, HOME, None, sim.state().time)
    push = 5.0
    sim.set_disturbance({arm_model.joint_names[ELBOW]: push})
    positions, _ = run(sim, c, 3.0)
    K = c._joint_target.K[ELBOW]
    deflection = positions[-1, ELBOW] - HOME[ELBOW]
    print(f"elbow K {K:.1f} N m/rad, {push} N m: deflection {deflection * 1e3:.3f} mrad, "
          f"K^-1 tau {push / K * 1e3:.3f} mrad")
    assert deflection == pytest.approx(push / K, rel=0.02)


@pytest.mark.parametrize("zeta", [1.0, 0.5])
def test_a_target_step_converges_with_the_configured_damping(arm_urdf, arm_model, zeta):
    """A 0.05 rad target step on the elbow, unfiltered: damping ratio 1 overshoots at most 5 %,
    0.5 overshoots (an under-damped spring: zeta shapes the response)."""
    sim, c = start(arm_urdf, arm_model, filter_time_constant=0.0, damping_ratio=zeta,
                   target_timeout=60.0)
    target = HOME.copy()
    target[ELBOW] += 0.05
    c.set_joint_target(arm_model.joint_names, target, None, sim.state().time)
    positions, _ = run(sim, c, 3.0)
    moved = positions[:, ELBOW] - HOME[ELBOW]
    overshoot = (moved.max() - 0.05) / 0.05
    print(f"damping ratio {zeta}: overshoot {overshoot * 100:.2f} %, final "
          f"{moved[-1] * 1e3:.3f} mrad of 50")
    assert moved[-1] == pytest.approx(0.05, abs=1e-4)
    if zeta == 1.0:
        assert overshoot <= 0.05
    else:
        assert overshoot > 0.05


def test_streamed_targets_are_shaped_then_held_when_they_stop(arm_urdf, arm_model):
    """Targets at 10 Hz on the elbow in 0.2 rad steps (0, 0.2, 0.4, 0, ...): no command step
    beyond the torque rate, the joint never past its newest target by more than the clip, and
    0.5 s after the last target the arm holds it (held, at rest)."""
    sim, c = start(arm_urdf, arm_model)       # the defaults: T 0.05 s, clip 0.1 rad, 0.5 s
    names, sent = arm_model.joint_names, []

    def stream(t):
        if t < 1.0 and (not sent or t - sent[-1][0] >= 0.1 - 1e-9):
            target = HOME.copy()
            target[ELBOW] += 0.2 * (len(sent) % 3)     # 0, 0.2, 0.4, 0, ...
            c.set_joint_target(names, target, None, t)
            sent.append((t, target[ELBOW]))
    positions, commands = run(sim, c, 2.0, stream)
    steps = np.abs(np.diff(commands, axis=0)).max()
    rate_step = c.config.limits.torque_rate * DT
    newest = np.array([[t, q] for t, q in sent])
    times = np.arange(1, len(positions) + 1) * DT
    which = np.searchsorted(newest[:, 0], times, side="right") - 1
    beyond = np.abs(positions[:, ELBOW] - newest[which, 1]).max()
    # overshoot: how far the elbow went past its newest target, in the direction of the step
    previous = np.where(which > 0, newest[np.maximum(which - 1, 0), 1], HOME[ELBOW])
    direction = np.sign(newest[which, 1] - previous)
    overshoot = ((positions[:, ELBOW] - newest[which, 1]) * direction).max()
    print(f"{len(sent)} targets: largest command step {steps:.2f} N m (rate step "
          f"{rate_step:g}), largest distance from the newest target {beyond:.3f} rad, "
          f"overshoot past it {overshoot * 1e3:.2f} mrad, "
          f"held {c._joint_target.held}, final speed {np.abs(sim.state().velocity).max():.2e}")
    assert steps <= rate_step + 1e-9
    assert beyond <= 0.4 + 1e-6      # at most one step (0.4 rad) from the newest target
    assert overshoot <= c.config.joint_impedance.max_error
    assert c._joint_target.held
    assert np.abs(sim.state().velocity).max() < 0.01
    assert positions[-1, ELBOW] == pytest.approx(sent[-1][1], abs=2e-3)


@pytest.mark.parametrize("names, positions, reason", [
    (["elbow", "nope"], [1.0, 0.0], "not the commanded joints"),
    (["elbow"], [float("nan")], "finite"),
    (["elbow", "wrist_1"], [1.0], "2 joint names but 1 target positions"),
])
def test_bad_targets_are_refused_and_the_arm_holds(arm_urdf, arm_model, names, positions,
                                                   reason):
    sim, c = start(arm_urdf, arm_model)
    with pytest.raises(TrajectoryError, match=reason):
        c.set_joint_target(names, positions, None, sim.state().time)
    positions_run, commands = run(sim, c, 0.3)
    assert np.all(np.isfinite(commands))
    assert np.abs(positions_run[-1] - HOME).max() < 1e-3


def test_stiffness_outside_the_loop_bound_is_refused(arm_urdf, arm_model):
    sim, c = start(arm_urdf, arm_model)
    bound = c._joint_target.max_stiffness[ELBOW]
    for K in (-1.0, 1.01 * bound):
        with pytest.raises(TrajectoryError, match="elbow.*outside"):
            c.set_joint_stiffness(["elbow"], [K])
    c.set_joint_stiffness(["elbow"], [0.5 * bound], [0.7])
    assert c._joint_target.K[ELBOW] == 0.5 * bound and c._joint_target.zeta[ELBOW] == 0.7
    with pytest.raises(ConfigError, match="shoulder_pan.*outside"):   # the default loop
        Controller(arm_model, ControllerConfig(
            mode="joint_impedance", joint_impedance=JointImpedanceConfig(stiffness=[100.0])))


def test_joint_targets_are_refused_in_other_modes(arm_model):
    c = Controller(arm_model, ControllerConfig(mode="feedforward_pd"))
    c.update(0.0, arm_model.joint_names, HOME, np.zeros(6))
    with pytest.raises(TrajectoryError, match="switch to joint_impedance"):
        c.set_joint_target(arm_model.joint_names, HOME, None, 0.001)


def test_a_target_beyond_the_limits_is_followed_to_the_soft_limit_only(arm_urdf, arm_model):
    """A leader at its own stop streams targets beyond ours: clipped into the soft limits (said
    in the log), the joint stops there, off its hard stop."""
    sim, c = start(arm_urdf, arm_model, target_timeout=60.0, max_error=10.0)
    soft, hard = c._limits.joints.soft_range[ELBOW, 1], arm_model.position_limits[ELBOW, 1]
    target = HOME.copy()
    target[ELBOW] = hard + 0.5
    c.set_joint_target(arm_model.joint_names, target, None, sim.state().time)
    assert c._joint_target.target[ELBOW] == soft < hard
    positions, _ = run(sim, c, 3.0)
    print(f"elbow target {target[ELBOW]:.2f} rad: peak {positions[:, ELBOW].max():.4f}, "
          f"soft {soft:.3f}, hard {hard}")
    assert positions[:, ELBOW].max() < soft + 0.01 < hard
    assert any("clipped" in line for line in c.warnings.due(10.0))
