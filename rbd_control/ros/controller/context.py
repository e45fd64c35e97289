"""What the parts of rbd_controller share, in one object each part is handed explicitly.

ControllerNode (node.py) builds one ControllerContext and passes it to every part that needs
it (ParameterCallbacks, StatePath, GuardedInputs, TrajectoryAction, CartesianTopics,
ContactTopics, ModelCorrections, DiagnosticsPublisher); a part that needs the node itself for
something else gets a callable for exactly that (the model install, the watchdog), never the
node's fields. The parts may still take the rclpy node to create their subscriptions,
publishers and timers.

  controller        the Controller; None until the first model is in use (the node sets it)
  lock              the node's RLock: every use of the controller holds it (the state loop,
                    the executor, the keepalive's watchdog); a parameter set that shows new
                    gains re-enters it
  source            the ModelSource (control/model/source.py)
  value(name)       a parameter's current value (None while unset)
  control_time()    the controller's time (below)
  anchor            (control time of the last answered state, steady time it arrived), set
                    by the state path: one tuple, read by other threads while it is written
  warnings, errors, notes   the node's repeated log lines (control/throttle.py), logged with
                    the core's own repeated warnings once per watchdog period (log_due)
  health            LoopHealth, the statistics /diagnostics reports
  joints            the joints gains.<joint>.* may name (None before a model, with none given)
  model_warnings    the load warnings of the model in use
  logger            the node's logger
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from rbd_control.control.throttle import LOG_PERIOD_S, ThrottledWarnings

__all__ = ['ControllerContext']


class ControllerContext:

    def __init__(self, node, value: Callable[[str], Any], source, lock, health,
                 joints: Optional[frozenset] = None):
        self.controller = None
        self.lock = lock
        self.source = source
        self.value = value
        self.health = health
        self.joints = joints
        self.model_warnings = ()
        self.anchor = None
        self.logger = node.get_logger()
        self.warnings = ThrottledWarnings(LOG_PERIOD_S)
        self.errors = ThrottledWarnings(LOG_PERIOD_S)
        self.notes = ThrottledWarnings(LOG_PERIOD_S)   # info: accepted goals, unchanged models
        self._clock = node.get_clock()

    def control_time(self) -> float:
        """The stamp of the last answered joint state advanced by the steady time since it
        arrived; the node's clock before the first state."""
        anchor = self.anchor
        if anchor is None:
            return self._clock.now().nanoseconds * 1e-9
        return anchor[0] + (time.monotonic() - anchor[1])

    def log_due(self, now: float):
        """Log the repeated lines that are due, the core's warnings with them (call every
        watchdog period, on the executor thread)."""
        controller = self.controller
        core = controller.warnings.due(now) if controller is not None else []
        for line in self.errors.due(now):
            self.logger.error(line)
        for line in self.warnings.due(now) + core:
            self.logger.warning(line)
        for line in self.notes.due(now):
            self.logger.info(line)
