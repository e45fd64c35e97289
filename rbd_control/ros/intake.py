"""Joint-state intake: answer the newest state, not a backlog.

A controller that falls behind (a busy CPU, a garbage-collection pause) finds several joint
states queued when it wakes up. Answering each in turn costs one control step per state,
and every command but the last is overwritten on arrival: the plant only ever applies the
newest one, so the backlog only delays it further. take_newest hands over the newest queued
state and says how many it skipped (coalesced).

In lockstep (one physics step per command) exactly one state is in flight, so nothing is
ever skipped there; a second state in flight would be a duplicate (a re-published state),
and answering only the newest restores one state/command pair.
"""
from __future__ import annotations

# Taking a queued message costs microseconds; the bound only keeps one callback finite
# if a publisher floods the topic faster than it can be drained.
MAX_TAKEN_PER_WAKEUP = 1000


def take_newest(subscription, msg_type, first):
    """(newest message, number skipped): `first` (from the executor) or a newer queued one."""
    newest, skipped = first, 0
    handle = subscription.handle
    for _ in range(MAX_TAKEN_PER_WAKEUP):
        with handle:
            taken = handle.take_message(msg_type, False)
        if taken is None:
            break
        newest, skipped = taken[0], skipped + 1
    return newest, skipped


# A stamp further than this from the node's clock is not on that clock (sim-time stamps
# read by a node on wall time, or a driver whose clock is not synchronized).
MAX_PLAUSIBLE_AGE = 10.0


def state_age(now, stamp):
    """now - stamp (seconds, >= 0), the age of a state when answered; None when the state is
    unstamped (stamp 0) or its stamp is not on the node's clock. Slightly negative ages
    (a /clock message not processed yet) count as 0."""
    if not stamp:
        return None
    age = now - stamp
    if not -MAX_PLAUSIBLE_AGE < age < MAX_PLAUSIBLE_AGE:
        return None
    return max(age, 0.0)
