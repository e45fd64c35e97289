"""Sizes that used to exhaust Python's recursion limit: long chains and deep XML nesting.

The loader walks the tree with an explicit stack and reads XML with a streaming expat pass, so
neither the chain length nor the nesting depth of ignored elements meets the recursion limit
(1000 frames by default).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from rbd_control.dynamics import ModelError, gravity, load_urdf, rnea

INERTIAL = ('<inertial><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')


def chain(n, fixed_every=0):
    """n links in a line, each on a revolute joint about y (every k-th joint fixed)."""
    parts = ['<robot name="chain"><link name="l0"/>']
    for k in range(1, n + 1):
        kind = "fixed" if fixed_every and k % fixed_every == 0 else "revolute"
        parts.append(f'<link name="l{k}">{INERTIAL}</link>'
                     f'<joint name="j{k}" type="{kind}"><parent link="l{k - 1}"/>'
                     f'<child link="l{k}"/><origin xyz="0 0 0.01"/><axis xyz="0 1 0"/>'
                     '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')
    parts.append("</robot>")
    return "".join(parts)


@pytest.mark.parametrize("n, fixed_every", [(5000, 0), (3000, 3)])
def test_a_long_chain_loads_and_its_dynamics_is_finite(n, fixed_every):
    assert n > sys.getrecursionlimit()
    model = load_urdf(chain(n, fixed_every))
    moving = n - (n // fixed_every if fixed_every else 0)
    assert model.nq == moving and model.warnings == ()
    assert list(model.parent[:3]) == [-1, 0, 1]
    q = np.full(model.nq, 0.1)
    tau = rnea(model, q, np.zeros(model.nq), np.zeros(model.nq))
    assert np.all(np.isfinite(tau))
    # the base joint holds the whole chain: sum of m g x over every link beyond it
    assert abs(tau[0]) > 0 and np.allclose(tau, gravity(model, q))


def test_the_last_link_of_a_long_chain_is_placed():
    model = load_urdf(chain(2000, fixed_every=2))
    assert model.link_body["l2000"] == model.nq - 1


DEPTH = 200_000   # 200x the default recursion limit


@pytest.mark.parametrize("where", ["link", "joint", "robot", "visual"])
def test_deep_nesting_of_ignored_elements_loads(where):
    nest = "<x>" * DEPTH + "</x>" * DEPTH
    arm = ('<robot name="arm"><link name="base"/>'
           f'<link name="upper_arm">{INERTIAL}{{link}}</link>'
           '<joint name="shoulder" type="revolute"><parent link="base"/>'
           '<child link="upper_arm"/><axis xyz="0 0 1"/>{joint}'
           '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>{robot}</robot>')
    slots = {"link": "", "joint": "", "robot": ""}
    if where == "visual":
        slots["link"] = f"<visual>{nest}</visual>"
    else:
        slots[where] = nest
    model = load_urdf(arm.format(**slots))
    assert model.joint_names == ("shoulder",) and model.warnings == ()


def test_deeply_nested_malformed_xml_is_a_model_error():
    with pytest.raises(ModelError, match="not well-formed"):
        load_urdf('<robot name="r">' + "<x>" * DEPTH + "</robot>")


def test_many_duplicate_joint_names_are_refused_naming_one():
    twin = chain(50).replace('name="j7"', 'name="j3"')
    with pytest.raises(ModelError, match="'j3' is defined twice"):
        load_urdf(twin)
