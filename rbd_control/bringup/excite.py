"""rbd_bringup --excite SECONDS --record FILE: run an excitation trajectory on the robot and
record joint_states (in the run's namespace) for rbd_identify.

The trajectory is identification.excitation_trajectory for the robot description (finite
Fourier series within the URDF limits, optimised for the condition number), preceded by a
LEAD_IN_S move from wherever the arm is to its start, sent to rbd_controller as one
JointTrajectory. SECONDS is any duration of at least one period (EXCITATION_PERIOD_S): it is
split into as many whole periods of at least that length as fit, each stretched so that they
fill SECONDS exactly (excitation_period): the series repeats, and ends at rest, only after
a whole period. Every /joint_states message (position, velocity; effort from the next
message, see JointStateRecorder.recording) until it has ended goes to FILE (.npz: joints, t,
q, qd, tau), which `rbd_identify --recording FILE` reads. The recorded positions are then
compared with the plan (plan_error): an arm that did not follow it (the controller dropped the
trajectory) fails the run, and says so, instead of handing over a recording of a held arm.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rbd_control.bringup.arguments import EXCITATION_PERIOD_S
from rbd_control.dynamics import InputError, load_urdf
from rbd_control.identification import excitation_trajectory
from rbd_control.identification.recording import Recording
from rbd_control.ros.conversions import joint_trajectory_msg, seconds

LEAD_IN_S = 3.0        # from the current pose to the excitation's start, at rest
SETTLE_S = 0.5
POINT_PERIOD_S = 0.02  # JointTrajectory points (quintic in between)
OPTIMISER_ITERATIONS = 100   # condition-number evaluations (~10 s for a 6-joint arm)
# The recorded motion's RMS error from the plan, over the plan's own RMS motion, above which
# the arm did not follow it: a trajectory the controller dropped (its watchdog on late joint
# states, on a loaded machine in real time) leaves the arm held, about 1; followed, ~0.01.
MAX_RELATIVE_ERROR = 0.5
START_DELAYS_S = np.arange(0.0, 1.0, 0.005)   # plan_error's search


class JointStateRecorder:
    """Every joint_states message (relative: in the drained node's namespace), through
    `drained` (ros/drained.py: its owner drains it)."""

    def __init__(self, drained, topic="joint_states"):
        from sensor_msgs.msg import JointState
        self.drained, self.messages = drained, []
        self.subscription = drained.subscribe(JointState, topic, self.messages.append, 10000)

    def close(self):
        self.drained.unsubscribe(self.subscription)

    @property
    def last_time(self):
        return seconds(self.messages[-1].header.stamp) if self.messages else None

    def recording(self, joints, start) -> Recording:
        """The samples of `joints` stamped at or after `start` that carry efforts, each state
        with the effort of the message after it.

        rbd_mujoco_sim (like gz_ros2_control) reports with a state the effort applied over the
        step that ended there; the fit pairs a state with the effort that acts from it (the
        central-difference acceleration at sample k is the step from k to k+1). Paired as
        published, the torques lag by one step, which on the perturbed default arm tripled
        the identified model's tracking error (and halved the regressor's condition number).
        """
        rows = [m for m in self.messages if seconds(m.header.stamp) >= start
                and len(m.effort) == len(m.name) == len(m.position)]
        index = [list(rows[0].name).index(j) for j in joints]
        t = np.array([seconds(m.header.stamp) for m in rows[:-1]])
        take = lambda field, part: np.array([np.asarray(getattr(m, field))[index]  # noqa: E731
                                             for m in part])
        qd = (take("velocity", rows[:-1])
              if all(len(m.velocity) == len(m.name) for m in rows) else None)
        return Recording(tuple(joints), t, take("position", rows[:-1]), take("effort", rows[1:]),
                         qd)


def plan_error(msg, recording: Recording, started: float) -> tuple[float, float, float]:
    """(RMS error of the recorded positions from the planned ones in rad, the same relative
    to the plan's RMS motion, the delay in s it began with) after the lead-in; `started`: the
    stamp the plan was sent at. The controller starts a trajectory when it has checked it
    (stamp 0: now), up to START_DELAYS_S later: a 60 s excitation's 3000 points took 0.2 s of
    sim time in lock step, 190 mrad of error at the delay 0 on a 6 mrad track."""
    plan_t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                       for p in msg.points])
    plan_q = np.array([p.positions for p in msg.points])
    t = recording.t - started
    inside = (t >= LEAD_IN_S) & (t <= plan_t[-1])

    def error_at(delay, every=1):
        planned = np.column_stack([np.interp(t[inside][::every] - delay, plan_t, column)
                                   for column in plan_q.T])
        return float(np.sqrt(np.mean((recording.q[inside][::every] - planned) ** 2))), planned

    delay = min(START_DELAYS_S, key=lambda d: error_at(d, every=10)[0])
    error, planned = error_at(delay)
    motion = float(np.sqrt(np.mean((planned - planned.mean(axis=0)) ** 2)))
    return error, error / motion, float(delay)


def excitation_period(duration: float) -> float:
    """The period that fills `duration` s with whole periods of at least EXCITATION_PERIOD_S:
    15 -> one of 15 s, 25 -> two of 12.5 s, 30 -> three of 10 s."""
    periods = max(1, int(np.floor(duration / EXCITATION_PERIOD_S + 1e-9)))
    return duration / periods


def excitation_msg(urdf, duration, joints=None, iterations=OPTIMISER_ITERATIONS):
    """(JointTrajectory message, its length in s) for the robot in `urdf`; InputError (the
    identification's) when there is none (a joint not controlled, duration under a period,
    efforts beyond the limits)."""
    model = load_urdf(urdf)
    joints = list(joints or model.joint_names)
    missing = sorted(set(model.joint_names) - set(joints))
    if missing:
        raise InputError(f"--excite needs every joint controlled; not controlled: {missing}")
    trajectory = excitation_trajectory(model, duration, period=excitation_period(duration),
                                       iterations=iterations)
    times = np.arange(0.0, trajectory.duration + 0.5 * POINT_PERIOD_S, POINT_PERIOD_S)
    q, qd, qdd = trajectory.sample(times)
    order = [model.joint_names.index(j) for j in joints]
    points = [(LEAD_IN_S + t, q[k, order], qd[k, order], qdd[k, order])
              for k, t in enumerate(times)]
    return joint_trajectory_msg(joints, points), LEAD_IN_S + trajectory.duration


def excitation_plan(urdf, duration, joints=None):
    """excitation_msg's (message, length), after one line saying what it will run."""
    period = excitation_period(duration)
    periods = int(round(duration / period))
    print(f"rbd_bringup: --excite {duration:g}: {periods} period{'s' * (periods > 1)} of "
          f"{period:g} s of excitation after a {LEAD_IN_S:g} s lead-in, "
          f"{LEAD_IN_S + duration:g} s of sim time (optimising it takes a few seconds)",
          flush=True)
    return excitation_msg(urdf, duration, joints)


class Excitation:
    """Drives one excitation from rbd_bringup's loop: start(), then poll() until it returns
    the path of the written recording (also in `recorded`). planned: excitation_plan's."""

    def __init__(self, node, drained, planned, output: Path):
        from trajectory_msgs.msg import JointTrajectory
        self.msg, self.length = planned
        self.joints = list(self.msg.joint_names)
        self.output = Path(output)
        self.recorder = JointStateRecorder(drained)
        self.publisher = node.create_publisher(
            JointTrajectory, "rbd_controller/joint_trajectory", 10)
        self.started = None
        self.recorded: Path | None = None
        self.followed = False     # the recorded motion is the plan's (plan_error)
        self.summary = ""

    def start(self):
        if self.recorder.last_time is None or self.publisher.get_subscription_count() == 0:
            # no joint state yet, or the controller not matched: a goal sent now would be
            # lost (volatile QoS); try again on the next poll
            return
        self.started = self.recorder.last_time
        self.publisher.publish(self.msg)
        print(f"rbd_bringup: excitation sent ({self.length:.0f} s of sim time)", flush=True)

    def poll(self):
        if self.started is None or self.recorder.last_time < self.started + self.length + SETTLE_S:
            return None
        self.output.parent.mkdir(parents=True, exist_ok=True)
        recording = self.recorder.recording(self.joints, self.started)
        path = self.recorded = recording.save(self.output)
        error, relative, delay = plan_error(self.msg, recording, self.started)
        self.followed = relative <= MAX_RELATIVE_ERROR
        self.summary = (f"excitation recorded to {path}, RMS error from the plan "
                        f"{1e3 * error:.1f} mrad ({100 * relative:.0f} % of its motion; "
                        f"begun {delay:.2f} s after it was sent)")
        if self.followed:
            print(f"rbd_bringup: {self.summary}; identify with rbd_identify --recording {path}",
                  flush=True)
        else:
            self.summary += (": the arm did not follow it, a recording not worth fitting (the "
                             "controller's log says why; on a loaded machine try --lockstep)")
            print(f"rbd_bringup: {self.summary}", flush=True)
        return path
