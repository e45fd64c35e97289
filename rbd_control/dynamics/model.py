"""The immutable robot model and its preallocated workspace (Pinocchio's Model/Data split).

Bodies are numbered 0..nb-1 in depth-first order, so parent[i] < i (the CRBA and the LTDL
factorisation rely on it) and every subtree is a contiguous range. Each moving joint gives
exactly one coordinate, so body i, joint i and coordinate i are the same index and nq == nb.
The fixed base (the root link plus everything welded to it) is not a body; its index is -1.

Kernels take the model as two packed arrays so that a call from Python unboxes few arguments
(numba pays ~50 ns per array argument, a large share of a 1 µs budget):

    topology[i] = (parent, joint_type)                       int64   (nb, 2)
    bodies[i]   = rows of 3-vectors, indexed by the names below  float64 (nb, 10, 3)

and the workspace the same way, ws[i] = rows of 3-vectors (nb, WS_ROWS, 3). A spatial vector is
two rows: angular part first, linear part second (Featherstone's [omega; v], [n; f]).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

# columns of topology[i]
PARENT = 0       # parent body index, -1 for the fixed base
JOINT_TYPE = 1   # REVOLUTE or PRISMATIC; read only by jcalc

REVOLUTE = 0
PRISMATIC = 1

# rows of bodies[i]
XTREE_E = 0      # rows 0..2: E of Xtree, the coordinate rotation parent -> joint frame
XTREE_R = 3      # r of Xtree, the joint frame origin in parent coordinates
AXIS = 4         # unit joint axis in the body frame
COM_MOMENT = 5   # h = m c, first moment of mass about the body origin
IBAR = 6         # rows 6..8: rotational inertia about the body origin
MASS = 9         # m in column 0
BODY_ROWS = 10
PARAMETERS_PER_BODY = 10                                      # pi_i, see inertial_parameters
IBAR_ENTRIES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))  # Ibar in pi_i[4:10]

# rows of the workspace ws[i]
X_E = 0          # rows 0..2: E of X_i = X_J(q_i) Xtree_i, parent -> body
X_R = 3
V_ANG, V_LIN = 4, 5      # body velocity v_i
A_ANG, A_LIN = 6, 7      # body acceleration a_i
F_ANG, F_LIN = 8, 9      # joint force f_i (moment, force) in body coordinates
W_E = 10                 # rows 10..12: E of 0X_i, world -> body (only when needed)
W_R = 13
IC_H = 14                # composite inertia: first moment
IC_IBAR = 15             # rows 15..17: composite rotational inertia
IC_M = 18                # composite mass in column 0
WS_ROWS = 19


@dataclass(frozen=True, eq=False)
class Model:
    """A rigid-body tree with one-DoF joints, built by :func:`load_urdf`. Never mutated."""

    name: str
    joint_names: tuple
    link_names: tuple
    topology: np.ndarray
    bodies: np.ndarray
    gravity: np.ndarray
    effort_limit: np.ndarray
    velocity_limit: np.ndarray
    position_limits: np.ndarray
    continuous: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    link_body: dict = field(repr=False)   # link name -> body index (-1 for the fixed base)
    # link name -> (E, r): the link frame in its body's coordinates (E rotates body -> link
    # coordinates, r is the link origin in body coordinates); identity for a body's own link,
    # the welded offset for links merged through fixed joints (tool0, flanges).
    link_placement: dict = field(default_factory=dict, repr=False)
    # physically dubious but usable data found at load, one string each naming link/joint
    warnings: tuple = ()
    nq: int = field(init=False)   # one coordinate per moving joint, so nv == nq
    _data: "Data" = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # a stored attribute, not a property: every call reads it, and a property costs ~50 ns
        object.__setattr__(self, "nq", len(self.joint_names))
        # Kernels get writable aliases (numba types read-only arrays apart and takes a slower
        # path for them, ~30 ns each); what users see is read-only.
        for name in ("topology", "bodies", "gravity"):
            object.__setattr__(self, "_" + name, np.array(getattr(self, name), order="C"))
        for name, value in list(vars(self).items()):
            if isinstance(value, np.ndarray) and not name.startswith("_"):
                view = value.view()
                view.flags.writeable = False
                object.__setattr__(self, name, view)
        # The default workspace of the functional API; pass your own Data per thread.
        object.__setattr__(self, "_data", Data(self))

    @property
    def nv(self) -> int:
        return self.nq

    @property
    def parent(self) -> np.ndarray:
        return self.topology[:, PARENT]

    @property
    def joint_type(self) -> np.ndarray:
        return self.topology[:, JOINT_TYPE]

    def with_gravity(self, gravity) -> "Model":
        g = np.array(gravity, dtype=np.float64).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            from .errors import InputError
            raise InputError(f"gravity must be 3 finite numbers, got {gravity!r}")
        return replace(self, gravity=g)

    # Inertial parameters pi: 10 per body in joint order, Pinocchio's dynamic-parameter order
    # (Inertia::toDynamicParameters): m, h = m c (3), Ibar about the body origin (xx, xy, yy,
    # xz, yz, zz), all in body coordinates. tau = Y(q, qd, qdd) pi (identification.regressor).
    def inertial_parameters(self) -> np.ndarray:
        pi = np.empty((self.nq, PARAMETERS_PER_BODY))
        pi[:, 0] = self.bodies[:, MASS, 0]
        pi[:, 1:4] = self.bodies[:, COM_MOMENT]
        for k, (row, col) in enumerate(IBAR_ENTRIES):
            pi[:, 4 + k] = self.bodies[:, IBAR + row, col]
        return pi.reshape(-1)

    def with_inertial_parameters(self, pi) -> "Model":
        """A copy with the bodies' inertias replaced by pi (checked for shape and finiteness
        only: physical consistency is identification.parameters.check_physical)."""
        values = np.array(pi, dtype=np.float64).reshape(-1)
        if values.shape != (PARAMETERS_PER_BODY * self.nq,) or not np.all(np.isfinite(values)):
            from .errors import InputError
            raise InputError(f"pi must be {PARAMETERS_PER_BODY * self.nq} finite numbers "
                             f"(10 per body), got shape {np.shape(pi)}")
        values = values.reshape(self.nq, PARAMETERS_PER_BODY)
        bodies = np.array(self.bodies)
        bodies[:, MASS, 0] = values[:, 0]
        bodies[:, COM_MOMENT] = values[:, 1:4]
        for k, (row, col) in enumerate(IBAR_ENTRIES):
            bodies[:, IBAR + row, col] = bodies[:, IBAR + col, row] = values[:, 4 + k]
        return replace(self, bodies=bodies)

    def __repr__(self):
        return f"Model({self.name!r}, nq={self.nq}, joints={list(self.joint_names)})"


class Data:
    """Preallocated scratch space for one thread of calls on one model."""

    def __init__(self, model: Model):
        nb = model.nq
        self.ws = np.zeros((nb, WS_ROWS, 3))
        self.H = np.zeros((nb, nb))          # CRBA output, factorised in place by LTDL
        self.no_fext = np.zeros((0, 2, 3))   # passed when there are no external forces
        # Every kernel ends with these arguments; one tuple spares the wrappers four
        # attribute look-ups per call.
        self.kernel_args = (model._topology, model._bodies, model._gravity, self.ws)
