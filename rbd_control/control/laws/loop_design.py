"""The discrete-time loop design the default gains and the Cartesian law are sized on, and the
report of what it softens. No rclpy.

A Python node on a busy computer answers joint states that arrive every T seconds (down to
250 Hz) and its command reaches the drive tau seconds after the state it answers (up to 10 ms);
the drive holds each command until the next one (zero-order hold). The design sizes the loop
for that, not for a continuous one: `expected_state_period` T (default 4 ms) and
`expected_delay` tau (default 10 ms) are parameters (params/controller.py, whose table holds
every default and range this module uses).

1. Effective inertia. The controller closes a PD loop on every joint at once; at a frozen pose
   q, with Kp = w^2 D and Kd = 2 zeta w D for one diagonal D > 0, the loop
       H(q) e'' = -Kp e - Kd e'      (every command delayed and held alike)
   decouples exactly into the modes of H^-1 D (proportional damping): mode k with eigenvalue
   lambda_k is the unit-inertia loop x'' = -lambda_k (w^2 x + 2 zeta w x'). So the loop is as
   stable as the unit loop scaled by lambda_max(H(q)^-1 D). The old rule took
   D = min_q H_ii(q) (the joint alone, every other joint locked); with the other joints free a
   joint feels 1/(H^-1)_ii <= H_ii (up to 7.8x lighter on the default arm's elbow), and the
   coupled modes of the default arm reached lambda_max = 10.7, i.e. 3.3 x the 8 Hz design.
   The new D:
       m_i  = min over reference poses of 1 / (H(q)^-1)_ii    (every other joint free)
       mu   = max over reference poses of lambda_max(D_m^1/2 H(q)^-1 D_m^1/2)   (>= 1)
       d_i  = m_i / mu        i.e. the largest D of that shape with D <= H(q) (Loewner order)
   at every reference pose, so lambda_max(H^-1 D) <= 1: no mode is faster than the unit loop
   below. mu is taken per independent subtree of the base (H is block diagonal over them:
   branch-induced sparsity, RBDA ch. 6), so a 3000-joint comb costs 100 blocks of 30.
   The reference poses are the zero pose (clipped into the limits) plus 64 poses drawn
   uniformly within the position limits with a fixed seed, so the rule is deterministic.
   A joint moving a massless subtree (H singular) is regularised (H + 1e-12 max H_ii I) and
   d_i is floored at a millionth of the largest d (INERTIA_FLOOR_FRACTION).

2. The unit loop in discrete time. The plant x'' = u (unit inertia), the controller sampling
   position and velocity every T and commanding u_k = -(kp q_k + kd v_k), the command acting
   tau = n T + delta (0 <= delta < T) later and held for T. Exactly discretised (ZOH):
       x_{k+1} = A x_k + B0 u_{k-n} + B1 u_{k-n-1},     A = [[1, T], [0, 1]],
       B0 = [(T - delta)^2 / 2, T - delta],   B1 = [delta (T - delta / 2), delta]
   (B1 is the part of the step still driven by the previous command). Its loop transfer
       L(z) = [kp, kd] (z I - A)^-1 (B0 z^-n + B1 z^-n-1),     z = exp(j omega T)
   gives the phase margin (180 deg + arg L where |L| = 1) and the gain margin (the largest g
   with the closed loop under g [kp, kd] stable: spectral radius of the augmented state
   matrix below 1, sampled_loop_matrix). With kp = w^2, kd = 2 zeta w the design picks
       w = the largest w <= 2 pi bandwidth_hz with  phase margin >= 45 deg  and
           gain margin >= 2   (MIN_PHASE_MARGIN_DEG, MIN_GAIN_MARGIN)
   by bisection (both margins shrink as w grows). bandwidth_hz (default 8 Hz) is thus an
   upper bound: it decides only when T and tau are small. At the defaults (4 ms, 10 ms,
   zeta 1) w = 2 pi 3.53 Hz (phase margin 45.0 deg, gain margin 2.8); at 1 ms and no delay the
   8 Hz bound decides. At 1 kHz the 3.53 Hz loop loses stability near 28 ms of delay.
   A mode with lambda < 1 sees the unit loop's gain scaled by lambda: its crossover moves to a
   lower frequency, where the PD lead still exceeds the phase lost to T and tau, so it stays
   stable with gain margin >= 2 / lambda (its damping ratio is zeta sqrt(lambda)).

The design (LoopDesign) depends on the loop and the damping ratio only, not on the model; a
model plan solves it once (control/model/plan.py) and hands it to the default gains (gains.py,
step 3 there) and to the Cartesian law (cartesian.py), which bounds the stiffness of every
task-space mode and of the nullspace posture at w.

3. What the design softens. A stiffness a user asked for that the design bounds (a task-space
   mode faster than w, a nullspace stiffness above d_i w^2) is applied softer than requested;
   each such value is reported as a Softened record (its name, the requested and the applied
   value) so the node can say so (a faster loop, stated by expected_state_period,
   expected_delay and bandwidth_hz, lifts the bound). The joint gains kp, kd a user gives are
   never softened by the design (they override the rule, gain_table.py).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from rbd_control.dynamics import crba
from rbd_control.dynamics.free_inertia import (free_joint_inertia, max_inertia_ratio,
                                               regularised_inverse)

from rbd_control.control.errors import GainError
from rbd_control.params.controller import CONTROLLER_PARAMETERS

__all__ = [
    "MIN_PHASE_MARGIN_DEG",
    "MIN_GAIN_MARGIN",
    "INERTIA_FLOOR_FRACTION",
    "LoopDesign",
    "Softened",
    "softened_values",
    "describe_softened",
    "reference_poses",
    "zero_pose",
    "subtrees",
    "reference_inertia",
    "design_bandwidth",
    "loop_margins",
    "sampled_loop_matrix",
]

_DEFAULT = CONTROLLER_PARAMETERS.default
MIN_PHASE_MARGIN_DEG = 45.0
MIN_GAIN_MARGIN = 2.0
REFERENCE_POSE_COUNT = 64
REFERENCE_POSE_SEED = 20260520
# Floor on d_i, so that a joint moving a massless subtree (Model.warnings names it; H_ii = 0)
# gets small finite gains instead of zero gains and an infinite acceleration gain: a fraction
# of the model's largest inertia (relative, so a hand's 1e-6 kg m^2 fingertips are not lifted
# while a humanoid's massless finger gets ~1e-5), and an absolute floor for a massless model.
INERTIA_FLOOR_FRACTION = 1e-6
MIN_REFERENCE_INERTIA = 1e-12
# frequency grid of the phase margin: log-spaced up to the Nyquist frequency pi / T
_FREQUENCY_POINTS = 4000
_BISECTION_STEPS = 48
# a value applied less than this fraction below the requested one is rounding, not softening
SOFTENED_TOLERANCE = 1e-3


@dataclass(frozen=True)
class LoopDesign:
    """The unit loop the design chose: w (rad/s), its margins, and the loop it is designed for."""

    omega: float
    damping_ratio: float
    period: float
    delay: float
    phase_margin_deg: float
    gain_margin: float

    @property
    def bandwidth_hz(self) -> float:
        return self.omega / (2.0 * math.pi)


@dataclass(frozen=True)
class Softened:
    """A value the loop design applies softer than requested (module doc, step 3): `name` as
    the parameter's, with the axis or joint in brackets ('cartesian_stiffness[x]',
    'nullspace_stiffness[joint7]'), in that parameter's unit."""

    name: str
    requested: float
    applied: float

    def __str__(self) -> str:
        return f"{self.name} {self.requested:.4g} -> {self.applied:.4g}"


