"""Fixed joints weld the child's inertia into the parent body, transformed correctly.

The pitfall list (ANCHORS): an <inertial><origin rpy> must rotate the inertia, and a welded
child's inertia must be moved into the parent's frame. Here a heavy tool hangs from the arm
through two fixed joints with rotated origins and a rotated inertial; the same arm with the
tool merged by hand (parallel-axis theorem, written out below) must have identical dynamics,
and Pinocchio must agree with the welded version.
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.dynamics import crba, forward_dynamics, gravity, load_urdf, rnea

from dynamics_oracles import PinocchioOracle, assert_close
from random_urdf_trees import rpy_matrix

ARM_MASS, ARM_COM, ARM_RPY = 1.3, np.array([0.1, 0.02, 0.3]), (0.2, -0.4, 0.9)
ARM_INERTIA = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, 0.002], [0.0, 0.002, 0.025]])
MOUNT = (np.array([0.05, -0.1, 0.6]), (0.3, 0.5, -1.1))     # upper_arm -> flange
TOOL_JOINT = (np.array([0.0, 0.08, 0.1]), (-0.7, 0.2, 0.4))  # flange -> tool
TOOL_MASS, TOOL_COM, TOOL_RPY = 4.0, np.array([0.03, 0.0, 0.12]), (1.0, 0.3, -0.2)
TOOL_INERTIA = np.array([[0.05, 0.0, 0.004], [0.0, 0.04, 0.0], [0.004, 0.0, 0.06]])


def triple(values):
    return " ".join(repr(float(v)) for v in values)


def inertial_xml(mass, com, rpy, I):
    return (f'<inertial><origin xyz="{triple(com)}" rpy="{triple(rpy)}"/>'
            f'<mass value="{float(mass)!r}"/><inertia ixx="{float(I[0, 0])!r}" '
            f'ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" iyy="{float(I[1, 1])!r}" '
            f'iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/></inertial>')


def robot(upper_arm_inertial, tool_links="", base_extra=""):
    return (f'<robot name="welded"><link name="base"/>{base_extra}'
            f'<link name="upper_arm">{upper_arm_inertial}</link>'
            f'<link name="forearm">{FOREARM}</link>'
            '<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper_arm"/>'
            '<origin xyz="0 0 0.3" rpy="0.1 0 0"/><axis xyz="0 -2 0.5"/>'
            '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
            '<joint name="elbow" type="revolute"><parent link="upper_arm"/><child link="forearm"/>'
            '<origin xyz="0 0 0.5"/><axis xyz="1 0 0"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>{tool_links}</robot>')


FOREARM = inertial_xml(0.8, [0.2, 0, 0], (0, 0, 0), np.diag([0.01, 0.02, 0.02]))


def welded_robot(base_extra=""):
    tool = (f'<link name="flange"/><link name="tool">'
            f'{inertial_xml(TOOL_MASS, TOOL_COM, TOOL_RPY, TOOL_INERTIA)}</link>'
            f'<joint name="mount" type="fixed"><parent link="upper_arm"/><child link="flange"/>'
            f'<origin xyz="{triple(MOUNT[0])}" rpy="{triple(MOUNT[1])}"/></joint>'
            f'<joint name="tool_joint" type="fixed"><parent link="flange"/><child link="tool"/>'
            f'<origin xyz="{triple(TOOL_JOINT[0])}" rpy="{triple(TOOL_JOINT[1])}"/></joint>')
    return robot(inertial_xml(ARM_MASS, ARM_COM, ARM_RPY, ARM_INERTIA), tool, base_extra)


def merged_by_hand():
    """upper_arm + tool as one <inertial> in upper_arm's frame."""
    def com_frame(xyz, rpy, I):     # (centre, inertia about it) in upper_arm coordinates
        return xyz, rpy_matrix(rpy) @ I @ rpy_matrix(rpy).T

    R_mount, R_tool = rpy_matrix(MOUNT[1]), rpy_matrix(TOOL_JOINT[1])
    R = R_mount @ R_tool                                      # tool frame in upper_arm frame
    tool_origin = MOUNT[0] + R_mount @ TOOL_JOINT[0]
    c_arm, I_arm = com_frame(ARM_COM, ARM_RPY, ARM_INERTIA)
    c_tool = tool_origin + R @ TOOL_COM
    I_tool = R @ rpy_matrix(TOOL_RPY) @ TOOL_INERTIA @ rpy_matrix(TOOL_RPY).T @ R.T
    mass = ARM_MASS + TOOL_MASS
    c = (ARM_MASS * c_arm + TOOL_MASS * c_tool) / mass

    def shift(m, d):                                          # parallel-axis term
        return m * (d @ d * np.eye(3) - np.outer(d, d))

    I = I_arm + shift(ARM_MASS, c_arm - c) + I_tool + shift(TOOL_MASS, c_tool - c)
    return robot(inertial_xml(mass, c, (0.0, 0.0, 0.0), I))


