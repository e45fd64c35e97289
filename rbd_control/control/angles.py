"""Angle wrapping, one home for it (continuous joints, errors, reports)."""
import math

import numpy as np

__all__ = ["wrap_to_pi"]


def wrap_to_pi(angle):
    """Map angles to [-pi, pi) (numpy arrays or floats)."""
    return (np.asarray(angle) + math.pi) % (2.0 * math.pi) - math.pi