def softened_values(name, labels, requested, applied) -> tuple:
    """The Softened records of the entries whose applied value is below the requested one (by
    more than SOFTENED_TOLERANCE of it), in the order of `labels`."""
    return tuple(Softened(f"{name}[{label}]", float(r), float(a))
                 for label, r, a in zip(labels, requested, applied)
                 if a < r * (1.0 - SOFTENED_TOLERANCE))


def describe_softened(softened) -> str:
    """One line for a log: what the loop design softens, requested -> applied ('' if nothing)."""
    if not softened:
        return ""
    return ("the loop design softens " + ", ".join(str(s) for s in softened)
            + " (bounded by the loop's design bandwidth: a faster loop, stated by "
              "expected_state_period, expected_delay and bandwidth_hz, lifts it)")


def _position_box(model):
    """(lower, upper) of the reference poses: the position limits, +-pi where unbounded."""
    limits = np.array(model.position_limits, dtype=float)
    lower = np.where(np.isfinite(limits[:, 0]), limits[:, 0], -math.pi)
    upper = np.where(np.isfinite(limits[:, 1]), limits[:, 1], math.pi)
    return lower, upper


def zero_pose(model) -> np.ndarray:
    """The first reference pose: q = 0 clipped into the position limits."""
    lower, upper = _position_box(model)
    return np.clip(np.zeros(model.nq), lower, upper)


