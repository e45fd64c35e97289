"""Identification in the loop, ROS-free: MuJoCo at 1 kHz plays a robot that is not its URDF
(masses and centres of mass off by up to 25 %, viscous and Coulomb friction on every joint, a
1.5 kg payload on the flange), the Controller starts from the nominal URDF.

1. A 60 s excitation run on the arm (no payload) -> fit of pi and friction.
2. A 10 s run with the payload -> payload-only fit on top of the identified arm.
3. Validation on another trajectory; gravity compensation and feedforward_pd tracking with the
   identified, the exact and the nominal model.
The same with 1 % torque noise and 1e-4 rad encoder steps. Run with -s to see the figures.
"""
from __future__ import annotations

import numpy as np
import pytest

from ident_support import DT, coulomb_plant, measured, record_tracking
from rbd_control.control import Controller, ControllerConfig, JointTrajectory, TrajectoryPoint
from rbd_control.demo.plant import (HOLD_POSE, SETTLE_TIME, TRUE_FRICTION, TRUE_PAYLOAD,
                                    perturbed_urdf, true_friction_parameters, validation_waypoints)
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf, rnea_batch
from rbd_control.identification import Friction, excitation_trajectory, fit, with_payload
from rbd_control.identification.filtering import filtered_states
from rbd_control.identification.result import relative_rms, sliding_relative_rms

QUANTUM = 1e-4           # rad, encoder step
TORQUE_NOISE = 0.01      # of each joint's RMS torque, Gaussian
FIGURES = {}


@pytest.fixture(scope="module")
def nominal():
    return load_urdf(default_arm_urdf())


@pytest.fixture(scope="module")
def plant_xml():
    return perturbed_urdf(default_arm_urdf())


@pytest.fixture(scope="module")
def exact(plant_xml):
    """The plant's own rigid-body model with its payload, and its friction."""
    p = TRUE_PAYLOAD
    model = with_payload(load_urdf(plant_xml), p.link, p.mass, p.com, p.inertia)
    return model, true_friction_parameters()


@pytest.fixture(scope="module")
def recordings(nominal, plant_xml):
    excitation = excitation_trajectory(nominal, 60.0, iterations=60)
    validation = excitation_trajectory(nominal, 10.0, seed=3, iterations=20)

    def run(trajectory, duration, payloads=()):
        q0 = trajectory.sample(0.0)[0][0]
        return record_tracking(plant_xml, nominal, JointTrajectory.from_arrays(
            nominal.joint_names, *trajectory.waypoints()), duration, payloads=payloads, q0=q0)

    return dict(arm=run(excitation, excitation.duration),
                payload=run(excitation, 10.0, [TRUE_PAYLOAD]),
                validation=run(validation, validation.duration))


def corrupted(recording, seed):
    """The recording as sensors with 1e-4 rad steps and 1 % torque noise would give it."""
    rng = np.random.default_rng(seed)
    tau = recording["tau"]
    noise = rng.normal(size=tau.shape) * TORQUE_NOISE * np.sqrt(np.mean(tau ** 2, axis=0))
    return dict(recording, q=np.round(recording["q"] / QUANTUM) * QUANTUM, tau=tau + noise,
                qd=None)


@pytest.fixture(scope="module", params=["clean", "noisy"])
def campaign(request, nominal, recordings):
    noisy = request.param == "noisy"
    data = {k: corrupted(v, seed) if noisy else v
            for seed, (k, v) in enumerate(recordings.items())}
    arm = fit(nominal, data["arm"]["t"], data["arm"]["q"], data["arm"]["tau"])
    loaded = fit(arm.model, data["payload"]["t"], data["payload"]["q"], data["payload"]["tau"],
                 payload_link=TRUE_PAYLOAD.link)
    return dict(name=request.param, quantum=QUANTUM if noisy else 0.0, arm=arm, loaded=loaded,
                validation=data["validation"])


def test_validation_torques_within_3_percent(campaign, nominal, plant_xml):
    arm, rec = campaign["arm"], campaign["validation"]
    t, q, qd, qdd, tau = filtered_states(rec["t"], rec["q"], rec["tau"])
    predicted = arm.predict(q, qd, qdd)
    every = relative_rms(tau, predicted)
    slid = sliding_relative_rms(tau, predicted, qd, arm.friction.epsilon)
    true_friction = Friction.from_dict(nominal.joint_names, true_friction_parameters())
    for name, model, friction in (("nominal", nominal, Friction.none(nominal.joint_names)),
                                  ("exact", load_urdf(plant_xml), true_friction)):
        other = rnea_batch(model, q, qd, qdd) + friction.torque(qd)
        print(f"\n[{campaign['name']}] {name} model: all samples "
              f"{np.round(relative_rms(tau, other), 4)}, sliding "
              f"{np.round(sliding_relative_rms(tau, other, qd, friction.epsilon), 4)}")
    share = np.mean(np.abs(qd) >= 5 * arm.friction.epsilon, axis=0)
    FIGURES[campaign["name"], "validation_all"] = every
    FIGURES[campaign["name"], "validation_sliding"] = slid
    print(f"\n[{campaign['name']}] validation relative RMS, all samples {np.round(every, 4)}"
          f"\n[{campaign['name']}]   while sliding ({np.round(share, 2)} of the time) "
          f"{np.round(slid, 4)}\n  condition number {arm.condition_number:.1f}, "
          f"{arm.base.count} base parameters")
    assert np.all(slid < 0.03), f"validation error per joint {slid}"


