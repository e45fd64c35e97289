"""The last terms of every command (safety/command_limits.py): joint-limit bounds, the torque
rate, robot_compensates_gravity; in every mode, safe action and contact reaction."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from closed_loop_support import DT
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryPoint
from rbd_control.control.contact.config import ContactConfig
from rbd_control.control.errors import ConfigError
from rbd_control.control.safety.command_limits import LimitsConfig
from rbd_control.dynamics import gravity
from rbd_control.sim.simulator import Simulator

RATE = 1000.0
HOME = np.array([0.0, -0.6, 1.2, 0.0, 0.8, 0.0])


# joint limits on and libfranka's rate (the franka_panda profile's), 10x below the default
ON = LimitsConfig(joint_limits=True, torque_rate=RATE)


def controller_for(arm_model, **config):
    config.setdefault("state_timeout", 10.0)
    config.setdefault("limits", ON)
    return Controller(arm_model, ControllerConfig(**config))


def steps_within_rate(taus, times, period=0.004, rate=RATE):
    """Largest |dtau| / (rate dt) over a command sequence (dt capped as command_limits.py)."""
    worst, last, last_time = 0.0, np.zeros(len(taus[0])), None
    for tau, now in zip(taus, times):
        dt = (period if last_time is None or now <= last_time
              else min(now - last_time, 2 * period))
        worst = max(worst, float(np.max(np.abs(tau - last))) / (rate * dt))
        last, last_time = tau, now
    return worst


# --- joint limits: the published command lies in the bounds -----------------------------

@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-4.0, 4.0), min_size=6, max_size=6),
       st.lists(st.floats(-5.0, 5.0), min_size=6, max_size=6),
       st.sampled_from(["gravity_compensation", "feedforward_pd", "computed_torque"]),
       st.booleans())
def test_the_published_command_lies_in_the_bounds(arm_model, q, qd, mode, omit):
    """Without the rate limit the published command (plus the robot's g where it adds it)
    always lies in the joint-limit bounds at the measured state."""
    c = controller_for(arm_model, mode=mode, robot_compensates_gravity=omit,
                       limits=LimitsConfig(joint_limits=True, torque_rate=0.0))
    q, qd = np.array(q), np.array(qd)
    c.update(0.0, arm_model.joint_names, HOME, np.zeros(6))
    tau = c.update(0.001, arm_model.joint_names, q, qd).tau
    felt = tau + (gravity(arm_model, q) if omit else 0.0)
    lower, upper = c._limits.bounds(c.model, q, qd)
    scale = np.maximum(1.0, np.abs(felt))
    assert np.all(felt >= lower - 1e-9 * scale) and np.all(felt <= upper + 1e-9 * scale) or (
        omit and np.any(np.abs(tau) >= c.effort_limit - 1e-9))
    assert np.all(np.abs(tau) <= c.effort_limit + 1e-12)


def test_soft_limits_outside_the_hard_ones_are_warned_and_a_negative_rate_refused(arm_urdf):
    from rbd_control.dynamics import load_urdf
    urdf = arm_urdf.replace('<limit lower="-2.6" upper="2.6" effort="80" velocity="3.0"/>',
                            '<limit lower="-2.6" upper="2.6" effort="80" velocity="3.0"/>'
                            '<safety_controller soft_lower_limit="-2.7" soft_upper_limit="2.5" '
                            'k_position="10" k_velocity="20"/>')
    model = load_urdf(urdf)
    c = Controller(model, ControllerConfig(limits=ON))
    lines = " ".join(c.warnings.due(0.0))
    assert "'elbow'" in lines and "outside its hard limits" in lines
    assert c._limits.joints.soft_lower[2] == -2.6 and c._limits.joints.soft_upper[2] == 2.5
    with pytest.raises(ConfigError, match="limits.torque_rate"):
        Controller(model, ControllerConfig(limits=LimitsConfig(torque_rate=-1.0)))
    with pytest.raises(ConfigError, match="limits.soft_margin"):
        Controller(model, ControllerConfig(limits=LimitsConfig(soft_margin=-0.1)))


# --- the torque rate: never above limits.torque_rate ---------------------------------------

def demo_trajectory(names):
    points = [TrajectoryPoint(q, v, a, time_from_start=t)
              for t, q, v, a in demo_waypoints(DEFAULT_ARM_HOME, names)]
    return JointTrajectory(names, points)


def test_the_rate_holds_over_start_preemption_mode_switch_hold_and_reflex(arm_urdf, arm_model):
    names = arm_model.joint_names
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(DEFAULT_ARM_HOME))
    c = controller_for(arm_model, state_timeout=0.05,
                       contact=ContactConfig(reaction="reflex", torque_thresholds=[5, 10, 5, 10]))
    taus, times = [], []

    def answer(command, now):
        taus.append(command.tau.copy())
        times.append(now)
        sim.set_command(command.tau)
        sim.step()

    events = {0.3: "goal", 0.6: "preempt", 0.9: "mode", 1.2: "gap", 1.6: "push", 2.2: "end"}
    pending = sorted(events.items())
    while pending:
        state = sim.state()
        now = state.time
        if now >= pending[0][0]:
            kind = pending.pop(0)[1]
            if kind in ("goal", "preempt"):
                trajectory = demo_trajectory(names)
                if kind == "preempt":   # a step: the far pose, now
                    trajectory.points[0].positions = list(np.array(HOME) + 0.5)
                c.set_trajectory(trajectory, now)
            elif kind == "mode":
                c.set_mode("gravity_compensation", now)
            elif kind == "gap":            # states stop: the watchdog holds
                for k in range(1, 40):
                    safe = c.check_watchdog(now + k * 0.004)
                    if safe is not None:
                        answer(safe, now + k * 0.004)
                sim.set_time(now + 0.16)
                continue
            elif kind == "push":
                sim.set_disturbance({"elbow": 60.0})
        answer(c.update(now, state.names, state.position, state.velocity), now)
    assert c.contact.collided, "the push must trip the reflex"
    assert max(times) > 2.0
    worst = steps_within_rate(taus, times)
    print(f"worst step over the torque rate's allowance: {worst:.3f}")
    assert worst <= 1.0 + 1e-9
    assert c._limits.acting()   # the rate acted (start, the step, the hold) and was counted


def test_the_demo_never_reaches_the_default_rate(arm_urdf, arm_model):
    """The demo trajectory's peak |dtau/dt| from the core closed loop, rate limit off."""
    names = arm_model.joint_names
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(DEFAULT_ARM_HOME))
    c = controller_for(arm_model, limits=LimitsConfig(joint_limits=True, torque_rate=0.0))
    state = sim.state()
    c.update(0.0, state.names, state.position, state.velocity)
    sim.set_command(c.update(0.0, state.names, state.position, state.velocity).tau)
    c.set_trajectory(demo_trajectory(names), 0.0)
    last, peak = None, np.zeros(len(names))
    end = c.trajectory_end_time + 0.5
    while sim.time < end:
        sim.step()
        state = sim.state()
        tau = c.update(state.time, state.names, state.position, state.velocity).tau
        sim.set_command(tau)
        if last is not None:
            peak = np.maximum(peak, np.abs(tau - last) / DT)
        last = tau.copy()
    print("demo peak |dtau/dt| per joint, N m/s:", np.round(peak, 1).tolist())
    assert peak.max() < RATE


