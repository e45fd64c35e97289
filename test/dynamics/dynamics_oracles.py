"""Helpers shared by the dynamics tests: where the example robots live, random states, and the
translation of our conventions into Pinocchio's (joint order, continuous joints, local forces).

Pinocchio keeps its own joint order and gives a continuous joint two coordinates (cos, sin), so
every comparison maps joints by name; nothing relies on both libraries ordering alike.
"""
from __future__ import annotations

import functools
import importlib.metadata
import pathlib

import numpy as np

RELATIVE_TOLERANCE = 1e-9


def robots_dir() -> pathlib.Path:
    """example-robot-data (a cmeel wheel) installs its robots under
    <site-packages>/cmeel.prefix."""
    dist = importlib.metadata.distribution("example-robot-data")
    path = pathlib.Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    if not path.is_dir():
        raise FileNotFoundError(f"example-robot-data robots not found under {path}")
    return path


def example_robot_urdfs() -> list[str]:
    """Every URDF of example-robot-data, as paths relative to robots_dir(), sorted."""
    root = robots_dir()
    return sorted(str(path.relative_to(root)) for path in root.rglob("*.urdf"))


@functools.lru_cache(maxsize=None)
def read_robot(relative: str) -> str:
    return (robots_dir() / relative).read_text()


def assert_close(ours, reference, what, rtol=RELATIVE_TOLERANCE):
    """|ours - reference| <= rtol * max(|reference|_inf, 1) entrywise; returns the relative error.

    The floor of 1 (N, N m, kg m^2) keeps the check meaningful for quantities that are zero by
    symmetry, e.g. G for joints whose axes are parallel to gravity."""
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    assert ours.shape == reference.shape, f"{what}: shape {ours.shape} != {reference.shape}"
    scale = max(float(np.max(np.abs(reference), initial=0.0)), 1.0)
    error = float(np.max(np.abs(ours - reference), initial=0.0)) / scale
    assert error <= rtol, (f"{what}: relative error {error:.3e} > {rtol:.0e}\n"
                           f"ours      {ours}\nreference {reference}")
    return error


def random_state(model, rng):
    """q inside the position limits (uniform in [-pi, pi] where unlimited), qd and qdd
    ~ N(0, 1)."""
    lower, upper = model.position_limits[:, 0], model.position_limits[:, 1]
    limited = np.isfinite(lower) & np.isfinite(upper)
    q = rng.uniform(-np.pi, np.pi, model.nq)
    q[limited] = rng.uniform(lower[limited], upper[limited])
    return q, rng.normal(size=model.nq), rng.normal(size=model.nq)


def random_wrenches(model, rng, count=3):
    """A few [moment; force] world wrenches on random links, always including the last link
    (often welded through fixed joints) and, when there is one, a link of the fixed base."""
    names = list(model.link_names)
    chosen = {names[-1]}
    picks = rng.choice(names, size=min(count, len(names)), replace=False)
    chosen.update(str(name) for name in picks)
    return {name: rng.normal(size=6) * 10.0 for name in chosen}


class PinocchioOracle:
    """Pinocchio's model of the same URDF, with our state translated into its layout."""

    def __init__(self, model, urdf_xml):
        import pinocchio as pin
        self.pin = pin
        self.model = model
        self.pmodel = pin.buildModelFromXML(urdf_xml)    # mimic joints independent, like ours
        self.pdata = self.pmodel.createData()
        pnames = [name for name in self.pmodel.names[1:]]
        assert sorted(pnames) == sorted(model.joint_names), (
            f"Pinocchio's joints {pnames} != ours {list(model.joint_names)}")
        assert self.pmodel.nv == model.nq
        self.joint_id = [self.pmodel.getJointId(name) for name in model.joint_names]
        joints = [self.pmodel.joints[j] for j in self.joint_id]
        self.idx_q = np.array([j.idx_q for j in joints])
        self.nq_joint = np.array([j.nq for j in joints])
        self.idx_v = np.array([j.idx_v for j in joints])
        assert set(self.nq_joint) <= {1, 2}
        assert np.array_equal(self.nq_joint == 2, model.continuous), \
            "Pinocchio and we disagree on which joints are continuous"

    def q(self, q):
        out = self.pin.neutral(self.pmodel)
        for qi, start, size in zip(q, self.idx_q, self.nq_joint):
            if size == 1:
                out[start] = qi
            else:                          # continuous joint: (cos, sin)
                out[start:start + 2] = np.cos(qi), np.sin(qi)
        return out

    def v(self, qd):
        out = np.zeros(self.pmodel.nv)
        out[self.idx_v] = qd
        return out

    def ours(self, x):
        """A Pinocchio velocity-space vector or matrix in our joint order."""
        x = np.asarray(x)
        return x[self.idx_v] if x.ndim == 1 else x[np.ix_(self.idx_v, self.idx_v)]

    def local_forces(self, q, f_ext):
        """Our world wrenches [n; f] about the world origin -> Pinocchio's per-joint forces in
        each joint's local frame (a link's force acts on the joint that carries the link)."""
        pin = self.pin
        pin.forwardKinematics(self.pmodel, self.pdata, self.q(q))
        forces = [pin.Force.Zero() for _ in range(self.pmodel.njoints)]
        for link, wrench in f_ext.items():
            frame = self.pmodel.frames[self.pmodel.getFrameId(link, pin.FrameType.BODY)]
            joint = frame.parentJoint
            world = pin.Force(np.asarray(wrench[3:]), np.asarray(wrench[:3]))
            forces[joint] = forces[joint] + self.pdata.oMi[joint].actInv(world)
        return forces

    def rnea(self, q, qd, qdd, f_ext=None):
        args = (self.pmodel, self.pdata, self.q(q), self.v(qd), self.v(qdd))
        if f_ext:
            args += (self.local_forces(q, f_ext),)
        return self.ours(self.pin.rnea(*args))

    def crba(self, q):
        M = self.pin.crba(self.pmodel, self.pdata, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T          # older versions fill the upper half only
        return self.ours(M)

    def gravity(self, q):
        return self.ours(self.pin.computeGeneralizedGravity(self.pmodel, self.pdata, self.q(q)))

    def velocity_product(self, q, qd):
        """C(q, qd) qd = nonLinearEffects - G."""
        nle = self.pin.nonLinearEffects(self.pmodel, self.pdata, self.q(q), self.v(qd))
        return self.ours(nle) - self.gravity(q)

    def forward_dynamics(self, q, qd, tau, f_ext=None):
        args = (self.pmodel, self.pdata, self.q(q), self.v(qd), self.v(tau))
        if f_ext:
            args += (self.local_forces(q, f_ext),)
        return self.ours(self.pin.aba(*args))
