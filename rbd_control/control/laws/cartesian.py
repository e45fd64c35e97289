"""Cartesian impedance: the law of mode `cartesian_impedance` and its targets. No rclpy.

    tau = J^T (K e - D xdot + f_d) + N (K_n (q_n - q) - D_n qd) + C(q, qd) qd + G(q)

J (6 x nq) is the end-effector link's Jacobian, [omega; v] in world axes; e = [e_o; e_p] the
pose error towards the interpolated target (pose.py), each part clipped to its norm bound
(max_cartesian_error, as franka_example_controllers' cartesian impedance example limits the
error so that a far target cannot slam the arm); xdot = J qd.
D is the "double diagonalization" design of Albu-Schaeffer, Ott, Frese & Hirzinger 2003
(Cartesian impedance control of redundant robots, ICRA): in the coordinates where Lambda = 1 and
K is diagonal, each mode gets 2 zeta sqrt(k); back in task coordinates
    D = 2 zeta Lambda^1/2 (Lambda^-1/2 K Lambda^-1/2)^1/2 Lambda^1/2
which is positive definite for any Lambda, K (their product-sum "factorization" design is not
when Lambda is as anisotropic as it gets near a singularity). D / (2 zeta) is the matrix
geometric mean Lambda # K, which is symmetric in its arguments (Bhatia 2007, Positive Definite
Matrices, ch. 4), so with K diagonal and positive it is computed as
    D = 2 zeta K^1/2 (K^-1/2 Lambda K^-1/2)^1/2 K^1/2
with one eigendecomposition and no root of Lambda.
N = 1 - J^T Jbar^T with the dynamically consistent inverse Jbar = H^-1 J^T Lambda (Khatib 1987):
the posture torque produces no end-effector acceleration (q_n - q wraps on continuous joints).
D_n = 2 zeta sqrt(K_n d) per joint, d the joint's reference inertia (loop_design.py), with K_n
capped at d w^2.
Bandwidth bound: the task-space modes of Lambda x'' = -K x - D x' have frequencies
omega_k = 1 / sqrt(s_k), s_k the eigenvalues of K^-1/2 Lambda K^-1/2 (the ones D is built from).
A light direction (a wrist's rotation, a pose near a singularity) makes omega_k far faster than
the loop can follow at its state period and delay, so each mode k's stiffness is scaled per
state by
    sigma_k = min(1, w^2 s_k)        (and its damping by sqrt(sigma_k): the same damping ratio)
    K = K^1/2 V diag(sigma) V^T K^1/2,   D = 2 zeta K^1/2 V diag(sqrt(sigma s)) V^T K^1/2
(V, s the eigenvectors and eigenvalues above): the fast modes (a light wrist's rotation) are
bounded at w, the others (the translation a user pushes) keep the configured stiffness; with
w the discrete-time design bandwidth (loop_design.design_bandwidth: 45 deg and a gain margin
of 2 at expected_state_period and expected_delay, with cartesian_damping_ratio; the model plan
hands it over, control/model/plan.py; cartesian_stiffness is an upper bound), times the
controller's feedback scale (age guard, oscillation). Lambda comes damped near singularities
(dynamics.operational_space_inertia), so nothing here divides by a vanishing number.
What the bound softens is reported (softened_at: loop_design.Softened records): per axis, the
requested stiffness and the applied one, the diagonal entry of K above (the restoring force
along an axis per unit of error along it) at a stated pose, since Lambda(q) decides it; and
each joint's nullspace stiffness above its cap d w^2 (the same at every pose).
The target moves from the current one to each new pose target by a minimum-jerk move (pose.py),
or with cartesian_filter_time_constant > 0 through pose.py's PoseFilter, for a stream of
targets at 5-50 Hz (a policy, a leader arm); cartesian_target_timeout says once when a stream
stopped (the last target is held: the filter settles on it). The error clip above applies to
either, as CRISP's error clip does (arXiv 2509.06819).
f_d is the wrench the arm adds at the end effector: [force; torque] in world axes at the link
origin (geometry_msgs/Wrench order), ramped in over WRENCH_RAMP_TIME by the minimum-jerk profile.
Config vectors follow the same convention: stiffness (kx, ky, kz, krx, kry, krz).
"""
from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Optional

