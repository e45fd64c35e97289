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
"""
from __future__ import annotations

# Taking a queued message costs microseconds; the bound only keeps one callback finite
# if a publisher floods the topic faster than it can be drained.
MAX_TAKEN_PER_WAKEUP = 1000


def take_newest(subscription, msg_type, first, first_info):
    """(newest message, its MessageInfo, number skipped): `first` (from the executor) or a
    newer queued one."""
    newest, info, skipped = first, first_info, 0
    handle = subscription.handle
    for _ in range(MAX_TAKEN_PER_WAKEUP):
        with handle:
            taken = handle.take_message(msg_type, False)
        if taken is None:
            break
        (newest, info), skipped = taken, skipped + 1
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