def reference_poses(model) -> np.ndarray:
    """The deterministic pose set of the design (module doc, step 1), shape (1 + 64, nq)."""
    lower, upper = _position_box(model)
    rng = np.random.default_rng(REFERENCE_POSE_SEED)
    random_poses = rng.uniform(lower, upper, size=(REFERENCE_POSE_COUNT, model.nq))
    return np.vstack([zero_pose(model), random_poses])


def subtrees(model) -> list:
    """Joint indices of each subtree hanging from the fixed base: H is block diagonal over
    them (H_ij = 0 unless i, j lie on one branch: branch-induced sparsity, RBDA ch. 6)."""
    parent = np.asarray(model.parent, dtype=int)
    root = np.arange(model.nq)
    for i in range(model.nq):          # parent[i] < i: the parent's root is known already
        if parent[i] >= 0:
            root[i] = root[parent[i]]
    return [np.flatnonzero(root == r) for r in np.unique(root)]


def reference_inertia(model) -> np.ndarray:
    """d_i = m_i / mu (module doc, step 1): the effective inertia of each joint with the others
    free, minimised over the reference poses, scaled so that D <= H(q) at every one of them."""
    blocks = subtrees(model)
    # per pose, per subtree: (H_block + eps I)^-1 (dynamics.free_inertia)
    inverses = [[regularised_inverse(H[np.ix_(b, b)]) for b in blocks]
                for H in (crba(model, q) for q in reference_poses(model))]
    m = np.zeros(model.nq)
    for b_index, b in enumerate(blocks):
        # m_i = min over poses of 1 / (H^-1)_ii;  mu = max over poses of lambda_max(H^-1 D_m)
        m_b = np.min([free_joint_inertia(inv[b_index]) for inv in inverses], axis=0)
        mu = max(max_inertia_ratio(m_b, inv[b_index]) for inv in inverses)
        m[b] = m_b / max(mu, 1.0)
    return np.maximum(m, max(INERTIA_FLOOR_FRACTION * float(np.max(m)), MIN_REFERENCE_INERTIA))


def sampled_loop_matrix(kp, kd, period, delay) -> np.ndarray:
    """The closed unit loop of the module doc (step 2) as x_{k+1} = Phi x_k on the state
    [q, v, u_{k-1}, ..., u_{k-n-1}]; stable iff every eigenvalue of Phi lies inside the unit
    circle."""
    n, delta = _split_delay(period, delay)
    A, B0, B1 = _discretised(period, delta)
    past = n + 1                         # u_{k-1} .. u_{k-n-1}
    size = 2 + past
    K = np.zeros(size)
    K[:2] = (kp, kd)

    def u(j):                            # u_{k-j} as a row on the state
        if j == 0:
            return -K
        row = np.zeros(size)
        row[2 + j - 1] = 1.0
        return row

    Phi = np.zeros((size, size))
    Phi[:2, :2] = A
    Phi[:2] += np.outer(B0, u(n)) + np.outer(B1, u(n + 1))
    Phi[2] = -K
    for i in range(1, past):
        Phi[2 + i, 2 + i - 1] = 1.0
    return Phi


def _split_delay(period, delay):
    """delay = n T + delta, 0 <= delta < T (a hair of rounding counts as a whole period)."""
    n = int(math.floor(delay / period + 1e-9))
    delta = max(delay - n * period, 0.0)
    if delta < 1e-9 * period:
        delta = 0.0
    return n, delta


def _discretised(T, delta):
    A = np.array([[1.0, T], [0.0, 1.0]])
    B0 = np.array([(T - delta) ** 2 / 2.0, T - delta])
    B1 = np.array([delta * (T - delta / 2.0), delta])
    return A, B0, B1