# --- robot_compensates_gravity ----------------------------------------------------------

@pytest.mark.parametrize("mode", ["gravity_compensation", "feedforward_pd", "computed_torque"])
def test_the_command_is_the_full_law_minus_gravity(arm_model, mode):
    names = arm_model.joint_names
    off = LimitsConfig(torque_rate=0.0, soft_margin=0.0)
    full = controller_for(arm_model, mode=mode, limits=off, contact=ContactConfig())
    omitted = controller_for(arm_model, mode=mode, limits=off, robot_compensates_gravity=True,
                             contact=ContactConfig())
    full.set_payload("tool0", 0.8, (0.0, 0.0, 0.05))
    omitted.set_payload("tool0", 0.8, (0.0, 0.0, 0.05))
    q, qd = HOME + 0.05, np.full(6, 0.1)
    for c in (full, omitted):
        c.update(0.0, names, HOME, np.zeros(6))
    a = full.update(0.002, names, q, qd).tau
    b = omitted.update(0.002, names, q, qd).tau
    np.testing.assert_allclose(b, a - gravity(full.model, q), atol=1e-9)
    # the observer is told the torque the joints feel, the robot's gravity included
    full.update(0.004, names, q, qd)
    omitted.update(0.004, names, q, qd)
    np.testing.assert_allclose(omitted.contact.tau_ext, full.contact.tau_ext, atol=1e-9)


def test_a_plant_that_adds_gravity_holds_the_arm(arm_urdf, arm_model):
    names = arm_model.joint_names
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(zip(names, HOME)),
                    compensates_gravity=True)       # rbd_mujoco_sim plant_compensates_gravity
    c = controller_for(arm_model, robot_compensates_gravity=True)
    state = sim.state()
    c.update(0.0, state.names, state.position, state.velocity)
    for _ in range(2000):
        state = sim.state()
        sim.set_command(c.update(state.time, state.names, state.position, state.velocity).tau)
        sim.step()
    drift = np.abs(sim.state().position - HOME).max()
    print(f"robot adds gravity: drift after 2 s {drift:.2e} rad")
    assert drift < 0.01