import numpy as np

from rbd_control.dynamics import bias, frame_pose, operational_space_inertia

from rbd_control.control.errors import ConfigError, GainError
from rbd_control.control.laws.joint import position_error
from rbd_control.control.laws.loop_design import LoopDesign, design_bandwidth, softened_values
from rbd_control.control.laws.per_joint import resolve_per_joint
from rbd_control.control.laws.pose import (PoseFilter, PoseInterpolation, minimum_jerk,
                                           orientation_error, quat_from_matrix)
from rbd_control.params.controller import CONTROLLER_PARAMETERS

WRENCH_RAMP_TIME = 0.25   # s
# [force; torque] -> [moment; force] (J's rows), and [e_o; e_p] -> [e_p; e_o]: the same swap
WRENCH_TO_TWIST_ORDER = TWIST_TO_CONFIG_ORDER = np.array([3, 4, 5, 0, 1, 2])
AXES = ("x", "y", "z", "rx", "ry", "rz")   # cartesian_stiffness's order


class CartesianState(NamedTuple):
    """What the law saw and aimed at in one update (for ~/current_pose and tuning plots)."""

    position: np.ndarray          # end-effector origin, world
    quaternion_xyzw: np.ndarray
    target_position: np.ndarray   # the interpolated target at this time
    target_quaternion_xyzw: np.ndarray
    error: np.ndarray             # [e_p; e_o] after clipping (position first, like the config)
    wrench: np.ndarray            # f_d in force [fx, fy, fz, tx, ty, tz]
    damping: float                # the Lambda damping (0 away from singularities)


def clip_norm(x, bound):
    norm = math.hypot(*x)
    return x if norm <= bound else x * (bound / norm)


def sqrt_psd(A):
    """The symmetric square root of a symmetric positive semi-definite matrix."""
    s, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.maximum(s, 0.0))) @ V.T