def _stable(kp, kd, period, delay) -> bool:
    Phi = sampled_loop_matrix(kp, kd, period, delay)
    return float(np.max(np.abs(np.linalg.eigvals(Phi)))) < 1.0


def _phase_margin_deg(kp, kd, period, delay) -> float:
    """180 deg + arg L(exp(j omega T)) at the gain crossover (the smallest over crossovers)."""
    n, delta = _split_delay(period, delay)
    _, B0, B1 = _discretised(period, delta)
    omega = np.geomspace(1e-3 / period, math.pi / period, _FREQUENCY_POINTS)
    z = np.exp(1j * omega * period)
    b = B0[:, None] * z ** -n + B1[:, None] * z ** (-n - 1)
    # (z I - A)^-1 b for A = [[1, T], [0, 1]]
    c_v = b[1] / (z - 1.0)
    c_q = b[0] / (z - 1.0) + period * b[1] / (z - 1.0) ** 2
    L = kp * c_q + kd * c_v
    phase = np.unwrap(np.angle(L))
    # ~ -pi at omega -> 0
    phase -= 2.0 * math.pi * np.round((phase[0] + math.pi) / (2.0 * math.pi))
    magnitude = np.abs(L)
    crossings = np.flatnonzero((magnitude[:-1] >= 1.0) & (magnitude[1:] < 1.0))
    if crossings.size == 0:
        return 180.0 if magnitude[-1] < 1.0 else -180.0
    return float(min(180.0 + math.degrees(phase[i]) for i in crossings))


def loop_margins(kp, kd, period, delay) -> tuple:
    """(phase margin in degrees, gain margin) of the unit loop with gains kp (1/s^2), kd (1/s)
    sampled every `period` with `delay` from state to command (module doc, step 2). The gain
    margin is the largest g with g (kp, kd) stable (0 if unstable as given; capped at 1e3)."""
    if not _stable(kp, kd, period, delay):
        return _phase_margin_deg(kp, kd, period, delay), 0.0
    low, high = 1.0, 2.0
    while _stable(high * kp, high * kd, period, delay):
        low, high = high, 2.0 * high
        if high > 1e3:
            return _phase_margin_deg(kp, kd, period, delay), math.inf
    for _ in range(30):
        middle = 0.5 * (low + high)
        stable = _stable(middle * kp, middle * kd, period, delay)
        low, high = (middle, high) if stable else (low, middle)
    return _phase_margin_deg(kp, kd, period, delay), low


@functools.lru_cache(maxsize=64)
def design_bandwidth(period=_DEFAULT("expected_state_period"), delay=_DEFAULT("expected_delay"),
                     damping_ratio=_DEFAULT("damping_ratio"),
                     max_bandwidth_hz=_DEFAULT("bandwidth_hz")) -> LoopDesign:
    """The largest w <= 2 pi max_bandwidth_hz whose unit loop (kp = w^2, kd = 2 zeta w) keeps
    a phase margin >= MIN_PHASE_MARGIN_DEG and a gain margin >= MIN_GAIN_MARGIN when sampled
    every `period` (> 0) with `delay` (>= 0) (module doc, step 2). The arguments are the
    parameters of the same names, checked by their table (ControllerConfig.check)."""

    def meets(w):
        kp, kd = w * w, 2.0 * damping_ratio * w
        return (_stable(kp, kd, period, delay)
                and _stable(MIN_GAIN_MARGIN * kp, MIN_GAIN_MARGIN * kd, period, delay)
                and _phase_margin_deg(kp, kd, period, delay) >= MIN_PHASE_MARGIN_DEG)

    w = 2.0 * math.pi * max_bandwidth_hz
    if not meets(w):
        low, high = 0.0, w
        for _ in range(_BISECTION_STEPS):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if meets(middle) else (low, middle)
        w = low
    if not w > 0.0:
        raise GainError(f"no default gains up to bandwidth_hz {max_bandwidth_hz:g} keep the "
                        f"stated margins with a state period of {period:g} s and a delay of "
                        f"{delay:g} s")
    pm, gm = loop_margins(w * w, 2.0 * damping_ratio * w, period, delay)
    return LoopDesign(w, damping_ratio, period, delay, pm, gm)
