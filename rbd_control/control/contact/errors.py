"""The contact errors, in the controller's ControlError family (control/errors.py)."""
from rbd_control.control.errors import ConfigError, ControlError

__all__ = ["ContactConfigError", "ContactResetError"]


class ContactConfigError(ConfigError):
    """An observer gain, threshold or reaction setting is invalid (NaN, negative, unknown);
    the message names it."""


class ContactResetError(ControlError):
    """A collision reset was refused: the residual still shows contact."""
