"""The integral term of the PID (JTC's `gains.<joint>.i`, `i_clamp`), with its anti-windup.

    integral += e dt        except while the command saturates in the direction e pushes
    |ki integral| <= i_clamp (a bound on the integral itself: i_clamp / ki, 0 where ki = 0)

Vectors in command order. The controller adds ki * integral (clipped to +-i_clamp) to the
feedback of the tracking laws; a gap, a clock jump or a late state is never integrated over.
"""
from __future__ import annotations

import numpy as np

__all__ = ["IntegralTerm"]


class IntegralTerm:
    def __init__(self, n: int):
        self.value = np.zeros(n)
        self.active = False           # any ki > 0
        self._bound = np.zeros(n)

    def set_gains(self, ki, i_clamp):
        """New ki / i_clamp (command order); the integral restarts from zero."""
        self.active = bool(np.any(ki > 0.0))
        # a vanishing ki leaves the integral unbounded: inf
        with np.errstate(over="ignore"):
            self._bound = np.where(ki > 0.0, i_clamp / np.maximum(ki, 1e-300), 0.0)
        self.reset()

    def reset(self):
        self.value = np.zeros(len(self._bound))

    def integrate(self, dt, error, tau, saturated):
        """Add error * dt where the command is not pushing into its limit, then bound."""
        pushing_into_limit = saturated & (np.sign(error) == np.sign(tau))
        self.value += np.where(pushing_into_limit, 0.0, error * dt)
        np.clip(self.value, -self._bound, self._bound, out=self.value)
