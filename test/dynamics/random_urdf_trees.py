"""A hypothesis strategy for random, valid URDF trees, and the settings the property tests share.

A tree has 1-12 moving joints (revolute, continuous, prismatic) and up to 3 fixed joints whose
children are heavy, each hung from a random earlier link, so branching and welded bodies are
common. Axes are random non-unit vectors of either sign; origins have random xyz and rpy;
inertials have a random <origin rpy> and a full (non-diagonal) tensor built as R diag(I) R^T
from principal moments that satisfy the triangle inequality. About one moving link in five has
no <inertial> at all; a moving link left with a massless subtree gets a mass so that H stays
regular (the loader rightly refuses such a tree; that case has its own test).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Stable in CI: the same examples every run, no wall-clock deadline on shared cores.
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow,
                                                    HealthCheck.data_too_large])

MOVING_TYPES = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class Inertial:
    mass: float
    xyz: tuple
    rpy: tuple
    principal: tuple          # principal moments about the centre of mass
    axes_rpy: tuple           # orientation of the principal axes in the <inertial> frame

    def tensor(self):
        R = rpy_matrix(self.axes_rpy)
        return R @ np.diag(self.principal) @ R.T


@dataclass(frozen=True)
class LinkSpec:
    name: str
    parent: str
    joint: str                # URDF joint type
    axis: tuple
    xyz: tuple
    rpy: tuple
    inertial: Inertial | None


@dataclass(frozen=True)
class TreeSpec:
    links: tuple              # LinkSpec per non-root link, parents before children
    root_inertial: Inertial | None
    world_link: bool          # a massless "world" root welded to "base"

    def moving(self):
        return [link for link in self.links if link.joint != "fixed"]

    def joint_axes(self):
        """Unit axis of each moving joint, by joint name (the loader's normalisation)."""
        return {joint_name(link): np.asarray(link.axis) / np.linalg.norm(link.axis)
                for link in self.moving()}


def joint_name(link):
    return f"{link.name}_joint"


def rpy_matrix(rpy):
    r, p, y = rpy
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _floats(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def _vector(low, high):
    return st.tuples(_floats(low, high), _floats(low, high), _floats(low, high))


ANGLES = _vector(-math.pi, math.pi)
AXES = _vector(-2.0, 2.0).filter(lambda a: np.linalg.norm(a) > 0.2)


@st.composite
def inertials(draw, min_mass=0.05, max_mass=5.0):
    # principal moments from second moments s_x, s_y, s_z > 0 always satisfy the triangle
    # inequality, like those of a real mass distribution
    s = draw(_vector(0.002, 0.05))
    return Inertial(mass=draw(_floats(min_mass, max_mass)), xyz=draw(_vector(-0.2, 0.2)),
                    rpy=draw(ANGLES), principal=(s[1] + s[2], s[0] + s[2], s[0] + s[1]),
                    axes_rpy=draw(ANGLES))


@st.composite
def trees(draw, max_moving=12, max_fixed=3, types=MOVING_TYPES):
    n_moving = draw(st.integers(1, max_moving))
    n_fixed = draw(st.integers(0, max_fixed))
    kinds = draw(st.permutations(["moving"] * n_moving + ["fixed"] * n_fixed))
    links = []
    for k, kind in enumerate(kinds):
        parent = "base" if k == 0 else draw(st.sampled_from(["base"] + [l.name for l in links]))
        if kind == "fixed":
            joint, inertial = "fixed", draw(inertials(min_mass=0.5, max_mass=10.0))
        else:
            joint = draw(st.sampled_from(types))
            inertial = draw(st.one_of(st.none(), inertials(), inertials(), inertials()))
        links.append(LinkSpec(name=f"link{k}", parent=parent, joint=joint, axis=draw(AXES),
                              xyz=draw(_vector(-0.4, 0.4)), rpy=draw(ANGLES), inertial=inertial))
    links = _give_mass_to_massless_subtrees(links, draw(inertials()))
    return TreeSpec(links=tuple(links), root_inertial=draw(st.one_of(st.none(), inertials())),
                    world_link=draw(st.booleans()))


def _give_mass_to_massless_subtrees(links, fallback):
    links = list(links)
    for k in range(len(links) - 1, -1, -1):
        if links[k].joint != "fixed" and not _subtree_mass(links, links[k].name):
            links[k] = replace(links[k], inertial=fallback)
    return links


def _subtree_mass(links, name):
    own = sum(l.inertial.mass for l in links if l.name == name and l.inertial)
    return own + sum(_subtree_mass(links, l.name) for l in links if l.parent == name)


def _num(x):
    return repr(float(x))


def _triple(values):
    return " ".join(_num(v) for v in values)


def inertial_xml(inertial):
    if inertial is None:
        return ""
    I = inertial.tensor()
    return (f'<inertial><origin xyz="{_triple(inertial.xyz)}" rpy="{_triple(inertial.rpy)}"/>'
            f'<mass value="{_num(inertial.mass)}"/>'
            f'<inertia ixx="{_num(I[0, 0])}" ixy="{_num(I[0, 1])}" ixz="{_num(I[0, 2])}" '
            f'iyy="{_num(I[1, 1])}" iyz="{_num(I[1, 2])}" izz="{_num(I[2, 2])}"/></inertial>')


def to_urdf(tree: TreeSpec) -> str:
    parts = ['<?xml version="1.0"?>', '<robot name="random_tree">']
    if tree.world_link:
        parts.append('<link name="world"/>')
        parts.append('<joint name="world_to_base" type="fixed"><parent link="world"/>'
                     '<child link="base"/></joint>')
    parts.append(f'<link name="base">{inertial_xml(tree.root_inertial)}</link>')
    for link in tree.links:
        parts.append(f'<link name="{link.name}">{inertial_xml(link.inertial)}</link>')
        body = (f'<parent link="{link.parent}"/><child link="{link.name}"/>'
                f'<origin xyz="{_triple(link.xyz)}" rpy="{_triple(link.rpy)}"/>')
        if link.joint != "fixed":
            body += f'<axis xyz="{_triple(link.axis)}"/>'
        if link.joint in ("revolute", "prismatic"):
            body += '<limit lower="-2.0" upper="2.0" effort="100" velocity="10"/>'
        parts.append(f'<joint name="{joint_name(link)}" type="{link.joint}">{body}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)