# --- MuJoCo: a joint pushed toward its limit stops inside the margin ------------------------

# shoulder_lift: its effort limit (150 N m) leaves room to brake against 5x its gravity
# torque at HOME (56 N m); the elbow's (80 N m) against its 55 N m barely does: pushed from
# rest it reaches 5.8 rad/s, twice its velocity limit, before the brake wins
JOINT = 1


def pushed_toward_the_limit(arm_urdf, arm_model, mode, target=None, seconds=3.0, **config):
    """Joint JOINT pushed up by 5x its gravity torque at HOME (or driven to `target` in
    feedforward_pd); (its largest angle, its soft and hard upper limits, what was done)."""
    names = arm_model.joint_names
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(zip(names, HOME)))
    # the loop this test runs: a state every DT, its command applied one step later
    config.setdefault("expected_state_period", DT)
    config.setdefault("expected_delay", DT)
    c = controller_for(arm_model, mode=mode, **config)
    soft, hard = c._limits.joints.soft_upper[JOINT], c._limits.joints.upper[JOINT]
    push = 5.0 * abs(gravity(arm_model, HOME)[JOINT])
    state = sim.state()
    c.update(0.0, state.names, state.position, state.velocity)
    if target is not None:
        goal = HOME.copy()
        goal[JOINT] = target
        try:
            c.set_trajectory(JointTrajectory(names, [TrajectoryPoint(goal, time_from_start=1.0)]),
                             0.0)
        except Exception as refused:   # the trajectory checks refuse it: nothing moves
            return None, soft, hard, str(refused)
    else:
        sim.set_disturbance({names[JOINT]: push})
    peak = -np.inf
    for _ in range(int(seconds / DT)):
        state = sim.state()
        sim.set_command(c.update(state.time, state.names, state.position, state.velocity).tau)
        sim.step()
        peak = max(peak, sim.state().position[JOINT])
    if c.contact is not None:
        assert c.contact.collided, "the push must trip the reaction"
    return peak, soft, hard, (f"push {push:.1f} N m" if target is None
                              else f"target {target:.2f} rad")


def test_gravity_compensation_pushed_toward_the_limit_stops_in_the_margin(arm_urdf, arm_model):
    peak, soft, hard, what = pushed_toward_the_limit(arm_urdf, arm_model,
                                                     "gravity_compensation")
    print(f"gravity_compensation, {arm_model.joint_names[JOINT]} {what}: peak {peak:.3f} rad, "
          f"soft {soft:.3f}, hard {hard}")
    assert peak < hard
    assert peak > soft - 0.05     # it got there: the limit, not the push, stopped it


@pytest.mark.parametrize("beyond", [0.2, 0.1])
def test_feedforward_pd_beyond_the_soft_limit_is_refused_or_stopped(arm_urdf, arm_model, beyond):
    """0.2 rad beyond the soft limit lies beyond the hard one: refused; 0.1 rad is a target
    the trajectory checks accept, and the bounds stop the joint short of the hard limit."""
    c = controller_for(arm_model)
    target = c._limits.joints.soft_upper[JOINT] + beyond
    peak, soft, hard, what = pushed_toward_the_limit(arm_urdf, arm_model, "feedforward_pd",
                                                     target=target)
    print(f"feedforward_pd to {target:.2f} rad: peak {peak}, soft {soft}, hard {hard} ({what})")
    if target > hard:
        assert peak is None and "outside its limits" in what
    else:
        assert peak is not None and soft - 0.05 < peak < hard


def test_the_dart_plant_adds_gravity_too(arm_urdf, arm_model):
    """rbd_mujoco_sim's plant_compensates_gravity with engine dart: zero effort holds."""
    pytest.importorskip("dartpy")
    from rbd_control.sim.dart_plant import DartSimulator
    names = arm_model.joint_names
    drift = {}
    for adds in (False, True):
        sim = DartSimulator(arm_urdf, timestep=DT, initial_positions=dict(zip(names, HOME)),
                            compensates_gravity=adds, joint_damping=False)
        sim.set_command(np.zeros(6))
        sim.step(500)
        drift[adds] = np.abs(sim.state().position - HOME).max()
    assert drift[True] < 1e-6 < 0.05 < drift[False]


