"""The closed form (Zhang 2000, generalized d'Alembert equations) on systems solvable by hand,
and its branch decomposition.

Its agreement with RNEA/CRBA on random trees is in test_properties.py and with Pinocchio on the
example robots in test_against_pinocchio.py; these tests pin it to textbook answers so that a
shared mistake in the formula and the kernels could not hide.
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.dynamics import crba, gravity, load_urdf, rnea
from rbd_control.dynamics.closed_form import (branches, closed_form_rnea, closed_form_terms,
                                              kinetic_energy)

G0 = 9.81


def inertial(mass, xyz="0 0 0", ixx=0.01, iyy=0.02, izz=0.03):
    return (f'<inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def joint(name, parent, child, kind, axis, xyz="0 0 0"):
    limit = '<limit lower="-3" upper="3" effort="1" velocity="1"/>' if kind != "continuous" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')


def test_pendulum_by_hand():
    """Mass m at distance l along x, turning about y (axis given as non-unit 0 3 0):
    H = m l^2 + I_yy; the COM sits at (l cos q, 0, -l sin q), so V = -m g0 l sin q and
    G = dV/dq = -m g0 l cos q; the velocity term of a single joint is zero."""
    m, l, iyy = 2.0, 0.7, 0.02
    model = load_urdf(f'<robot name="pendulum"><link name="base"/>'
                      f'<link name="bob">{inertial(m, f"{l} 0 0", iyy=iyy)}</link>'
                      f'{joint("swing", "base", "bob", "continuous", "0 3 0")}</robot>')
    for q, qd, qdd in [(0.3, 1.5, -2.0), (-2.0, 0.0, 1.0), (3.0, -4.0, 0.5)]:
        H, c, G = closed_form_terms(model, [q], [qd])
        assert H[0, 0] == pytest.approx(m * l * l + iyy, rel=1e-14)
        assert G[0] == pytest.approx(-m * G0 * l * np.cos(q), rel=1e-12, abs=1e-12)
        assert c[0] == pytest.approx(0.0, abs=1e-12)
        expected = (m * l * l + iyy) * qdd - m * G0 * l * np.cos(q)
        assert closed_form_rnea(model, [q], [qd], [qdd])[0] == pytest.approx(expected, rel=1e-12)
        assert rnea(model, [q], [qd], [qdd])[0] == pytest.approx(expected, rel=1e-12)
        assert kinetic_energy(model, [q], [qd]) == pytest.approx(0.5 * H[0, 0] * qd * qd)


def test_vertical_slide_carrying_a_rotating_arm():
    """A prismatic lift along -z (negative axis) carrying a revolute arm about z: the lift holds
    the total weight, G = -(m1 + m2) g0 (pushing along -z), H_lift = m1 + m2, and the arm's
    rotation about the vertical needs no torque against gravity nor couples to the lift."""
    m1, m2, l = 3.0, 1.5, 0.4
    model = load_urdf(
        f'<robot name="lift"><link name="base"/><link name="carriage">{inertial(m1)}</link>'
        f'<link name="arm">{inertial(m2, f"{l} 0 0")}</link>'
        f'{joint("lift", "base", "carriage", "prismatic", "0 0 -1")}'
        f'{joint("turn", "carriage", "arm", "revolute", "0 0 1", "0 0 0.2")}</robot>')
    q, qd = np.array([0.5, 1.0]), np.array([0.3, 2.0])
    H, c, G = closed_form_terms(model, q, qd)
    np.testing.assert_allclose(G, [-(m1 + m2) * G0, 0.0], atol=1e-12)
    np.testing.assert_allclose(H, [[m1 + m2, 0.0], [0.0, m2 * l * l + 0.03]], atol=1e-12)
    np.testing.assert_allclose(c, [0.0, 0.0], atol=1e-12)   # centripetal force is horizontal
    np.testing.assert_allclose(G, gravity(model, q), atol=1e-12)
    np.testing.assert_allclose(H, crba(model, q), atol=1e-12)


def y_tree(branches_kept=("left", "right"), trunk_mass=2.0):
    """base -> trunk -> {left -> left_tip, right}: two branches sharing the trunk."""
    trunk = inertial(trunk_mass, "0 0 0.3") if trunk_mass else ""
    parts = [f'<robot name="y"><link name="base"/><link name="trunk">{trunk}</link>',
             joint("waist", "base", "trunk", "revolute", "0 0 1")]
    if "left" in branches_kept:
        parts += [f'<link name="left">{inertial(1.0, "0.2 0 0")}</link>',
                  f'<link name="left_tip">{inertial(0.5, "0 0.1 0")}</link>',
                  joint("left_shoulder", "trunk", "left", "revolute", "0 1 0", "0.1 0 0.5"),
                  joint("left_slide", "left", "left_tip", "prismatic", "1 0 0", "0.3 0 0")]
    if "right" in branches_kept:
        parts += [f'<link name="right">{inertial(1.0, "-0.2 0 0")}</link>',
                  joint("right_shoulder", "trunk", "right", "revolute", "1 1 0", "-0.1 0 0.5")]
    return load_urdf("".join(parts) + "</robot>")


def test_branch_decomposition_paths():
    model = y_tree()
    named = [[model.joint_names[j] for j in path] for path in branches(model)]
    assert named == [["waist", "left_shoulder", "left_slide"], ["waist", "right_shoulder"]]


def test_shared_joint_torque_is_the_sum_over_branches():
    """Seed section 2, with each branch as a robot of its own: tau_waist of the tree equals
    tau_waist of the left chain (which owns the trunk) plus tau_waist of the right chain with
    the trunk as a massless virtual body; unshared joints keep their own torques."""
    tree = y_tree()
    left = y_tree(branches_kept=("left",))
    right = y_tree(branches_kept=("right",), trunk_mass=0.0)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, tree.nq))

    def sub(model, x):      # the tree's state restricted to a branch, by joint name
        return [x[tree.joint_names.index(name)] for name in model.joint_names]

    tau = dict(zip(tree.joint_names, closed_form_rnea(tree, q, qd, qdd)))
    tau_left = dict(zip(left.joint_names, rnea(left, *(sub(left, x) for x in (q, qd, qdd)))))
    tau_right = dict(zip(right.joint_names, rnea(right, *(sub(right, x) for x in (q, qd, qdd)))))
    assert tau["waist"] == pytest.approx(tau_left["waist"] + tau_right["waist"], rel=1e-12)
    for name in ("left_shoulder", "left_slide"):
        assert tau[name] == pytest.approx(tau_left[name], rel=1e-12)
    assert tau["right_shoulder"] == pytest.approx(tau_right["right_shoulder"], rel=1e-12)
    # bodies of one branch never couple joints of another: H is zero across branches
    H = closed_form_terms(tree, q, qd)[0]
    i, j = tree.joint_names.index("left_slide"), tree.joint_names.index("right_shoulder")
    assert H[i, j] == 0.0 and H[j, i] == 0.0


def test_closed_form_checks_its_arguments():
    from rbd_control.dynamics import InputError
    model = y_tree()
    with pytest.raises(InputError, match=r"^qd\b"):
        closed_form_rnea(model, np.zeros(4), np.zeros(3), np.zeros(4))
    with pytest.raises(InputError, match=r"^qdd\b"):
        closed_form_rnea(model, np.zeros(4), np.zeros(4), [0, 0, np.nan, 0])
