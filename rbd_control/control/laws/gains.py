"""Per-joint torque gains, and the defaults derived from the model so a new robot works untuned.
No rclpy.

The default rule sizes every joint on its effective inertia d_i (with the other joints free,
minimised over reference poses) and one unit loop designed in discrete time for the loop's
state period and delay (loop_design.py: steps 1 and 2, the margins it keeps). Then:

    kp_i = d_i w^2,   kd_i = 2 zeta d_i w,   ki_i = 0,   i_clamp_i = 0.2 effort_limit_i

computed_torque multiplies its feedback by H(q), so every joint is exactly the unit loop; its
acceleration gains are kp_i / d_i = w^2 and kd_i / d_i = 2 zeta w, the same discrete rule with
unit inertia. One set of torque gains (JTC's `gains.<joint>.p/d/i`) therefore serves every
mode; a user's kp/kd override the rule per joint (gain_table.py).

At the measured pose, feedforward_pd scales a default-rule joint's kp_i, kd_i by d_i(q) / d_i,
the effective inertia at that pose alone (inertia_schedule.py), so the slow, underdamped modes
that a D fitted to the worst pose leaves elsewhere come up to speed (inertia_scheduling,
default on).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from rbd_control.control.laws.loop_design import LoopDesign
from rbd_control.params.bounds import MAX_KD, MAX_KP

__all__ = ["DEFAULT_I_CLAMP_FRACTION", "Gains", "default_gains"]

DEFAULT_I_CLAMP_FRACTION = 0.2


@dataclass
class Gains:
    """Torque-space gains for the commanded joints, in command order."""

    kp: np.ndarray
    kd: np.ndarray
    ki: np.ndarray
    i_clamp: np.ndarray
    reference_inertia: np.ndarray   # d_i used to convert to acceleration gains
    # joints whose kp and kd are this rule's, so feedforward_pd may schedule them on the
    # inertia at the measured pose (inertia_schedule.py); None: none
    scheduled: Optional[np.ndarray] = None

    @property
    def kp_acc(self) -> np.ndarray:
        return self.kp / self.reference_inertia

    @property
    def kd_acc(self) -> np.ndarray:
        return self.kd / self.reference_inertia


def default_gains(inertia, design: LoopDesign, effort_limit) -> Gains:
    """The rule's gains (module doc) for joints of reference inertia d_i = `inertia`
    (loop_design.reference_inertia, the commanded joints') on the unit loop `design`."""
    d = np.asarray(inertia, dtype=float)
    omega = design.omega
    return Gains(
        kp=np.minimum(d * omega**2, MAX_KP),     # binds only above d ~ 4e6 kg m^2
        kd=np.minimum(2.0 * design.damping_ratio * omega * d, MAX_KD),
        ki=np.zeros_like(d),
        i_clamp=DEFAULT_I_CLAMP_FRACTION * np.asarray(effort_limit, dtype=float),
        reference_inertia=d,
        scheduled=np.ones(d.size, dtype=bool),
    )
