"""The demo's run: the phases driven through the running nodes, with a progress line."""
from __future__ import annotations

import sys
import time
from typing import Sequence

from rbd_control.bringup.processes import CONTROLLER_NODE, Bringup
from rbd_control.bringup.waypoints import GRAVITY_HOLD_S, SETTLE_AFTER_TRAJECTORY_S, demo_waypoints
from rbd_control.demo.record import Recorder
from rbd_control.ros.conversions import joint_trajectory_msg
from rbd_control.ros.drained import DrainedSubscriptions

STARTUP_TIMEOUT_S = 60.0  # wall: numba compiles the dynamics on a cold first start
# Stall detection: sim time must advance at least this much per this many wall seconds.
STALL_WALL_S = 20.0


class Progress:
    """One line per phase. On a terminal the line of the running phase is rewritten in place
    (sim time, wall time); elsewhere (a log, CI) each phase prints its line once, when it ends."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()
        self._last = 0.0
        self._started = time.monotonic()
        self._phase = None      # (name, phase start on the wall clock)
        self._line = ""

    def show(self, phase: str, sim_now: float, sim_end: float, *, force: bool = False) -> None:
        now = time.monotonic()
        if self._phase is not None and self._phase[0] != phase and sim_end <= 0.0:
            return   # a wait inside the running phase (a service, a subscription), not a phase
        if self._phase is None or self._phase[0] != phase:
            self.done()
            self._phase = (phase, now)
        self._line = (f"[demo] {phase:<22} sim t {max(sim_now, 0.0):6.2f} s / {sim_end:6.2f} s"
                      f"   wall {now - self._phase[1]:5.1f} s"
                      f" (total {now - self._started:5.1f} s)")
        if self._tty and (force or now - self._last >= 0.2):
            self._last = now
            sys.stderr.write("\r" + self._line + "   ")
            sys.stderr.flush()

    def done(self) -> None:
        """End the running phase's line."""
        if self._phase is not None:
            sys.stderr.write(("\r" if self._tty else "") + self._line + "   \n")
            sys.stderr.flush()
        self._phase = None


class DemoRun:
    """Drives the running nodes through the three phases and keeps what they did."""

    def __init__(self, node, executor, bringup: Bringup, joints: Sequence[str]) -> None:
        from rcl_interfaces.srv import SetParameters
        from trajectory_msgs.msg import JointTrajectory

        self.node, self.executor, self.bringup = node, executor, bringup
        self.joints = list(joints)
        # the 1 kHz topics this process watches (the recorder's, an excitation's states):
        # taken between spins (spin_until), not by the executor
        self.drained = DrainedSubscriptions(node)
        self.recorder = Recorder(self.drained, joints)
        self.progress = Progress()
        self.windows: dict[str, tuple[float, float]] = {}
        self._set_parameters = node.create_client(
            SetParameters, f"/{CONTROLLER_NODE}/set_parameters"
        )
        self._trajectory_pub = node.create_publisher(
            JointTrajectory, f"/{CONTROLLER_NODE}/joint_trajectory", 10
        )

    def spin_until(self, condition, timeout: float, what: str, phase: str, sim_end: float) -> None:
        """Spin until condition(); fail with the nodes' logs on timeout or a crashed node."""
        deadline = time.monotonic() + timeout
        while not condition():
            self.executor.spin_once(timeout_sec=0.02)
            self.drained.drain()
            self.bringup.check_alive()
            self.progress.show(phase, self.recorder.sim_time, sim_end)
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")

    def wait_for_sim_time(self, target: float, phase: str) -> None:
        # The wall time needed depends on the machine; fail only if sim time stalls.
        while self.recorder.sim_time < target:
            before = self.recorder.sim_time
            self.spin_until(
                lambda: self.recorder.sim_time >= min(target, before + 0.05),
                STALL_WALL_S,
                f"sim time to advance past {before:.2f} s",
                phase,
                target,
            )
        self.progress.show(phase, self.recorder.sim_time, target, force=True)

    def use(self, bringup: Bringup) -> None:
        """Go on with another bringup, with a new recorder: the new simulator's clock starts
        at 0 again, and the old subscriptions may still hold the last run's messages."""
        self.recorder.close()
        self.bringup = bringup
        self.recorder = Recorder(self.drained, self.joints)
        self.windows = {}

    def send(self, msg) -> None:
        """Publish a trajectory_msgs/JointTrajectory to the controller (once it subscribes:
        the topic is volatile, a message sent before would be lost)."""
        self.spin_until(lambda: self._trajectory_pub.get_subscription_count() > 0, 10.0,
                        "the controller's joint_trajectory subscription", "trajectory", 0)
        self._trajectory_pub.publish(msg)

    def set_mode(self, mode: str) -> None:
        self.set_parameters({"mode": mode}, mode)

    def set_parameters(self, values: dict, phase: str) -> None:
        """Set rbd_controller parameters at runtime; RuntimeError with the reason if refused."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        request = SetParameters.Request()
        request.parameters = [Parameter(name, value=value).to_parameter_msg()
                              for name, value in values.items()]
        self.spin_until(
            lambda: self._set_parameters.service_is_ready(), 10.0, "the parameter service", phase,
            0)
        future = self._set_parameters.call_async(request)
        what = ", ".join(f"{name} := {value}" for name, value in values.items())
        self.spin_until(future.done, 10.0, what, phase, 0)
        for name, result in zip(values, future.result().results):
            if not result.successful:
                raise RuntimeError(f"controller refused {name} := {values[name]}: {result.reason}")

    def wait_for_start(self, phase: str) -> None:
        """Until the controller has answered the first state (sim time >= 0)."""
        self.spin_until(
            lambda: self.recorder.sim_time >= 0.0, STARTUP_TIMEOUT_S, "the first command", phase,
            GRAVITY_HOLD_S)

    def gravity_compensation(self, phase: str = "gravity_compensation") -> None:
        # The controller starts in gravity_compensation and the lockstep simulator only
        # steps when commanded, so the arm is "released" at t = 0 with the controller on.
        self.wait_for_start(phase)
        start = self.recorder.sim_time
        self.wait_for_sim_time(start + GRAVITY_HOLD_S, phase)
        self.windows[phase] = (start, start + GRAVITY_HOLD_S)

    def track(self, mode: str, home: dict[str, float]) -> None:
        self.set_mode(mode)
        waypoints = demo_waypoints(home, self.joints)
        duration = waypoints[-1][0] + SETTLE_AFTER_TRAJECTORY_S
        start = self.recorder.sim_time
        self.send(joint_trajectory_msg(self.joints, waypoints))
        self.wait_for_sim_time(start + duration, mode)
        self.windows[mode] = (start, start + duration)