class CartesianImpedance:
    """Targets and law for one end-effector link. All vectors here are in model joint order."""

    def __init__(self, model, ee_link, stiffness, damping_ratio, max_error, nullspace_stiffness,
                 nullspace_damping, nullspace_posture, max_bandwidth=math.inf,
                 nullspace_softened=(), filter_time_constant=0.0, target_timeout=0.0,
                 warnings=None, wall_bandwidth=math.inf):
        frame_pose(model, np.zeros(model.nq), ee_link)   # InputError naming an unknown link
        if model.link_body[ee_link] < 0:
            raise ValueError(f"ee_link {ee_link!r} is fixed to the base: no joint moves it")
        # the model is not kept: the controller passes the one every law uses (payload included)
        self.ee_link = ee_link
        self.continuous = np.asarray(model.continuous, dtype=bool)
        self.set_stiffness(stiffness)
        self.zeta = float(damping_ratio)
        self.max_bandwidth = float(max_bandwidth)       # w, rad/s (module doc)
        self.wall_bandwidth = float(wall_bandwidth)     # bounds a stiffness set while it runs
        self.stiffness_scale = 1.0                      # sigma of the last state
        self.max_translation, self.max_rotation = (float(x) for x in max_error)
        self.K_n, self.D_n = np.asarray(nullspace_stiffness), np.asarray(nullspace_damping)
        # Softened records of the nullspace stiffness capped by the bandwidth (from_config)
        self.nullspace_softened = tuple(nullspace_softened)
        self.configured_posture = np.asarray(nullspace_posture, dtype=float)
        self.posture = None
        self._target = None
        # streamed targets (pose.py's PoseFilter; 0: minimum-jerk moves) and their timeout
        self._filter_T, self._timeout = float(filter_time_constant), float(target_timeout)
        self._received = -math.inf
        self.held = False          # no target for target_timeout: holding the last one
        self._warnings = warnings
        self._wrench_from = self._wrench_to = np.zeros(6)
        self._wrench_t0 = -math.inf
        self.last: Optional[CartesianState] = None

    def set_stiffness(self, stiffness, model=None, q=None) -> tuple:
        """The task stiffness (kx, ky, kz, krx, kry, krz) from now on, as a tuple; ConfigError
        unless 6 positive numbers (the cartesian_stiffness parameter's rule). With the measured
        pose q (model order) on `model`, a change while the law runs (a policy's variable
        impedance): also ConfigError, naming the axes, for an axis above stiffness_bound_at(q);
        the stiffness in force stays. Below it a mode that couples axes may still be softened
        (softened_at), as the configured stiffness is at start."""
        reason = CONTROLLER_PARAMETERS.validate("cartesian_stiffness", stiffness)
        if reason:
            raise ConfigError(reason)
        if q is not None:
            bound = self.stiffness_bound_at(model, q)
            over = [f"{axis} {k:.4g} > {most:.4g}" for axis, k, most
                    in zip(AXES, np.asarray(stiffness, dtype=float), bound) if k > most]
            if over:
                raise ConfigError(
                    f"cartesian_stiffness above what the loop holds at this pose: "
                    f"{', '.join(over)} (the axis alone would be faster than the fastest loop "
                    f"expected_state_period and expected_delay allow)")
        k = np.asarray(stiffness, dtype=float)
        self.K = np.concatenate([k[3:], k[:3]])          # [omega; v] order of J
        # K^1/2_a K^1/2_b, for D (K > 0, checked above)
        self._K_root_outer = np.outer(np.sqrt(self.K), np.sqrt(self.K))
        return tuple(float(x) for x in k)

    @property
    def active(self) -> bool:
        return self._target is not None

    def deactivate(self):
        self._target = None

    def activate(self, model, q, now):
        """Hold the measured pose, no wrench; the posture is nullspace_posture where it is a
        number and q where it is NaN."""
        T = frame_pose(model, q, self.ee_link)
        self._target = PoseInterpolation.hold(T[:3, 3], quat_from_matrix(T[:3, :3]), now)
        self.posture = np.where(np.isnan(self.configured_posture), q, self.configured_posture)
        self._wrench_from = self._wrench_to = np.zeros(6)
        self._wrench_t0 = -math.inf
        self._received, self.held = -math.inf, False   # no stream to time out yet

    def set_pose_target(self, position, quaternion_xyzw, now):
        """Move from where the target is now (continuous, no jump) to the new pose: a
        minimum-jerk move, or with a filter time constant the filter follows it."""
        self._received, self.held = now, False
        if self._filter_T <= 0.0:
            p, q = self._target.sample(now)
            self._target = PoseInterpolation(p, q, position, quaternion_xyzw, now)
            return
        if not isinstance(self._target, PoseFilter):
            self._target = PoseFilter(*self._target.sample(now), now, self._filter_T)
        self._target.retarget(position, quaternion_xyzw, now)

    def _check_timeout(self, now):
        """A stream that stopped: the last target is held (as it is), said once per stop."""
        if self._timeout > 0.0 and not self.held and now - self._received > self._timeout \
                and math.isfinite(self._received):
            self.held = True
            if self._warnings is not None:
                self._warnings.warn("pose_target_timeout",
                                    f"no pose target for {self._timeout:g} s "
                                    f"(cartesian_target_timeout): holding the last one")

    def set_wrench_target(self, wrench, now):
        self._wrench_from, self._wrench_to = self.wrench(now), np.array(wrench, dtype=float)
        self._wrench_t0 = now

    @property
    def end_time(self) -> float:
        return self._target.end_time

    def wrench(self, now):
        s = minimum_jerk((now - self._wrench_t0) / WRENCH_RAMP_TIME)
        return self._wrench_from + s * (self._wrench_to - self._wrench_from)

    def damping_matrix(self, Lambda):
        """D = 2 zeta Lambda # K = 2 zeta K^1/2 (K^-1/2 Lambda K^-1/2)^1/2 K^1/2"""
        K_outer = self._K_root_outer
        return (2.0 * self.zeta) * K_outer * sqrt_psd(Lambda / K_outer)

    def _modes(self, Lambda, scale):
        """(s, V, sigma): the eigenvalues s and eigenvectors V of K^-1/2 Lambda K^-1/2 and
        each mode's stiffness scale sigma_k = min(1, w^2 s_k) (module doc)."""
        s, V = np.linalg.eigh(Lambda / self._K_root_outer)
        s = np.maximum(s, 0.0)
        w = scale * self.max_bandwidth
        sigma = np.minimum(1.0, w * w * s) if math.isfinite(w) else np.ones_like(s)
        return s, V, sigma

    def task_gains(self, Lambda, scale=1.0):
        """(K, D) as 6 x 6 matrices: each task-space mode faster than the bandwidth
        scale * max_bandwidth softened to it, the others as configured (module doc)."""
        K_outer = self._K_root_outer
        s, V, sigma = self._modes(Lambda, scale)
        self.stiffness_scale = float(sigma.min())
        # in the modes' coordinates: stiffness sigma_k, damping 2 zeta sqrt(sigma_k s_k)
        K = K_outer * ((V * sigma) @ V.T)
        D = (2.0 * self.zeta) * K_outer * ((V * np.sqrt(sigma * s)) @ V.T)
        return K, D

    def stiffness_bound_at(self, model, q) -> np.ndarray:
        """Per axis (cartesian_stiffness's order and units), the stiffness above which that
        axis alone is faster than the wall loop w (wall_bandwidth: the fastest loop the declared
        period and delay allow, which bounds joint_impedance's stiffness too) at pose q:
        w^2 Lambda_ii(q). It is the Rayleigh quotient of K v = w^2 Lambda v at the axis, so
        above it the fastest mode is faster than w whatever the other axes are (inf for a loop
        with no bound). Below it the design bandwidth softens what is faster than it."""
        w = self.wall_bandwidth
        if not math.isfinite(w):
            return np.full(6, math.inf)
        Lambda = operational_space_inertia(model, q, self.ee_link).Lambda
        return (w * w * np.diag(Lambda))[TWIST_TO_CONFIG_ORDER]

    def softened_at(self, model, q) -> tuple:
        """What the bandwidth bound softens at pose q (model order) on `model`, at full
        feedback scale: the loop_design.Softened records of each axis whose applied stiffness
        (K's diagonal entry, cartesian_stiffness's order and units) is below the requested one,
        then the nullspace stiffness capped per joint. Pure: the law's state is unchanged."""
        Lambda = operational_space_inertia(model, q, self.ee_link).Lambda
        _, V, sigma = self._modes(Lambda, 1.0)
        applied = self._K_root_outer.diagonal() * np.einsum("ik,k,ik->i", V, sigma, V)
        return softened_values("cartesian_stiffness", AXES, self.K[TWIST_TO_CONFIG_ORDER],
                               applied[TWIST_TO_CONFIG_ORDER]) + self.nullspace_softened

    def torques(self, model, q, qd, now, scale=1.0):
        """(feedforward C qd + G, feedback J^T F + N tau_n), model order, on `model` (the
        controller's: the URDF's with any payload). scale: the controller's bandwidth scale
        (age guard, oscillation)."""
        ops = operational_space_inertia(model, q, self.ee_link)
        J, Lambda = ops.J, ops.Lambda
        T = frame_pose(model, q, self.ee_link)
        self._check_timeout(now)
        p_d, q_d = self._target.sample(now)
        quat = quat_from_matrix(T[:3, :3])
        # e = [e_o; e_p], each clipped to its bound
        e_p = clip_norm(p_d - T[:3, 3], self.max_translation)
        e_o = clip_norm(orientation_error(q_d, quat), self.max_rotation)
        e = np.concatenate([e_o, e_p])
        f_d = self.wrench(now)
        K, D = self.task_gains(Lambda, scale)
        F = K @ e - D @ (J @ qd) + f_d[WRENCH_TO_TWIST_ORDER]
        # J^T F + N tau_n = J^T (F - Jbar^T tau_n) + tau_n,  Jbar^T = Lambda J H^-1
        K_n, D_n = ((self.K_n, self.D_n) if scale == 1.0
                    else (scale * scale * self.K_n, scale * self.D_n))
        tau_n = K_n * position_error(self.posture, q, self.continuous) - D_n * qd
        feedback = J.T @ (F - Lambda @ (ops.Hinv_JT.T @ tau_n)) + tau_n
        self.last = CartesianState(T[:3, 3].copy(), quat, p_d, q_d, e[TWIST_TO_CONFIG_ORDER],
                                   f_d, ops.damping)
        return bias(model, q, qd), feedback


