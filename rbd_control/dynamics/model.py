"""The immutable robot model and its preallocated workspace (Pinocchio's Model/Data split).

Bodies are numbered 0..nb-1 in depth-first order, so parent[i] < i (the CRBA and the LTDL
factorisation rely on it) and every subtree is a contiguous range. Each moving joint gives
exactly one coordinate, so body i, joint i and coordinate i are the same index and nq == nb.
The fixed base (the root link plus everything welded to it) is not a body; its index is -1.

Kernels take the model and the workspace as ONE packed array, their last argument `md`
(`Data.md`; `model._md` is the default workspace's), so that a call from Python unboxes few
arguments (numba pays ~50 ns per array argument, a large share of a 1 µs call):

    md[i] = rows of 3-vectors, indexed by the row names below         float64 (nb, MD_ROWS, 3)

md ("model and data") holds body i's constants (rows 0..BODY_ROWS-1, copied from Model.bodies),
its parent and joint type (row TOPOLOGY, as Model.topology; read them with `parent(md, i)` and
in jcalc), the gravity vector (row GRAVITY, the same in every body) and the workspace (the
rest). Each Data has its own md; kernels write only the workspace rows. A spatial vector is two
rows: angular part first, linear part second (Featherstone's [omega; v], [n; f]).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from rbd_control.dynamics.errors import InputError, ModelError
from rbd_control.dynamics.spatial import jit

# |g| beyond 100 g is no robot's environment, and would saturate every joint.
MAX_GRAVITY = 1e3

# columns of topology[i] and of row TOPOLOGY of md[i]
PARENT = 0       # parent body index, -1 for the fixed base
JOINT_TYPE = 1   # REVOLUTE or PRISMATIC; read only by jcalc
ALIGNED_AXIS = 2   # (md only) k if the joint axis is +-e_k, else -1; read only by jcalc

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

# rows of md[i] after the body's constants
TOPOLOGY = 10    # (parent, joint type, aligned axis) as floats, columns named above
GRAVITY = 11     # the gravity vector in root coordinates (every body holds the same)
X_E = 12         # rows 12..14: E of X_i = X_J(q_i) Xtree_i, parent -> body
X_R = 15
V_ANG, V_LIN = 16, 17    # body velocity v_i
A_ANG, A_LIN = 18, 19    # body acceleration a_i
F_ANG, F_LIN = 20, 21    # joint force f_i (moment, force) in body coordinates
W_E = 22                 # rows 22..24: E of 0X_i, world -> body (only when needed)
W_R = 25
IC_H = 26                # composite inertia: first moment
IC_IBAR = 27             # rows 27..29: composite rotational inertia
IC_M = 30                # composite mass in column 0
S_ANG, S_LIN = 31, 32    # motion subspace S_i (world coordinates, CRBA and Coriolis matrix)
MD_ROWS = 33


NO_FEXT = np.zeros((0, 2, 3))   # the fext argument of a kernel when there are no external forces


@jit
def parent(md, i):
    """The parent body of body i, -1 for the fixed base."""
    return int(md[i, TOPOLOGY, PARENT])


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
    # per joint, the URDF's <safety_controller>: [soft_lower_limit, soft_upper_limit,
    # k_position, k_velocity], NaN where absent (control/safety/joint_limits.py reads it)
    safety_controller: np.ndarray = None
    nq: int = field(init=False)   # one coordinate per moving joint, so nv == nq
    _data: "Data" = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # a stored attribute, not a property: every call reads it, and a property costs ~50 ns
        object.__setattr__(self, "nq", len(self.joint_names))
        if self.safety_controller is None:
            object.__setattr__(self, "safety_controller", np.full((self.nq, 4), np.nan))
        # Writable copies for compiled helpers outside the kernels (numba types read-only
        # arrays apart and takes a slower path for them); what users see is read-only.
        for name in ("topology", "bodies"):
            object.__setattr__(self, "_" + name, np.array(getattr(self, name), order="C"))
        for name, value in list(vars(self).items()):
            if isinstance(value, np.ndarray) and not name.startswith("_"):
                view = value.view()
                view.flags.writeable = False
                object.__setattr__(self, name, view)
        # The default workspace of the functional API; pass your own Data per thread.
        object.__setattr__(self, "_data", Data(self))
        # What the wrappers read on every call without a Data: two look-ups fewer.
        object.__setattr__(self, "_md", self._data.md)
        object.__setattr__(self, "_square", (self.nq, self.nq))

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
        return replace(self, gravity=checked_gravity(gravity, InputError))

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
        self.md = np.zeros((nb, MD_ROWS, 3))
        self.md[:, :BODY_ROWS] = model.bodies
        self.md[:, TOPOLOGY, :2] = model.topology
        axes = model.bodies[:, AXIS]
        self.md[:, TOPOLOGY, ALIGNED_AXIS] = np.where(
            np.count_nonzero(axes, axis=1) == 1, np.argmax(np.abs(axes), axis=1), -1)
        self.md[:, GRAVITY] = model.gravity
        self.H = np.zeros((nb, nb))          # CRBA output, factorised in place by LTDL
        # Every kernel ends with md (checks.MODEL_ARGS gives its numba type).


def checked_gravity(gravity, error=ModelError) -> np.ndarray:
    try:
        g = np.array(gravity, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise error(f"gravity must be 3 finite numbers, got {gravity!r}") from None
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise error(f"gravity must be 3 finite numbers, got {gravity!r}")
    if np.max(np.abs(g)) > MAX_GRAVITY or np.linalg.norm(g) > MAX_GRAVITY:
        raise error(f"gravity {gravity!r} has magnitude {np.linalg.norm(g):.3g} m/s^2, beyond "
                    f"{MAX_GRAVITY:g} m/s^2")
    return g
