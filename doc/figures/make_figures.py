"""The documentation's demo figures, ROS-free: the demo's phases run by `Simulator` (MuJoCo,
1 kHz) and `Controller` in lock step, plotted by the demo's own plotting code.

    python doc/figures/make_figures.py            # writes doc/images/*.png (~1 min warm)
    python doc/figures/make_figures.py contact    # only the named ones (tracking, cartesian,
                                                  # contact, identification)

The demo (`bash scripts/demo.sh`) draws the same figures from the real nodes over ROS 2
topics; these differ from them only by the transport (no ROS, no one-step transport delay).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rbd_control.bringup.processes import EXCITATION_BANDWIDTH, LOCKSTEP_LOOP
from rbd_control.bringup.waypoints import (DEFAULT_ARM_HOME, GRAVITY_HOLD_S,
                                           SETTLE_AFTER_TRAJECTORY_S, TRACKING_MODES,
                                           demo_waypoints)
from rbd_control.control import Controller, ControllerConfig, JointTrajectory
from rbd_control.demo import cartesian, contact, identify_report
from rbd_control.demo.identify import IdentificationOutcome, ModelRun
from rbd_control.demo.plant import (HOLD_POSE, SETTLE_TIME, TRUE_PAYLOAD, perturbed_urdf,
                                    true_friction_parameters, validation_waypoints)
from rbd_control.demo.plots import write_plots
from rbd_control.demo.record import Series
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import frame_pose, load_urdf
from rbd_control.identification import excitation_trajectory, fit, with_payload
from rbd_control.sim.simulator import Simulator

IMAGES = Path(__file__).resolve().parents[1] / "images"


# the demo runs its simulator in lock step: the controller designs its gains for that loop
LOOP = LOCKSTEP_LOOP


def run(simulator: Simulator, controller: Controller, duration: float, series: Series,
        on_step=None) -> None:
    """Lock step at the simulator's rate: each state answered, its torque held for one step."""
    for _ in range(int(round(duration / simulator.timestep))):
        state = simulator.state()
        if on_step is not None:
            on_step(state)
        command = controller.update(state.time, state.names, state.position, state.velocity)
        simulator.set_command(command.tau)
        series.time.append(state.time)
        series.desired.append(command.desired_q.copy())
        series.actual.append(controller_order(state, controller))
        series.effort.append(simulator.command)
        simulator.step()


def controller_order(state, controller) -> np.ndarray:
    index = {name: k for k, name in enumerate(state.names)}
    return np.array([state.position[index[name]] for name in controller.joint_names])


def gravity_phase(urdf: str, model) -> Series:
    simulator = Simulator(urdf, commanded_joints=model.joint_names,
                          initial_positions=DEFAULT_ARM_HOME)
    controller = Controller(model, ControllerConfig(mode="gravity_compensation", **LOOP))
    series = Series()
    run(simulator, controller, GRAVITY_HOLD_S, series)
    return series


def tracking_phase(urdf: str, model, mode: str) -> Series:
    simulator = Simulator(urdf, commanded_joints=model.joint_names,
                          initial_positions=DEFAULT_ARM_HOME)
    controller = Controller(model, ControllerConfig(mode=mode, **LOOP))
    waypoints = demo_waypoints(DEFAULT_ARM_HOME, model.joint_names)
    times, q, qd, qdd = (np.array(column) for column in zip(*waypoints))
    state = simulator.state()
    controller.update(0.0, state.names, state.position, state.velocity)
    controller.set_trajectory(JointTrajectory.from_arrays(model.joint_names, times, q, qd, qdd),
                              0.0)
    series = Series()
    run(simulator, controller, times[-1] + SETTLE_AFTER_TRAJECTORY_S, series)
    return series


def cartesian_phase(urdf: str, model) -> cartesian.CartesianResult:
    """The demo's push: tool0 held at the work pose, pushed with PUSH_FORCE, released."""
    simulator = Simulator(urdf, commanded_joints=model.joint_names,
                          initial_positions=cartesian.WORK_JOINTS)
    config = ControllerConfig(mode="cartesian_impedance", ee_link=cartesian.EE_LINK, **LOOP)
    controller = Controller(model, config)
    start = [cartesian.WORK_JOINTS[j] for j in model.joint_names]
    positions = []

    def push(state):
        t = state.time
        if abs(t - cartesian.HOLD_S) < 0.5 * simulator.timestep:
            simulator.set_external_wrench(cartesian.EE_LINK, cartesian.PUSH_FORCE)
        if abs(t - cartesian.HOLD_S - cartesian.PUSH_S) < 0.5 * simulator.timestep:
            simulator.set_external_wrench(cartesian.EE_LINK, (0.0, 0.0, 0.0))
        q = controller_order(state, controller)
        positions.append(frame_pose(model, q, cartesian.EE_LINK)[:3, 3])

    run(simulator, controller, cartesian.HOLD_S + cartesian.PUSH_S + cartesian.RELEASE_S, Series(),
        push)
    positions = np.array(positions)
    time = np.arange(len(positions)) * simulator.timestep
    displacement = positions - frame_pose(model, start, cartesian.EE_LINK)[:3, 3]

    def steady(until):
        window = (time > until - cartesian.AVERAGE_S) & (time <= until)
        return displacement[window].mean(axis=0)

    return cartesian.CartesianResult(
        time=time, displacement=displacement,
        expected=cartesian.expected_displacement(model, config.cartesian_stiffness, LOOP),
        yielded=steady(cartesian.HOLD_S + cartesian.PUSH_S), residual=steady(time[-1]))


