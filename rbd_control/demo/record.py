"""Recording the controller's tuning topics, joined by stamp (sim time)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE


@dataclass
class Series:
    """Samples of one run, in time order; arrays are (samples, joints)."""

    time: list = field(default_factory=list)
    desired: list = field(default_factory=list)
    actual: list = field(default_factory=list)
    effort: list = field(default_factory=list)

    def arrays(self):
        order = np.argsort(self.time)
        return (
            np.asarray(self.time)[order],
            np.asarray(self.desired)[order],
            np.asarray(self.actual)[order],
            np.asarray(self.effort)[order],
        )


class Recorder:
    """Joins the controller's ~/desired and ~/actual topics by stamp (sim time).

    Its subscriptions are drained (ros/drained.py): DemoRun takes every queued message at once
    between spins. Through the executor each of the ~3000 messages a second paid rclpy's
    per-callback wait-set bookkeeping, about half a core of this process in lock step, a core
    the simulator and the controller then lacked."""

    def __init__(self, drained, joints: Sequence[str]) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64

        self.joints = list(joints)
        self._desired: dict[int, np.ndarray] = {}
        self._actual: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.latencies: list[tuple[float, float]] = []  # (sim time of last state, seconds)
        self.sim_time = -1.0
        self._drained = drained
        depth = 5000  # ride out a slow moment of this process without losing samples
        self._subscriptions = [
            drained.subscribe(msg_type, topic, on_message, depth)
            for msg_type, topic, on_message in (
                (JointState, f"/{CONTROLLER_NODE}/desired", self._on_desired),
                (JointState, f"/{CONTROLLER_NODE}/actual", self._on_actual),
                (Float64, f"/{SIMULATOR_NODE}/command_latency", self._on_latency))]

    def close(self) -> None:
        """Stop recording (the samples stay)."""
        for subscription in self._subscriptions:
            self._drained.unsubscribe(subscription)
        self._subscriptions = []

    @staticmethod
    def _key(msg) -> int:
        return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

    def _on_desired(self, msg) -> None:
        self._desired[self._key(msg)] = np.array(msg.position)

    def _on_actual(self, msg) -> None:
        key = self._key(msg)
        self._actual[key] = (np.array(msg.position), np.array(msg.effort))
        self.sim_time = max(self.sim_time, key * 1e-9)

    def _on_latency(self, msg) -> None:
        self.latencies.append((self.sim_time, msg.data))

    def series(self, start: float, end: float) -> Series:
        out = Series()
        for key in sorted(self._actual):
            t = key * 1e-9
            if start <= t <= end and key in self._desired:
                q, tau = self._actual[key]
                out.time.append(t)
                out.desired.append(self._desired[key])
                out.actual.append(q)
                out.effort.append(tau)
        return out

    def latency_between(self, start: float, end: float) -> np.ndarray:
        return np.array([dt for t, dt in self.latencies if start <= t <= end])
