"""rbd_mujoco_sim's lockstep pacing: exactly one physics step per command that answers the
state in flight, then one joint state. The run then depends only on the commands, not on
scheduling (tests, benchmarks).

    out  ~/command_latency   std_msgs/Float64, seconds from a state to the command answering
                             it (when publish_latency)

Commands carry no stamp, so the simulator cannot tell which state a command answers. A state
published more than once (at start-up, before the controller spins, it may queue several
copies; or the node's kick after a stall) would be answered more than once, and every extra
answer would keep an extra state/command pair circulating for good: each step then uses a
command computed one state earlier. So after such a state (`expect_duplicates`), the first
answer opens a window of `lockstep_resync_window` seconds in which further answers are dropped
(counted in `absorbed_commands`), and the loop restarts from one fresh state.

Lockstep assumes one command per state: a second publisher of commands (or a controller whose
watchdog sends commands of its own on the wall clock) adds steps. Use it with a controller on
sim time (its watchdog then waits for /clock) and nothing else commanding.

The commands arrive on the command subscription's own thread (ros/state_loop.py), the end of a
window on the executor's: both under the node's lock, which the node holds around on_command
and this class takes in its timer callback.
"""
from __future__ import annotations

import time
from typing import Callable

from std_msgs.msg import Float64, Float64MultiArray


class Lockstep:
    """The protocol's state: whether the next answer restarts the loop, whether answers are
    being dropped. Its handles: the node (a timer, a publisher, the log), the node's lock,
    simulator() -> the plant or None, apply(msg) the command to the plant, publish_state()
    the joint state out, last_state_sent() -> the wall time of the last state published."""

    def __init__(self, node, lock, *, resync_window: float, publish_latency: bool,
                 simulator: Callable[[], object], apply: Callable[[Float64MultiArray], None],
                 publish_state: Callable[[], None], last_state_sent: Callable[[], float | None]):
        self._log = node.get_logger()
        self._lock = lock
        self._simulator, self._apply = simulator, apply
        self._publish_state, self._last_state_sent = publish_state, last_state_sent
        self._latency_pub = (node.create_publisher(Float64, "~/command_latency", 100)
                             if publish_latency else None)
        self._resync = True       # the next answer is to a state that may have gone out twice
        self.absorbing = False    # dropping answers until the window ends
        self.absorbed_commands = 0
        self._resync_timer = node.create_timer(resync_window, self._end_resync)
        self._resync_timer.cancel()

    def expect_duplicates(self) -> None:
        """The state about to be published may be answered more than once (a re-publication)."""
        self._resync = True

    def on_command(self, msg: Float64MultiArray) -> None:
        """A command in, under the node's lock, with a plant: one step and one state out, or
        dropped as a duplicate answer."""
        now = time.monotonic()
        if self.absorbing:
            self.absorbed_commands += 1
            return
        if self._resync:
            self._resync, self.absorbing = False, True
            self._resync_timer.reset()
            return
        self._apply(msg)
        sent_at = self._last_state_sent()
        if self._latency_pub is not None and sent_at is not None:
            self._latency_pub.publish(Float64(data=now - sent_at))
        self._simulator().step()
        self._publish_state()

    def _end_resync(self) -> None:
        with self._lock:
            self._resync_timer.cancel()
            self.absorbing = False
            sim = self._simulator()
            self._log.info(
                f"lockstep loop (re)started at sim t = {sim.time:.3f} s; "
                f"{self.absorbed_commands} duplicate answers dropped so far"
            )
            if sim is not None:
                self._publish_state()  # the one state in flight from now on