def from_config(model, config, joint_map, reference_inertia, design: LoopDesign, mode=None,
                warnings=None, wall_bandwidth=math.inf):
    """The law a ControllerConfig asks for on this model (None without an ee_link); per-joint
    values in command order (joint_map) become model order. design: the model plan's loop
    design (the joint gains'), solved again only for another cartesian_damping_ratio. mode: the
    running mode (default config.mode, the one at start-up). warnings: a ThrottledWarnings,
    told when a pose target times out. wall_bandwidth: the fastest loop the declared period and
    delay allow (rad/s; model/plan.py's wall_loop), the bound of a stiffness set while the law
    runs. ConfigError with the reason."""
    joints = joint_map.names
    mode = config.mode if mode is None else mode
    if not config.ee_link:
        if mode == "cartesian_impedance":
            raise ConfigError("mode cartesian_impedance needs ee_link in the controller config")
        return None
    if config.ee_link not in model.link_body and mode != "cartesian_impedance":
        # another robot than the configured one (a shared YAML names tool0): the joint-space
        # modes still work; switching to cartesian_impedance is refused (no law)
        return None
    try:
        requested = resolve_per_joint(config.nullspace_stiffness, joints, np.zeros(len(joints)),
                                      "nullspace_stiffness")
        # NaN: that joint's posture is the one at activation
        posture = np.full(len(joints), np.nan)
        value = config.nullspace_posture
        if value is not None:
            given = resolve_per_joint(value, joints, np.zeros(len(joints)), "nullspace_posture",
                                      minimum=-math.inf)
            chosen = [j in value for j in joints] if isinstance(value, Mapping) else slice(None)
            posture[chosen] = given[chosen]
    except GainError as exc:
        raise ConfigError(str(exc)) from None
    inertia = joint_map.put(reference_inertia, fill=1.0)
    zeta = config.cartesian_damping_ratio
    if float(zeta) != design.damping_ratio:   # the law's own damping: another unit loop
        try:
            design = design_bandwidth(design.period, design.delay, float(zeta),
                                      float(config.bandwidth_hz))
        except GainError as exc:
            raise ConfigError(str(exc)) from None
    w = design.omega
    # the joint's bandwidth bound too (command order, for the report)
    capped = np.minimum(requested, np.asarray(reference_inertia) * w * w)
    stiffness = joint_map.put(capped)
    try:
        return CartesianImpedance(
            model, config.ee_link, config.cartesian_stiffness, zeta, config.max_cartesian_error,
            stiffness, 2.0 * zeta * np.sqrt(stiffness * inertia),
            joint_map.put(posture, fill=np.nan), max_bandwidth=w, wall_bandwidth=wall_bandwidth,
            nullspace_softened=softened_values("nullspace_stiffness", joints, requested, capped),
            filter_time_constant=config.cartesian_filter_time_constant,
            target_timeout=config.cartesian_target_timeout, warnings=warnings)
    except ValueError as exc:   # InputError for an unknown link, or a link on the base
        raise ConfigError(f"ee_link: {exc}") from None
