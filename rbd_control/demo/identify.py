"""The demo's identification phase: a robot that is not its URDF, identified through the running
nodes, and the controller with the nominal, the identified and the exact model.

rbd_mujoco_sim plays plant.py's perturbed arm (plant_description, stiff_friction; the payload
from run 2 on), rbd_controller starts from the nominal URDF. Each run is a fresh bringup:

  1. excitation: EXCITE_S s (REALTIME_EXCITE_S in real time) of excite.py's trajectory in
     feedforward_pd, /joint_states recorded -> identification.fit of the inertial parameters
     and joint friction -> identified.urdf and friction.yaml, the files rbd_identify writes
  2. payload excitation: PAYLOAD_EXCITE_S s of the same excitation with the payload on -> a
     payload-only fit on the identified arm (rbd_identify --urdf identified.urdf
     --payload-link tool0) -> payload.yaml
  3. nominal model, with the payload: gravity_compensation released at plant.HOLD_POSE
     (drift over GRAVITY_HOLD_S), feedforward_pd on plant.validation_waypoints (RMS)
  4. identified model: identified.urdf as robot_description, friction.yaml and payload.yaml
     as parameter files, the way a user applies them; the same hold and trajectory
  5. exact model (the plant's URDF, its friction and payload as parameters): the trajectory,
     the reference the identified model's tracking is judged against

The acceptance (README, identification): drift < MAX_IDENTIFIED_DRIFT with the identified
model where the nominal one falls (> MIN_NOMINAL_DRIFT); feedforward_pd RMS within
MAX_RMS_VS_EXACT of the exact model's and at least MIN_RMS_GAIN times below the nominal's.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from rbd_control.bringup.processes import EXCITATION_BANDWIDTH, Bringup, BringupConfig
from rbd_control.demo.plant import (HOLD_POSE, SETTLE_TIME, TRUE_PAYLOAD, perturbed_urdf,
                                    true_friction_parameters, validation_waypoints)
from rbd_control.demo.record import Series
from rbd_control.demo.report import drift, tracking_stats
from rbd_control.demo.run import DemoRun

# s of excitation for the arm's fit (after excite.LEAD_IN_S): 3 periods of the 10 s trajectory
# in lock step, where each recorded torque is exactly the one applied (30 s fits as well as 60:
# identified / exact RMS 0.95-1.28x, peak residual 3.7 N m either way); 6 in real time, whose
# timing noise more periods average out (identified / exact 1.18-1.76x with 60 s)
EXCITE_S = 30.0
REALTIME_EXCITE_S = 60.0
PAYLOAD_EXCITE_S = 10.0        # s of the same excitation with the payload
EXCITATION_ITERATIONS = 30     # condition-number evaluations of the excitation optimiser
LEAD_IN_S, REST_S = 2.0, 1.0   # validation trajectory: to the first waypoint, at rest there
MODELS = ("nominal", "identified", "exact")
MIN_EXCITATION_RANGE = 0.1     # rad every joint moves in a recorded excitation
CHECK_S, SEND_ATTEMPTS = 0.5, 6   # a trajectory must start moving within CHECK_S s
# The controller's watchdog extrapolates the last state's stamp by the wall time since it came
# (rbd_control/ros/controller/context.py, control_time): a lockstep simulator starved of CPU for
# longer than state_timeout (0.1 s in the shipped config) trips it, and it drops the
# trajectory. These runs are long; they ride out stalls of up to a second.
STATE_TIMEOUT_S = 1.0

MAX_IDENTIFIED_DRIFT = 1e-3    # rad over the hold
MIN_NOMINAL_DRIFT = 0.1        # rad: the nominal model lets the arm fall
MAX_RMS_VS_EXACT = 2.0
MIN_RMS_GAIN = 20.0            # nominal RMS / identified RMS


@dataclass
class ModelRun:
    """One model on the plant: the gravity_compensation hold (None if not run) and the
    feedforward_pd validation trajectory."""

    hold: Series | None
    track: Series

    @property
    def drift(self) -> float | None:
        return None if self.hold is None else float(drift(self.hold).max())

    @property
    def rms(self) -> float:
        return float(np.sqrt(np.mean(tracking_stats(self.track).rms ** 2)))


@dataclass
class IdentificationOutcome:
    runs: dict[str, ModelRun]
    friction_error: np.ndarray     # identified / true - 1, viscous then Coulomb per joint
    payload_mass: float            # kg, identified
    condition_number: float
    recorded_s: float              # s of /joint_states the fits saw
    excite_s: float                # s of excitation for the arm's fit
    folder: Path                   # the plant, recordings and rbd_identify-style outputs


class IdentificationPhase:
    """Runs the five bringups on the demo's rclpy node; `base` is the demo's BringupConfig
    (config file, pacing, log directory), `description` its /robot_description publisher."""

    def __init__(self, node, executor, base: BringupConfig, description, output: Path) -> None:
        from rbd_control.dynamics import load_urdf

        self.node, self.executor, self.base = node, executor, base
        self.description = description
        self.folder = Path(output) / "identification"
        self.nominal_urdf = base.urdf
        self.nominal = load_urdf(base.urdf)
        self.joints = base.joints() or list(self.nominal.joint_names)
        self.plant = perturbed_urdf(base.urdf)
        self.demo: DemoRun | None = None

    def run(self) -> IdentificationOutcome:
        from rbd_control.dynamics import load_urdf
        from rbd_control.bringup.excite import excitation_msg
        from rbd_control.identification import fit
        from rbd_control.identification.cli import payload_yaml

        self.folder.mkdir(parents=True, exist_ok=True)
        self._write("plant.urdf", self.plant)
        excite_s = EXCITE_S if self.base.lockstep else REALTIME_EXCITE_S
        excitation, length = excitation_msg(self.nominal_urdf, excite_s, self.joints,
                                            iterations=EXCITATION_ITERATIONS)
        with self._bringup("excitation", "feedforward_pd", payload=False, excite=True):
            arm_data = self._excite(excitation, length, "excitation",
                                    self.folder / "excitation.npz")
        _say("fitting the inertial parameters and joint friction")
        arm = fit(self.nominal, arm_data.t, arm_data.q, arm_data.tau, arm_data.qd)
        identified = self._write("identified.urdf", arm.to_urdf(self.nominal_urdf))
        friction = self._write("friction.yaml", arm.friction_yaml())

        with self._bringup("payload excitation", "feedforward_pd", excite=True):
            lead_in = length - excite_s
            payload_data = self._excite(excitation, lead_in + PAYLOAD_EXCITE_S,
                                        "payload excitation",
                                        self.folder / "payload_excitation.npz")
        _say("fitting the payload on the identified arm")
        loaded = fit(load_urdf(identified.read_text()), payload_data.t, payload_data.q,
                     payload_data.tau, payload_data.qd, payload_link=TRUE_PAYLOAD.link)
        payload = self._write("payload.yaml", payload_yaml(loaded.payload))

        runs = {}
        with self._bringup("nominal", "gravity_compensation"):
            runs["nominal"] = self._evaluate("nominal", hold=True)
        with self._bringup("identified", "gravity_compensation", urdf=identified.read_text(),
                           params_files=[friction, payload]):
            runs["identified"] = self._evaluate("identified", hold=True)
        with self._bringup("exact", "feedforward_pd", urdf=self.plant,
                           parameters=self._exact_parameters()):
            runs["exact"] = self._evaluate("exact", hold=False)
        self._publish(self.nominal_urdf)
        return IdentificationOutcome(
            runs, self._friction_error(arm.friction), loaded.payload.mass, arm.condition_number,
            float(np.ptp(arm_data.t) + np.ptp(payload_data.t)), excite_s, self.folder)

    # --- the runs -------------------------------------------------------------------

    def _bringup(self, name, mode, *, payload=True, excite=False, urdf=None, params_files=(),
                 parameters=None):
        """A context manager: this run's nodes, with self.demo following them. An excitation
        (excite) takes the stiffest gains the loop it runs allows (EXCITATION_BANDWIDTH)."""
        self._publish(urdf or self.nominal_urdf)
        simulator = {"stiff_friction": True}
        if payload:
            p = TRUE_PAYLOAD
            simulator.update({"payload.link": p.link, "payload.mass": p.mass,
                              "payload.com": list(p.com), "payload.inertia": list(p.inertia)})
        home = self.base.initial_positions if name == "excitation" else \
            dict(zip(self.nominal.joint_names, HOLD_POSE))
        excitation = EXCITATION_BANDWIDTH if excite else {}
        config = replace(
            self.base, urdf=urdf or self.nominal_urdf, mode=mode, initial_positions=dict(home),
            plant_urdf=self.plant, extra_simulator_parameters=simulator,
            controller_params_files=list(params_files),
            extra_controller_parameters={**self.base.extra_controller_parameters,
                                         **excitation,
                                         "state_timeout": STATE_TIMEOUT_S, **(parameters or {})},
            log_dir=(self.base.log_dir / f"identification_{name.replace(' ', '_')}"
                     if self.base.log_dir else None))
        return _Run(self, Bringup(config))

    def _publish(self, urdf: str) -> None:
        from std_msgs.msg import String

        self.description.publish(String(data=urdf))

    def _excite(self, msg, record_s, phase, path):
        """Send the excitation; /joint_states for record_s s of sim time from now."""
        from rbd_control.bringup.excite import JointStateRecorder

        demo = self.demo
        self._running(phase)
        recorder = JointStateRecorder(demo.drained)
        start = demo.recorder.sim_time
        self._drive(msg, record_s, [(0.0, record_s)], phase)
        recorder.close()
        recording = recorder.recording(self.nominal.joint_names, start)
        recording.save(path)
        if not np.ptp(recording.q, axis=0).min() > MIN_EXCITATION_RANGE:
            raise RuntimeError(f"{phase}: the arm did not follow the excitation (joint ranges "
                               f"{np.ptp(recording.q, axis=0)} rad; see controller.log)")
        return recording

    def _drive(self, msg, length, moving, phase):
        """Send a trajectory and wait `length` s of sim time; (start, end) of the run that went
        through. A trajectory the controller drops on the way (its watchdog trips and holds
        when it is starved of CPU for longer than state_timeout: the desired position stops
        inside a `moving` window, (from, to) s after the start) is sent again, at most
        SEND_ATTEMPTS times; every sample stays valid for a fit, the figures use the last run."""
        demo = self.demo
        for _ in range(SEND_ATTEMPTS):
            start = self._follow(msg, phase)
            while demo.recorder.sim_time < start + length:
                before = demo.recorder.sim_time
                demo.wait_for_sim_time(min(before + CHECK_S, start + length), phase)
                if self._stopped(before - start, demo.recorder.sim_time - start, moving, start):
                    print(f"rbd_demo: {phase}: the controller dropped the trajectory at sim t = "
                          f"{before:.2f} s (watchdog?); sending it again", flush=True)
                    break
            else:
                return start, start + length
        raise RuntimeError(f"{phase}: the controller dropped the trajectory {SEND_ATTEMPTS} "
                           "times (see controller.log)")

    def _stopped(self, t0, t1, moving, start) -> bool:
        """The desired position stood still over [t0, t1] (s after start) inside a window
        where the trajectory moves."""
        if not any(a <= t0 and t1 <= b for a, b in moving) or t1 - t0 < 0.5 * CHECK_S:
            return False
        desired = self.demo.recorder.series(start + t0, start + t1).arrays()[1]
        return len(desired) > 1 and np.ptp(desired, axis=0).max() < 1e-9

    def _follow(self, msg, phase) -> float:
        """Send a trajectory and see the controller's desired position move off the current
        one within CHECK_S of sim time; send it again if not (at most SEND_ATTEMPTS times).
        Returns the sim time it was (last) sent at."""
        demo = self.demo
        for _ in range(SEND_ATTEMPTS):
            start = demo.recorder.sim_time
            demo.send(msg)
            demo.wait_for_sim_time(start + CHECK_S, phase)
            desired = demo.recorder.series(start, start + CHECK_S).arrays()[1]
            if len(desired) and np.ptp(desired, axis=0).max() > 1e-3:
                return start
            print(f"rbd_demo: {phase}: the controller's desired position did not move "
                  f"{CHECK_S:g} s after the trajectory was sent; sending it again", flush=True)
        raise RuntimeError(f"{phase}: the controller did not follow the trajectory "
                           f"(sent {SEND_ATTEMPTS} times; see controller.log)")

    def _running(self, phase):
        """Until the loop runs: the first answer, then past the simulator's lockstep resync
        window (a trajectory sent within it finds the states stale and is refused)."""
        self.demo.wait_for_start(phase)
        self.demo.wait_for_sim_time(self.demo.recorder.sim_time + 0.2, phase)

    def _evaluate(self, name, hold: bool) -> ModelRun:
        from rbd_control.ros.conversions import joint_trajectory_msg

        demo, held = self.demo, None
        if hold:
            demo.gravity_compensation(f"{name} gravity hold")
            held = demo.recorder.series(*demo.windows[f"{name} gravity hold"])
            demo.set_mode("feedforward_pd")
        else:
            self._running(name)
        times, waypoints, velocities = validation_waypoints()
        rest = np.zeros(len(self.nominal.joint_names))
        first = LEAD_IN_S + REST_S
        points = [(LEAD_IN_S, waypoints[0], rest, rest)] + [
            (first + t, q, qd, rest) for t, q, qd in zip(times, waypoints, velocities)]
        moving = [(0.0, LEAD_IN_S), (first, first + times[-1])]
        start, _ = self._drive(joint_trajectory_msg(self.nominal.joint_names, points),
                               first + times[-1] + SETTLE_TIME, moving, f"{name} feedforward_pd")
        end = start + first + times[-1] + SETTLE_TIME
        return ModelRun(held, demo.recorder.series(start + first, end))

    def _exact_parameters(self) -> dict:
        """The plant's friction and payload as rbd_controller parameters."""
        p = TRUE_PAYLOAD
        out = {"payload.link": p.link, "payload.mass": p.mass, "payload.com": list(p.com),
               "payload.inertia": list(p.inertia)}
        for joint, values in true_friction_parameters().items():
            out.update({f"friction.{joint}.{k}": v for k, v in values.items()})
        return out

    def _friction_error(self, friction) -> np.ndarray:
        true = true_friction_parameters()
        found = friction.as_dict()
        return np.array([found[j][k] / true[j][k] - 1 for k in ("viscous", "coulomb")
                         for j in self.nominal.joint_names])

    def _write(self, name: str, text: str) -> Path:
        path = self.folder / name
        path.write_text(text)
        return path


def _say(what: str) -> None:
    print(f"[demo] identification: {what}", file=sys.stderr, flush=True)


class _Run:
    """`with phase._bringup(...)`: start the nodes, point the phase's DemoRun at them."""

    def __init__(self, phase: IdentificationPhase, bringup: Bringup) -> None:
        self.phase, self.bringup = phase, bringup

    def __enter__(self):
        self.bringup.start()
        phase = self.phase
        if phase.demo is None:
            phase.demo = DemoRun(phase.node, phase.executor, self.bringup, phase.joints)
        else:
            phase.demo.use(self.bringup)
        return self.bringup

    def __exit__(self, *exc) -> None:
        if self.phase.demo is not None:
            self.phase.demo.progress.done()   # the run's last phase line (the exact run's too)
        self.bringup.stop()
