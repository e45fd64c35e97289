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

The states are taken on a thread of their own (ros/state_loop.py's StateLoop); clock_loop puts
/clock on one too, on sim time.
"""
from __future__ import annotations

from rbd_control.ros.state_loop import StateLoop

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


def clock_loop(node, on_error):
    """On sim time, /clock on a StateLoop of its own too, or None (wall time, or an rclpy
    whose TimeSource differs: /clock then stays with the executor).

    A lockstep simulator publishes /clock with every state. Through the executor each one woke
    the node's main thread, which rebuilt its wait set from every entity of the node and made
    a timeout timer: 45 % of a core in rbd_controller, beside the state loop's 33 %, under
    the same GIL (rclcpp's TimeSource too runs /clock on a thread of its own by default:
    NodeOptions::use_clock_thread). rclpy's TimeSource (the Node's _time_source) made the
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