def test_a_reflex_that_gives_way_to_the_push_stops_in_the_margin(arm_urdf, arm_model):
    """The reflex (tau = g + K_R r) moves the arm along the external torque: toward the limit
    here, on top of the push; the bounds stop it as they stop the push alone."""
    contact = ContactConfig(reaction="reflex", reflex_gain=1.0, reflex_duration=5.0,
                            torque_thresholds=[5.0, 10.0, 5.0, 10.0])
    peak, soft, hard, what = pushed_toward_the_limit(arm_urdf, arm_model,
                                                     "gravity_compensation", contact=contact)
    print(f"reflex, {arm_model.joint_names[JOINT]} {what}: peak {peak:.3f} rad, "
          f"soft {soft:.3f}, hard {hard}")
    assert soft - 0.05 < peak < hard


def test_a_light_joint_pushed_past_its_velocity_limit_stays_a_steady_brake(arm_urdf, arm_model):
    """wrist_3 (1e-4 kg m2 against 12 N m) pushed by 2.4 N m: no stable brake holds it at its
    4 rad/s limit with a millisecond of delay, but the brake sized on the loop (k_brake) keeps
    it a steady speed. With k_velocity = effort / velocity as the brake, the same loop
    diverged (70 rad/s in the 2nd s, 104 in the 3rd)."""
    names = arm_model.joint_names
    wrist = names.index("wrist_3")
    sim = Simulator(arm_urdf, timestep=DT, initial_positions=dict(zip(names, HOME)))
    c = controller_for(arm_model, mode="gravity_compensation", expected_state_period=DT,
                       expected_delay=2 * DT,
                       limits=LimitsConfig(joint_limits=True, torque_rate=0.0))
    sim.set_disturbance({names[wrist]: 2.4})
    speeds, held = [], None
    for _ in range(int(3.0 / DT)):
        state = sim.state()
        tau = c.update(state.time, state.names, state.position, state.velocity).tau.copy()
        sim.set_command(held if held is not None else np.zeros(6))   # one step of delay
        held = tau
        sim.step()
        speeds.append(abs(sim.state().velocity[wrist]))
    speeds = np.array(speeds)
    second, third = speeds[1000:2000].max(), speeds[2000:].max()
    print(f"wrist_3 pushed by 2.4 N m: peak speed {second:.1f} rad/s in the 2nd s, "
          f"{third:.1f} in the 3rd")
    assert np.isfinite(speeds).all() and third <= 1.05 * second
    assert np.ptp(speeds[2000:]) < 0.1 * third     # a steady speed, not an oscillation


def test_the_default_rate_lets_an_unheld_arm_start_without_sinking(arm_urdf, arm_model):
    """limits.torque_rate's default (20000 N m/s) on a plant that nothing holds when the
    controller starts, at the stretched pose (58 N m of gravity on shoulder_lift): the first
    command (its dt one expected_state_period, 4 ms) may already reach 80 N m, so neither
    feedforward_pd nor gravity_compensation sinks. At libfranka's 1000 N m/s the first
    commands ramp over 58 ms: feedforward_pd sinks 95 mrad and returns (37 mrad left at 1 s),
    gravity_compensation, which has no position to return to, keeps the speed it gained
    (doc/concepts/safety_and_loop.md)."""
    from closed_loop_support import make_plant
    from test_closed_loop import POSES
    model = arm_model
    q0 = np.array(POSES["stretched_sideways"])
    assert LimitsConfig().torque_rate == 20000.0
    sunk = {}
    for mode in ("feedforward_pd", "gravity_compensation"):
        for rate in (None, RATE):
            plant = make_plant(arm_urdf, model.joint_names)
            plant.reset(q0)
            limits = {} if rate is None else dict(limits=LimitsConfig(torque_rate=rate))
            c = Controller(model, ControllerConfig(mode=mode, **limits))
            deviation = []
            for _ in range(int(1.0 / DT)):
                q, qd = plant.state()
                plant.step(c.update(plant.time, plant.joint_names, q, qd).tau)
                deviation.append(np.abs(plant.state()[0] - q0).max())
            sunk[mode, rate] = max(deviation[:100]), deviation[-1]
            print(f"{mode}, rate {rate or 'default'}: sank {sunk[mode, rate][0] * 1e3:.2f} mrad "
                  f"in 0.1 s, {sunk[mode, rate][1] * 1e3:.2f} mrad from the pose at 1 s")
    for mode in ("feedforward_pd", "gravity_compensation"):
        assert sunk[mode, None][0] < 1e-4 and sunk[mode, None][1] < 1e-4
        assert sunk[mode, RATE][0] > 0.05     # the ramp a slower rate makes
    assert sunk["feedforward_pd", RATE][1] < 0.05 < 1.0 < sunk["gravity_compensation", RATE][1]
