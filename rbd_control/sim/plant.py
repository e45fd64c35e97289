"""What a plant offers the simulator node, and the checks every plant shares (no engine here).

The simulator node drives one of two physics engines, MuJoCo (sim/simulator.py) or DART
(sim/dart_plant.py). Both are "effort plants": efforts in, joint state out, indexed by joint
name. `EffortPlant` writes down the interface the node relies on, so a third engine knows what
to offer; `PlantOptions` (the constructor's keyword arguments), `CommandedJoints` (the command
state) and the functions below are what must not differ between engines (which options are
valid, what command is refused, how it is clamped, which names are unknown), so a controller
sees the same plant contract whichever engine runs.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence

import numpy as np

from rbd_control.dynamics.urdf import BASE_JOINTS

__all__ = ["URDF_GRAVITY", "CommandedJoints", "EffortPlant", "JointStateSample", "Payload",
           "PlantOptions", "checked_command", "checked_disturbance", "checked_initial_positions",
           "checked_wrench", "weld_base_joints"]


# The gravity the dynamics core assumes for a URDF (root frame, z up).
URDF_GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class Payload:
    """A point-like mass rigidly attached to a link, unknown to the controller's model.

    `com` is the mass centre in the link frame; `inertia` the diagonal rotational
    inertia about it (a small default keeps MuJoCo's positive-inertia check happy).
    """

    link: str
    mass: float
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Sequence[float] = (1e-4, 1e-4, 1e-4)


@dataclass(frozen=True)
class PlantOptions:
    """The keyword arguments every plant takes (Simulator(urdf, **options), DartSimulator too),
    in one place so that the engines cannot read them differently.

    commanded_joints: the order of effort commands (the controller's `joints`); None = every
        1-DoF joint of the URDF. Joints not commanded get zero effort.
    timestep: the physics step, s (positive, finite).
    joint_damping: apply URDF <dynamics damping friction> (one switch for both).
    clamp_effort: saturate commands at the URDF <limit effort>, as a real drive would.
    initial_positions: {joint: rad or m} at t = 0 (others at 0), the pose reset() returns to.
    payloads: masses on links that the URDF does not have (the controller does not know them).
    stiff_friction: URDF <dynamics friction> as Coulomb friction at any speed.
    obstacles: boxes a sphere on a link can hit (mujoco_model.Obstacle; MuJoCo only).
    compensates_gravity: the plant adds the gravity torque of its pose to every command, as a
        Franka or KUKA FRI in torque mode does (the controller then runs with
        robot_compensates_gravity); the URDF's gravity, the payloads' not included.
    """

    commanded_joints: Sequence[str] | None = None
    timestep: float = 1e-3
    joint_damping: bool = True
    clamp_effort: bool = True
    initial_positions: Mapping[str, float] | None = None
    payloads: Iterable[Payload] = ()
    stiff_friction: bool = False
    obstacles: Iterable = ()
    compensates_gravity: bool = False

    def __post_init__(self) -> None:
        if not (self.timestep > 0 and math.isfinite(self.timestep)):
            raise ValueError(f"timestep must be a positive number, got {self.timestep!r}")

    def commanded_names(self, reported: tuple[str, ...]) -> tuple[str, ...]:
        """The commanded joints' names, every reported joint by default; ValueError for none."""
        names = reported if self.commanded_joints is None else tuple(self.commanded_joints)
        if not names:
            raise ValueError("the robot has no movable 1-DoF joints to command")
        return names


@dataclass(frozen=True)
class JointStateSample:
    """What joint_state_broadcaster would publish: names, q, q̇, applied effort, sim time."""

    time: float
    names: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


class EffortPlant(Protocol):
    """The simulator node's view of a physics engine (MuJoCo's Simulator, DART's DartSimulator).

    The last command holds until the next (effort_controllers/JointGroupEffortController on
    gz_ros2_control); the reported effort is the effort applied, after clamping.
    """

    joint_names: tuple[str, ...]        # reported, every 1-DoF joint
    commanded_joints: tuple[str, ...]   # order of set_command's vector
    timestep: float
    time: float
    blow_ups: int                       # integrations that diverged; the arm was reset
    model_adjustments: tuple            # what the engine needed changed in the URDF

    def set_command(self, effort: Sequence[float]) -> bool: ...
    def set_disturbance(self, torques: Mapping[str, float]) -> None: ...

    def set_external_wrench(self, link: str, force: Sequence[float],
                            torque: Sequence[float] = ...,
                            point: Sequence[float] = ...) -> None: ...

    def step(self, count: int = 1) -> None: ...
    def state(self) -> JointStateSample: ...
    def reset(self, initial_positions: Mapping[str, float]) -> None: ...
    def set_time(self, time: float) -> None: ...


class CommandedJoints:
    """What both plants share above their engines: the joints reported and commanded (two
    JointMaps, or MuJoCo's JointIndex built on one), the effort command in force (clamped to
    `effort_limit`, None: not clamped; a refused one keeps the previous and counts in
    `rejected_commands`), the step count and the divergence count (`_blow_ups`, which the
    engine's step raises). An engine builds its model, calls this constructor with the maps,
    and provides `time` and `timestep`."""

    def __init__(self, reported, commanded, effort_limit: np.ndarray | None) -> None:
        self._reported, self._commanded = reported, commanded
        self._effort_limit = effort_limit
        self._command = np.zeros(len(commanded.names))
        self.rejected_commands = 0
        self._blow_ups = 0

    @property
    def time(self) -> float:
        """Sim time, s: the engine's clock."""
        raise NotImplementedError

    @property
    def timestep(self) -> float:
        """The engine's physics step, s."""
        raise NotImplementedError

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names reported in the joint state: every 1-DoF joint, in the engine's order."""
        return self._reported.names

    @property
    def commanded_joints(self) -> tuple[str, ...]:
        return self._commanded.names

    @property
    def steps(self) -> int:
        # derived from time, so a reset to t = 0 restarts it
        return int(round(self.time / self.timestep))

    @property
    def blow_ups(self) -> int:
        """How often the integration diverged (a non-finite state); the arm was then reset to
        the zero pose and carries on, so callers must surface it: the arm "teleports"."""
        return self._blow_ups

    @property
    def command(self) -> np.ndarray:
        return self._command.copy()

    def set_command(self, effort: Sequence[float]) -> bool:
        """Apply `effort` (commanded_joints order) from now on; False, and the previous command
        kept, for a wrong length or a non-finite value: a NaN must never reach the integrator."""
        effort = checked_command(effort, len(self._command), self._effort_limit)
        if effort is None:
            self.rejected_commands += 1
            return False
        self._command = effort
        return True


def checked_command(effort: Sequence[float], size: int,
                    limit: np.ndarray | None) -> np.ndarray | None:
    """`effort` clamped to ±limit, or None when it must be refused (wrong length, non-finite):
    a NaN must never reach an integrator."""
    effort = np.asarray(effort, dtype=float)
    if effort.shape != (size,) or not np.all(np.isfinite(effort)):
        return None
    return effort if limit is None else np.clip(effort, -limit, limit)


def checked_disturbance(torques: Mapping[str, float], names: Sequence[str]) -> dict[str, float]:
    """External joint torques by name; KeyError for an unknown joint, ValueError for a
    non-finite value, each naming the joint."""
    for name, value in torques.items():
        if name not in names:
            raise KeyError(f"disturbance on unknown joint {name!r}")
        if not math.isfinite(value):
            raise ValueError(f"disturbance on {name!r} is not finite: {value!r}")
    return {name: float(value) for name, value in torques.items()}


def checked_initial_positions(positions: Mapping[str, float],
                              names: Sequence[str]) -> dict[str, float]:
    unknown = set(positions) - set(names)
    if unknown:
        raise KeyError(f"initial position for unknown joint(s): {sorted(unknown)}")
    for name, value in positions.items():
        if not math.isfinite(value):
            raise ValueError(f"initial position of {name!r} is not finite: {value!r}")
    return {name: float(value) for name, value in positions.items()}


def checked_wrench(link: str, force, torque, point) -> list[np.ndarray]:
    """[force, torque, point] as 3-vectors; ValueError naming the link if one is not finite."""
    wrench = [np.asarray(x, dtype=float).reshape(3) for x in (force, torque, point)]
    if not all(np.all(np.isfinite(x)) for x in wrench):
        raise ValueError(f"external wrench on {link!r} must be finite: {wrench}")
    return wrench


def weld_base_joints(robot: ET.Element) -> None:
    """A floating or planar joint reaching a plant hangs from the base (the dynamics core's
    loader refuses it anywhere else) and is welded, as the core does: the robot is
    controlled, and simulated, relative to its base."""
    for joint in robot.findall("joint"):
        if joint.get("type") in BASE_JOINTS:
            joint.set("type", "fixed")
