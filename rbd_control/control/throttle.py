"""Repeated warnings as "reason + count": the core records, the node logs one line per period.

    warnings = ThrottledWarnings(period=1.0)
    warnings.warn("missing_joints", "state lacks commanded joints ['wrist_X']")
    warnings.once("filled:elbow", "elbow missing from joint states; using 0.0")
    for line in warnings.due(now):          # every control period, in the node
        logger.warning(line)

The first occurrence of a key is due at once; repeats within `period` are counted and reported
as one line ("... (x 999 in the last 1.0 s)") when the period has passed. `once` keys are
reported the first time only. Keys are bounded (MAX_KEYS) so hostile input cannot grow memory.

A warn() is a dict look-up and an increment (~0.2 us), so a message that repeats on every
control period costs almost nothing; rclpy's own `throttle_duration_sec` costs 0.2-0.35 ms per
call even when it suppresses the line (it inspects the caller's frame): a fifth or more of a
1 kHz period.
"""
from __future__ import annotations

from typing import Dict, List

__all__ = ["LOG_PERIOD_S", "ThrottledWarnings"]

MAX_KEYS = 256
LOG_PERIOD_S = 2.0   # the nodes' period for a repeated log line


class _Entry:
    __slots__ = ("message", "count", "last_report")

    def __init__(self, message):
        self.message, self.count, self.last_report = message, 1, None


class ThrottledWarnings:
    def __init__(self, period: float = 1.0):
        self.period = period
        self._entries: Dict[str, _Entry] = {}
        self._once_seen: set = set()
        self._once_pending: List[str] = []

    def warn(self, key: str, message: str):
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= MAX_KEYS:
                key = "(other)"
                entry = self._entries.get(key)
            if entry is None:
                self._entries[key] = _Entry(message)
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
                else:
                    del self._entries[key]   # quiet for a whole period: next one is news again
        return lines