@pytest.fixture(scope="module")
def models():
    return load_urdf(welded_robot()), load_urdf(merged_by_hand())


def states(n=10):
    rng = np.random.default_rng(11)
    return [rng.uniform(-2, 2, size=(3, 2)) for _ in range(n)]


def test_welded_tool_equals_the_tool_merged_by_hand(models):
    welded, merged = models
    assert welded.joint_names == merged.joint_names == ("shoulder", "elbow")
    for q, qd, qdd in states():
        assert_close(rnea(welded, q, qd, qdd), rnea(merged, q, qd, qdd), "tau", rtol=1e-12)
        assert_close(crba(welded, q), crba(merged, q), "H", rtol=1e-12)
        assert_close(gravity(welded, q), gravity(merged, q), "G", rtol=1e-12)


def test_welded_tool_matches_pinocchio(models):
    welded, _ = models
    oracle = PinocchioOracle(welded, welded_robot())
    for q, qd, qdd in states():
        f_ext = {"tool": np.array([0.3, -1.0, 2.0, 5.0, 0.0, -3.0])}
        assert_close(rnea(welded, q, qd, qdd, f_ext), oracle.rnea(q, qd, qdd, f_ext), "tau")
        assert_close(crba(welded, q), oracle.crba(q), "H")
        assert_close(forward_dynamics(welded, q, qd, qdd), oracle.forward_dynamics(q, qd, qdd),
                     "qdd")


def test_a_force_on_a_welded_link_loads_the_body_it_is_welded_to(models):
    """The same world wrench on 'tool', 'flange' or 'upper_arm' is the same load: they are one
    rigid body."""
    welded, _ = models
    wrench = np.array([0.3, -1.0, 2.0, 5.0, 0.0, -3.0])
    for q, qd, qdd in states(3):
        on_arm = rnea(welded, q, qd, qdd, {"upper_arm": wrench})
        for link in ("flange", "tool"):
            assert_close(rnea(welded, q, qd, qdd, {link: wrench}), on_arm, f"f_ext on {link}",
                         rtol=1e-13)


def test_mass_welded_to_the_base_moves_nothing():
    plain = load_urdf(welded_robot())
    heavy_base = load_urdf(welded_robot(base_extra=(
        f'<link name="pedestal">{inertial_xml(50.0, [0, 0, 0.1], (0, 0, 0), np.eye(3))}</link>'
        '<joint name="pedestal_mount" type="fixed"><parent link="base"/>'
        '<child link="pedestal"/></joint>')))
    for q, qd, qdd in states(3):
        assert_close(rnea(heavy_base, q, qd, qdd), rnea(plain, q, qd, qdd), "tau", rtol=1e-15)
        # and a force on a base link does no work on the joints
        loaded = rnea(heavy_base, q, qd, qdd, {"pedestal": np.ones(6) * 100.0})
        assert_close(loaded, rnea(plain, q, qd, qdd), "tau with f_ext on the base", rtol=1e-15)
