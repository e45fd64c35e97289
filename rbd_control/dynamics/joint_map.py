"""JointMap: one map between a named joint order and a longer vector's order.

The controller commands `names` (command order, e.g. the effort array's) while the model
computes in its own order; the simulator's joints live at MuJoCo addresses; a joint state
lists joints in the publisher's order. Each is one JointMap, so a per-joint quantity is
gathered (`take`) or scattered (`put`) in one place instead of indexing by hand.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from rbd_control.dynamics.errors import brief

__all__ = ["JointMap"]


class JointMap:
    """names[i] sits at full[index[i]] of a vector of length `size`."""

    def __init__(self, names: Sequence[str], index, size: int, full_names=None):
        self.names = tuple(names)
        self.index = np.asarray(index, dtype=int)
        self.size = int(size)
        self.full_names = None if full_names is None else tuple(full_names)

    @classmethod
    def by_name(cls, names: Sequence[str], full_names: Sequence[str], what: str = "the model"):
        """Where each of `names` sits in `full_names`; KeyError naming the missing ones."""
        position = {name: i for i, name in enumerate(full_names)}
        missing = [n for n in names if n not in position]
        if missing:
            raise KeyError(f"joints {brief(missing)} are not in {what} {brief(full_names)}")
        return cls(names, [position[n] for n in names], len(full_names), full_names)

    def __len__(self) -> int:
        return len(self.names)

    def take(self, full) -> np.ndarray:
        """full[index]: a full-length vector (or its leading axis) in `names` order."""
        return np.asarray(full)[self.index]

    def take_matrix(self, full) -> np.ndarray:
        """The rows and columns of `names` of a size x size matrix."""
        return np.asarray(full)[np.ix_(self.index, self.index)]

    def put(self, values, fill: float = 0.0) -> np.ndarray:
        """A full-length vector holding `values` at `index` and `fill` elsewhere."""
        full = np.full(self.size, fill, dtype=float)
        full[self.index] = values
        return full

    def put_into(self, full: np.ndarray, values) -> np.ndarray:
        """Write `values` at `index` of `full` in place; return it."""
        full[self.index] = values
        return full
