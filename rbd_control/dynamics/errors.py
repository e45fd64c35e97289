"""The package's own exception types.

Both derive from ValueError so callers that already catch ValueError keep working, and from
RbdError so a ROS node can catch everything this package raises on bad input in one place.
"""
from __future__ import annotations

from typing import Iterable


class RbdError(ValueError):
    """Base class for every error rbd_control raises about bad input."""


class ModelError(RbdError):
    """The robot description cannot become a valid model; the message names the element."""


class InputError(RbdError):
    """A state or force argument is malformed; the message names the argument."""


def brief(names: Iterable[str], limit: int = 8) -> str:
    """A list of names for a message, at most `limit` shown: "['a', 'b', ... and 39998 more]"."""
    names = list(names)
    if len(names) <= limit:
        return str(names)
    return str(names[:limit])[:-1] + f", ... and {len(names) - limit} more]"
