"""The external wrench at one link frame from the joint residual, by damped least squares (as
franka's O_F_ext_hat_K and KDL's ChainExternalWrenchEstimator):

    F = (J J^T + lambda^2 1)^-1 J r        (dynamics.FrameWrench)

J the link's frame Jacobian, so F acts at the link origin, in world (root link) axes. It
assumes the whole residual comes from a wrench at that frame: a contact elsewhere on the arm
gives a wrench that explains r as well as that frame can (the joint torques are the reliable
signal; franka_ros#404 advises detecting on them).
"""
from __future__ import annotations

import numpy as np

from rbd_control.dynamics import FrameWrench

__all__ = ["WrenchEstimator", "FORCE_FIRST"]

# dynamics gives [moment; force] (the Jacobian's [omega; v]); the controller's Cartesian
# vectors are force first: [fx, fy, fz, tx, ty, tz] (set_wrench_target, libfranka's O_F_ext_hat_K)
FORCE_FIRST = np.array([3, 4, 5, 0, 1, 2])


class WrenchEstimator:
    """F at `link` (origin, world axes), [fx, fy, fz, tx, ty, tz]."""

    def __init__(self, model, link: str, damping: float):
        self.link, self.damping = link, float(damping)
        self.frame = f"{model.link_names[0]} axes at the origin of {link}"
        self.wrench = np.zeros(6)
        self._prepared = FrameWrench(model, link, damping)

    @property
    def model(self):
        return self._prepared.model

    def set_model(self, model):
        self._prepared = FrameWrench(model, self.link, self.damping)

    def estimate(self, q, r) -> np.ndarray:
        """F for the residual r (model order); the returned array is reused."""
        # the method: np.take's Python wrapper costs ~0.9 µs more
        self._prepared(q, r).take(FORCE_FIRST, out=self.wrench)
        return self.wrench