def test_friction_within_10_percent(campaign):
    friction = campaign["arm"].friction
    b_true, c_true = np.array(list(TRUE_FRICTION.values())).T
    errors = np.concatenate((friction.viscous / b_true, friction.coulomb / c_true)) - 1
    FIGURES[campaign["name"], "friction"] = errors
    print(f"\n[{campaign['name']}] friction relative errors (viscous, coulomb) "
          f"{np.round(errors, 4)}")
    assert np.all(np.abs(errors) < 0.10)


def test_payload_mass_within_2_percent(campaign):
    payload = campaign["loaded"].payload
    error = payload.mass / TRUE_PAYLOAD.mass - 1
    FIGURES[campaign["name"], "payload"] = (payload.mass, payload.com)
    print(f"\n[{campaign['name']}] payload {payload.mass:.4f} kg (true {TRUE_PAYLOAD.mass}), com "
          f"{np.round(payload.com, 4)} (true {TRUE_PAYLOAD.com})")
    assert abs(error) < 0.02
    assert np.all(np.linalg.eigvalsh(payload.inertia) > -1e-9)


def controller_for(model, friction=None, mode="feedforward_pd"):
    return Controller(model, ControllerConfig(mode=mode, friction=friction))


def gravity_drift(plant_xml, model, quantum, seconds=5.0):
    sim = coulomb_plant(plant_xml, model.joint_names, HOLD_POSE, [TRUE_PAYLOAD])
    controller = controller_for(model, mode="gravity_compensation")
    drift = 0.0
    for _ in range(int(round(seconds / DT))):
        q, qd = measured(sim, quantum)
        sim.set_command(controller.update(sim.time, sim.joint_names, q, qd).tau)
        sim.step()
        drift = max(drift, float(np.abs(sim.state().position - HOLD_POSE).max()))
    return drift


def tracking_rms(plant_xml, model, friction, quantum):
    names = model.joint_names
    times, waypoints, velocities = validation_waypoints()
    trajectory = JointTrajectory(names, [
        TrajectoryPoint(positions=w, velocities=v, accelerations=np.zeros(6), time_from_start=t)
        for t, w, v in zip(times, waypoints, velocities)])
    sim = coulomb_plant(plant_xml, names, waypoints[0], [TRUE_PAYLOAD])
    controller = controller_for(model, friction)
    controller.update(0.0, sim.joint_names, *measured(sim, quantum))
    controller.set_trajectory(trajectory, 0.0)
    errors = []
    for _ in range(int(round((times[-1] + SETTLE_TIME) / DT))):
        command = controller.update(sim.time, sim.joint_names, *measured(sim, quantum))
        sim.set_command(command.tau)
        sim.step()
        errors.append(command.error)
    return float(np.sqrt(np.mean(np.square(errors))))


@pytest.fixture(scope="module")
def nominal_figures(nominal, plant_xml):
    """The nominal model's figures (they do not depend on the sensors' resolution)."""
    return dict(drift=gravity_drift(plant_xml, nominal, 0.0),
                rms=tracking_rms(plant_xml, nominal, None, 0.0))


def test_gravity_compensation_holds_with_identified_model(campaign, plant_xml, nominal_figures):
    identified = campaign["loaded"].model
    drift = gravity_drift(plant_xml, identified, campaign["quantum"])
    FIGURES[campaign["name"], "drift"] = (drift, nominal_figures["drift"])
    print(f"\n[{campaign['name']}] gravity compensation drift over 5 s: identified "
          f"{drift:.2e} rad, nominal {nominal_figures['drift']:.2e} rad")
    assert nominal_figures["drift"] > 0.1, "the nominal model should let the arm fall"
    assert drift < 1e-3


def test_tracking_with_identified_model(campaign, plant_xml, exact, nominal_figures):
    loaded, quantum = campaign["loaded"], campaign["quantum"]
    identified = tracking_rms(plant_xml, loaded.model, loaded.friction.as_dict(), quantum)
    exact_rms = tracking_rms(plant_xml, *exact, quantum)
    FIGURES[campaign["name"], "tracking"] = (identified, exact_rms, nominal_figures["rms"])
    print(f"\n[{campaign['name']}] feedforward_pd tracking RMS: identified {identified:.2e}, "
          f"exact {exact_rms:.2e}, nominal {nominal_figures['rms']:.2e} rad "
          f"(nominal / identified = {nominal_figures['rms'] / identified:.0f})")
    assert identified <= 2 * exact_rms
    assert identified * 20 <= nominal_figures["rms"]
