"""One subscription taken on a thread of its own, beside the executor: rbd_controller's joint
states and /clock (ros/controller/intake.py), rbd_mujoco_sim's effort commands.

StateLoop takes one subscription's messages on its own thread from a wait set holding only
that subscription. rclpy's SingleThreadedExecutor rebuilds its wait set in Python on every
wake-up from every entity of the node (subscriptions, timers, services, the action server,
each publisher's QoS event handlers): in rbd_controller at 1 kHz that costs more Python than
answering the state (bench/latency.py --profile). The executor skips the subscription once the
loop has taken it over (its callback group, LoopGroup, then says it cannot execute) and keeps
serving everything else. The callback runs on the loop's thread: whatever it shares with
executor callbacks needs a lock. run.spin_node starts a node's `state_loop` (and `clock_loop`).
"""
from __future__ import annotations

import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

# The loop checks for a stop this often while no message comes.
WAIT_NS = 100_000_000
ERROR_PAUSE_S = 0.01


class LoopGroup(CallbackGroup):
    """The executor runs the group's entity until a StateLoop takes it over."""

    def __init__(self):
        super().__init__()
        self.taken = False

    def can_execute(self, entity):
        return not self.taken

    def beginning_execution(self, entity):
        return not self.taken

    def ending_execution(self, entity):
        pass


class StateLoop:
    """subscribe(callback_group) -> a subscription whose callback is callback(msg, info);
    served by the executor until start(), then by this loop's thread until stop()."""

    def __init__(self, subscribe, msg_type, callback, context, on_error):
        self.group = LoopGroup()
        self.subscription = subscribe(self.group)
        self._msg_type, self._callback, self._on_error = msg_type, callback, on_error
        self._context = context
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self.group.taken = True
        self._thread = threading.Thread(target=self._run, name='rbd_state_loop', daemon=True)
        self._thread.start()

    def without_info(self):
        """For rclpy 7.1's EventsExecutor, which fails (SystemError) on a callback that takes
        a MessageInfo: it gets callback(msg, {}), and a state's age then comes from its header
        stamp alone (state_age)."""
        callback = self._callback
        self.subscription.callback = lambda msg: callback(msg, {})

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def _run(self):
        try:
            handle = self.subscription.handle
        except _rclpy.InvalidHandle:    # destroyed before the loop started
            return
        try:
            with self._context.handle:
                wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, self._context.handle)
        except Exception as error:
            # an rclpy whose internal WaitSet differs: hand the subscription back to the
            # executor, which includes it again when it next rebuilds its wait set
            self.group.taken = False
            self._on_error(error)
            return
        try:
            while not self._stop.is_set():
                try:
                    with handle:
                        wait_set.clear_entities()
                        wait_set.add_subscription(handle)
                        wait_set.wait(WAIT_NS)
                        taken = handle.take_message(self._msg_type, False)
                    if taken is not None:
                        self._callback(*taken)
                except Exception as error:   # the node going down, or a bug: report, go on
                    if self._stop.is_set() or not self._context.ok():
                        return
                    if isinstance(error, _rclpy.InvalidHandle):   # its owner destroyed it
                        return
                    self._on_error(error)
                    self._stop.wait(ERROR_PAUSE_S)    # a lasting fault must not spin a core
        finally:
            wait_set.destroy_when_not_in_use()
