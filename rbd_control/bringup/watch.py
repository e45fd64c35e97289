"""What rbd_bringup watches while its nodes run: the loop (states and commands on the topics)
and the nodes' logs (a robot description they refused).

    LoopWatcher     counts joint_states and effort commands (relative: in the run's
                    namespace, rbd_bringup --namespace), keeps the first commanded
                    state and the last one; a progress line every 2 s
    LogWatch        one node's log lines since the last look; refusal(): the reason of a
                    refused robot description (REFUSALS), or None

A node that refuses its description keeps running without a model and commands nothing: its
log is the only place that says why, so rbd_bringup reads it and says it on its own console.
"""
from __future__ import annotations

import re
import time

from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE, NodeProcess
from rbd_control.params.controller import DEFAULT_COMMAND_TOPIC

# How each node logs a robot description it refuses (rbd_controller's
# ControllerNode._load_description, rbd_mujoco_sim's SimulatorNode._replace_model); the
# first group is the reason.
REFUSALS = {
    CONTROLLER_NODE: re.compile(r"rejected robot description from \S+: (.*)"),
    SIMULATOR_NODE: re.compile(r"robot_description from \S+ refused, keeping the last model: "
                               r"(.*)"),
}


class LogWatch:
    """Reads one node's log file from where it stopped last time (whole lines only)."""

    def __init__(self, child: NodeProcess) -> None:
        self.child = child
        self._read_to = 0    # bytes of the log already read

    def new_lines(self) -> list[str]:
        self.child.sync_log()
        with open(self.child.log_path, "rb") as log:
            log.seek(self._read_to)
            text = log.read()
        complete = text[:text.rfind(b"\n") + 1]
        self._read_to += len(complete)
        return complete.decode(errors="replace").splitlines()

    def refusal(self) -> str | None:
        """The reason of the first refused robot description logged since the last look."""
        pattern = REFUSALS.get(self.child.name)
        for line in self.new_lines():
            found = pattern.search(line) if pattern else None
            if found:
                return found[1]
        return None


class LoopWatcher:
    """Counts states and commands so the user sees the loop is closed (a line every 2 s).
    Drained (ros/drained.py) after each spin of rbd_bringup's loop.

    first_commanded: the first joint state seen after the first effort command (the pose
    the controller holds from then on); last_state: the newest."""

    def __init__(self, drained) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.states = self.commands = 0
        self.last_state = self.first_commanded = None
        self._reported_at = time.monotonic()
        depth = 1000   # ~1 s of a 1 kHz loop: what a slow moment of this process queues
        drained.subscribe(JointState, "joint_states", self._on_state, depth)
        drained.subscribe(Float64MultiArray, DEFAULT_COMMAND_TOPIC, self._on_command, depth)

    def _on_state(self, msg) -> None:
        self.states += 1
        self.last_state = msg
        if self.commands and self.first_commanded is None:
            self.first_commanded = msg

    def _on_command(self, msg) -> None:
        self.commands += 1

    def held_for(self) -> float:
        """Seconds of sim time from the first commanded state to the last state."""
        from rbd_control.ros.conversions import seconds
        if self.first_commanded is None:
            return 0.0
        return seconds(self.last_state.header.stamp) - seconds(self.first_commanded.header.stamp)

    def drift(self, joints) -> float:
        """The largest |q - q at the first commanded state| over `joints`, now."""
        first = dict(zip(self.first_commanded.name, self.first_commanded.position))
        last = dict(zip(self.last_state.name, self.last_state.position))
        return max((abs(last[j] - first[j]) for j in joints if j in first and j in last),
                   default=0.0)

    def report(self, period: float = 2.0) -> None:
        if time.monotonic() - self._reported_at < period or self.last_state is None:
            return
        self._reported_at = time.monotonic()
        from rbd_control.ros.conversions import seconds
        stamp = self.last_state.header.stamp
        print(
            f"rbd_bringup: sim t = {seconds(stamp):7.2f} s, "
            f"{self.states} joint states, {self.commands} effort commands seen",
            flush=True,
        )
