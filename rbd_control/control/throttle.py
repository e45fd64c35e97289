"""Repeated warnings as "reason + count": the core records, the node logs one line per period.

    warnings = ThrottledWarnings(period=1.0)
    warnings.warn("missing_joints", "state lacks commanded joints ['wrist_X']")
    warnings.once("filled:elbow", "elbow missing from joint states; using 0.0")
    for line in warnings.due(now):          # every control period, in the node
        logger.warning(line)

Lines are throttled per reason, not per key: a key (the kind: '~/payload_refused') holds one
entry per distinct reason, the message with its numbers blanked out ("mass ... got -1.0" and
"got -2.0" are one reason, "got nan", "link ''" and "link 'base_link'" are three more). The
first occurrence of a reason is due at once; its repeats within `period` are counted and
reported as one line ("... (x 999 in the last 1.0 s)", the latest text) when the period has
passed, so six different refusals in a burst give six lines, not one naming the last. `once`
keys are reported the first time only.

Memory is bounded so hostile input cannot grow it: at most MAX_REASONS_PER_KEY reasons per key
(further ones share the key's OTHER_REASONS entry, logged with its latest text and
"(and other reasons)") and MAX_KEYS entries in all (further ones share one "(other)" entry).

A warn() is a regular-expression substitution on the message, a dict look-up and an increment
(~3 us), so a message that repeats on every control period costs little; rclpy's own
`throttle_duration_sec` costs 0.2-0.35 ms per call even when it suppresses the line (it
inspects the caller's frame): a fifth or more of a 1 kHz period.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

__all__ = ["LOG_PERIOD_S", "ThrottledWarnings"]

MAX_KEYS = 256
MAX_REASONS_PER_KEY = 8
OTHER_REASONS = "(and other reasons)"
# a number in a message is the input's value, not its reason (nan and inf stay: they are one);
# digits inside a name ('wrist_1') are part of the name
_NUMBER = re.compile(r"(?<!\w)[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
LOG_PERIOD_S = 2.0   # the nodes' period for a repeated log line


class _Entry:
    __slots__ = ("message", "count", "last_report")

    def __init__(self, message):
        self.message, self.count, self.last_report = message, 1, None


class ThrottledWarnings:
    def __init__(self, period: float = 1.0):
        self.period = period
        self._entries: Dict[Tuple[str, str], _Entry] = {}   # (key, reason) -> entry
        self._reasons: Dict[str, int] = {}                  # key -> its number of reasons
        self._once_seen: set = set()
        self._once_pending: List[str] = []

    def warn(self, key: str, message: str):
        reason = _NUMBER.sub("#", message)
        entry = self._entries.get((key, reason))
        if entry is None:
            if self._reasons.get(key, 0) >= MAX_REASONS_PER_KEY:
                reason, message = OTHER_REASONS, f"{message} {OTHER_REASONS}"
            if len(self._entries) >= MAX_KEYS:
                key, reason = "(other)", OTHER_REASONS
            entry = self._entries.get((key, reason))
            if entry is None:
                self._entries[(key, reason)] = _Entry(message)
                self._reasons[key] = self._reasons.get(key, 0) + 1
                return
        entry.message = message
        entry.count += 1

    def once(self, key: str, message: str):
        if key in self._once_seen or len(self._once_seen) >= MAX_KEYS:
            return
        self._once_seen.add(key)
        self._once_pending.append(message)

    def due(self, now: float) -> List[str]:
        """The lines to log now; clears what it returns."""
        lines, self._once_pending = self._once_pending, []
        for key, entry in list(self._entries.items()):
            if entry.last_report is None:
                lines.append(entry.message)
                entry.last_report, entry.count = now, 0
            elif now - entry.last_report >= self.period or now < entry.last_report:
                if entry.count:
                    lines.append(f"{entry.message} (x {entry.count} in the last "
                                 f"{now - entry.last_report:.1f} s)")
                    entry.last_report, entry.count = now, 0
                else:   # quiet for a whole period: the next one is news again
                    del self._entries[key]
                    self._drop_reason(key[0])
        return lines

    def _drop_reason(self, key: str):
        left = self._reasons.pop(key) - 1
        if left:
            self._reasons[key] = left