def contact_phase(urdf: str, model) -> contact.ContactResult:
    """The demo's contact phase: from rest at the work pose, the pan joint driven through the
    box in computed_torque with contact.reaction hold (contact.simulate)."""
    return contact.simulate(urdf, model, LOOP)


def identification_campaign(urdf: str, nominal) -> IdentificationOutcome:
    """The demo's phase 6 without ROS: the perturbed arm (rbd_control.demo.plant) excited for
    60 s in feedforward_pd on the nominal model, fitted; 10 s with the payload, its fit; then
    each model holds the loaded arm (gravity_compensation) and follows the validation
    trajectory (feedforward_pd, with its friction)."""
    plant = perturbed_urdf(urdf)
    joints = list(nominal.joint_names)
    excitation = excitation_trajectory(nominal, 60.0, iterations=60)

    def plant_at(pose, payloads):
        return Simulator(plant, commanded_joints=joints, payloads=payloads, stiff_friction=True,
                         initial_positions=dict(zip(joints, pose)))

    def follow(simulator, controller, trajectory, duration):
        state = simulator.state()
        controller.update(state.time, state.names, state.position, state.velocity)
        controller.set_trajectory(trajectory, state.time)
        series = Series()
        run(simulator, controller, duration, series)
        return series

    def excite(duration, payloads=()):
        simulator = plant_at(excitation.sample(0.0)[0][0], payloads)
        trajectory = JointTrajectory.from_arrays(joints, *excitation.waypoints())
        controller = Controller(nominal, ControllerConfig(mode="feedforward_pd", **LOOP,
                                                          **EXCITATION_BANDWIDTH))
        t, _, q, tau = follow(simulator, controller, trajectory, duration).arrays()
        return t, q, tau

    arm = fit(nominal, *excite(excitation.duration))
    loaded = fit(arm.model, *excite(10.0, [TRUE_PAYLOAD]), payload_link=TRUE_PAYLOAD.link)
    p = TRUE_PAYLOAD
    models = {"nominal": (nominal, None),
              "identified": (loaded.model, loaded.friction.as_dict()),
              "exact": (with_payload(load_urdf(plant), p.link, p.mass, p.com, p.inertia),
                        true_friction_parameters())}
    times, waypoints, velocities = validation_waypoints()
    validation = JointTrajectory.from_arrays(joints, times, waypoints, velocities,
                                             np.zeros_like(waypoints))
    runs = {}
    for name, (model, friction) in models.items():
        hold = None
        if name != "exact":   # as in the demo: the exact model's hold says nothing new
            hold = Series()
            holding = Controller(model, ControllerConfig(mode="gravity_compensation", **LOOP))
            run(plant_at(HOLD_POSE, [TRUE_PAYLOAD]), holding, GRAVITY_HOLD_S, hold)
        tracking = ControllerConfig(mode="feedforward_pd", friction=friction, **LOOP)
        track = follow(plant_at(waypoints[0], [TRUE_PAYLOAD]), Controller(model, tracking),
                       validation, times[-1] + SETTLE_TIME)
        runs[name] = ModelRun(hold=hold, track=track)
    return IdentificationOutcome(runs=runs, friction_error=np.zeros(0),
                                 payload_mass=loaded.payload.mass,
                                 condition_number=arm.condition_number,
                                 recorded_s=excitation.duration + 10.0,
                                 excite_s=excitation.duration, folder=IMAGES)


def main(names=()) -> int:
    """Every figure, or only those named (tracking, cartesian, contact, identification)."""
    wanted = set(names) or {"tracking", "cartesian", "contact", "identification"}
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    written = []
    if "tracking" in wanted:
        gravity = gravity_phase(urdf, model)
        tracking = {mode: tracking_phase(urdf, model, mode) for mode in TRACKING_MODES}
        written += write_plots(IMAGES, list(model.joint_names), gravity, tracking,
                               model.effort_limit)
    if "cartesian" in wanted:
        push = cartesian_phase(urdf, model)
        written.append(cartesian.write_plot(IMAGES, push))
        print(cartesian.summary(push))
    if "contact" in wanted:
        touched = contact_phase(urdf, model)
        written.append(contact.write_plot(IMAGES, touched, list(model.joint_names)))
        print(contact.summary(touched))
    if "identification" in wanted:
        outcome = identification_campaign(urdf, model)
        written.append(identify_report.write_plot(IMAGES, outcome))
        for name, result in outcome.runs.items():
            print(f"{name}: hold drift {result.drift}, tracking RMS {result.rms:.3g} rad")
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
