"""Joint-state intake: answer the newest state, not a backlog.

A controller that falls behind (a busy CPU, a garbage-collection pause) finds several joint
states queued when it wakes up. Answering each in turn costs one control step per state,
and every command but the last is overwritten on arrival: the plant only ever applies the
newest one, so the backlog only delays it further. take_newest hands over the newest queued
state with its MessageInfo (the DDS source timestamp: when it was published) and says how
many it skipped (coalesced); state_age tells how old it is when answered.

In lockstep (one physics step per command) exactly one state is in flight, so nothing is
ever skipped there; a second state in flight would be a duplicate (a re-published state),
and answering only the newest restores one state/command pair.

StateLoop takes one subscription's messages on its own thread from a wait set holding only
that subscription, beside the executor. rclpy's SingleThreadedExecutor rebuilds its wait set
in Python on every wake-up from every entity of the node (subscriptions, timers, services,
the action server, each publisher's QoS event handlers): in rbd_controller at 1 kHz that
costs more Python than answering the state (bench/latency.py --profile). The executor skips
the subscription once the loop has taken it over (its callback group, LoopGroup, then says it
cannot execute) and keeps serving everything else. The callback runs on the loop's thread:
whatever it shares with executor callbacks needs a lock.
"""
from __future__ import annotations

import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

# Taking a queued message costs microseconds; the bound only keeps one callback finite
# if a publisher floods the topic faster than it can be drained.
MAX_TAKEN_PER_WAKEUP = 1000


def take_newest(subscription, msg_type, first, first_info, refused):
    """(newest message, its MessageInfo, number skipped): `first` (from the executor) or a
    newer queued one; (None, None, skipped) when every one was refused. refused(msg) is asked
    of every message taken, first included, and says why itself (it logs): a refused message
    is never the newest. Asking each one, not only the newest, makes a refusal certain: a
    hostile state that takes milliseconds to deserialise would otherwise always have a
    newer state queued behind it and pass uncounted."""
    newest, info, skipped = (None, None, 0) if refused(first) else (first, first_info, 0)
    handle = subscription.handle
    for _ in range(MAX_TAKEN_PER_WAKEUP):
        with handle:
            taken = handle.take_message(msg_type, False)
        if taken is None:
            break
        if refused(taken[0]):
            continue
        if newest is not None:
            skipped += 1
        newest, info = taken
    return newest, info, skipped


# A stamp further than this from the node's clock is not on that clock (sim-time stamps
# read by a node on wall time, or a driver whose clock is not synchronized).
MAX_PLAUSIBLE_AGE = 10.0


def state_age(now, stamp, wall_now, published):
    """How old a state is when answered, in seconds (>= 0), or None when unknown: the larger of
      now - stamp          the header stamp on the node's clock: covers the driver's own
                           delay, when its stamps are on that clock (wall time on hardware);
      wall_now - published the time since it was published (the DDS source timestamp, the
                           publisher's wall clock): what a node on wall time measures of a
                           simulator's states (their stamps are sim time). A node on sim
                           time passes published = 0: its /clock comes down the same path
                           as the states, and a lockstep simulator waits for the answer.
    Either is ignored when missing (stamp 0, no timestamp) or further than MAX_PLAUSIBLE_AGE
    from zero (not the same clock); slightly negative ones count as 0."""
    ages = [age for age in ((now - stamp) if stamp else None,
                            (wall_now - published) if published else None)
            if age is not None and -MAX_PLAUSIBLE_AGE < age < MAX_PLAUSIBLE_AGE]
    return max(max(ages), 0.0) if ages else None


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


def clock_loop(node, on_error):
    """On sim time, /clock on a StateLoop of its own too, or None (wall time, or an rclpy
    whose TimeSource differs: /clock then stays with the executor).

    A lockstep simulator publishes /clock with every state. Through the executor each one woke
    the node's main thread, which rebuilt its wait set from every entity of the node and made
    a timeout timer: 45 % of a core in rbd_controller, beside the state loop's 33 %, under
    the same GIL (rclcpp's TimeSource too runs /clock on a thread of its own by default:
    NodeOptions::use_clock_thread). rclpy's TimeSource (node._time_source) made the
    subscription and keeps the one made here as its own: turning use_sim_time off destroys
    it, and the loop then ends.
    """
    from rosgraph_msgs.msg import Clock
    source = getattr(node, '_time_source', None)
    taken = getattr(source, '_clock_sub', None)
    if taken is None or not callable(getattr(source, 'clock_callback', None)):
        return None
    topic, qos = taken.topic_name, taken.qos_profile
    node.destroy_subscription(taken)
    loop = StateLoop(
        lambda group: node.create_subscription(Clock, topic, source.clock_callback, qos,
                                               callback_group=group),
        Clock, lambda msg, info: source.clock_callback(msg), node.context, on_error)
    source._clock_sub = loop.subscription
    return loop
