"""Random mutations of valid URDFs into load_urdf, the dynamics and the Controller (hypothesis).

Each example is a valid random tree (random_urdf_trees.trees) with one to three mutations of
the kinds a careless exporter or a hostile publisher produces: duplicate joint or link names,
deep nesting, extreme or non-finite numbers, swapped or missing limits, dubious inertias,
floating joints, zero axes. The outcome must always be a ModelError that names an element, or
a model (possibly with warnings) on which rnea, gravity and crba are finite and the Controller
either starts and commands finite in-limit torques, or refuses its configuration by name.
Never another exception.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.errors import ConfigError
from rbd_control.dynamics import InputError, ModelError, crba, forward_dynamics, gravity, rnea
from rbd_control.dynamics import load_urdf

from random_urdf_trees import PROPERTY_SETTINGS, to_urdf, trees

EXTREMES = ["nan", "inf", "-inf", "1e308", "-1e308", "1e12", "0", "-0.0", "-1", "1e-300",
            "5e-324", "abc", ""]
# (element path below <robot>, attribute) of every number a mutation may replace
NUMBERS = [("link/inertial/mass", "value"), ("link/inertial/inertia", "ixx"),
           ("link/inertial/inertia", "iyz"), ("link/inertial/inertia", "izz"),
           ("link/inertial/origin", "xyz"), ("joint/origin", "xyz"), ("joint/origin", "rpy"),
           ("joint/axis", "xyz"), ("joint/limit", "lower"), ("joint/limit", "upper"),
           ("joint/limit", "effort"), ("joint/limit", "velocity")]


def duplicate_name(robot, draw):
    tag = draw(st.sampled_from(["joint", "link"]))
    elements = robot.findall(tag)
    if len(elements) >= 2:
        a, b = draw(st.permutations(elements))[:2]
        b.set("name", a.get("name"))


def extreme_number(robot, draw):
    path, attribute = draw(st.sampled_from(NUMBERS))
    elements = robot.findall(path)
    if elements:
        element = draw(st.sampled_from(elements))
        value = draw(st.sampled_from(EXTREMES))
        if attribute in ("xyz", "rpy"):
            value = " ".join([value, "0", "0"])
        element.set(attribute, value)


def swapped_or_missing_limits(robot, draw):
    limits = robot.findall("joint/limit")
    if limits:
        limit = draw(st.sampled_from(limits))
        if draw(st.booleans()):
            limit.set("lower", "2.0")
            limit.set("upper", "-2.0")
        else:
            for joint in robot.findall("joint"):
                if joint.find("limit") is limit:
                    joint.remove(limit)


def dubious_inertia(robot, draw):
    inertias = robot.findall("link/inertial/inertia")
    if inertias:
        inertia = draw(st.sampled_from(inertias))
        ixx, iyy, izz = draw(st.sampled_from([
            ("1e-3", "1e-3", "1e-2"),      # triangle inequality broken (pr2's sensor mount)
            ("-1e-5", "1e-3", "1e-3"),     # slightly negative principal moment
            ("-1", "1e-3", "1e-3"),        # no body's inertia
            ("0", "0", "0"),               # point mass
            ("-2e-22", "8e-23", "3e-6"),   # hyq's foot
        ]))
        for name, value in (("ixx", ixx), ("iyy", iyy), ("izz", izz)):
            inertia.set(name, value)
        for name in ("ixy", "ixz", "iyz"):
            inertia.set(name, "0")


def massless_link(robot, draw):
    links = [link for link in robot.findall("link") if link.find("inertial") is not None]
    if links:
        link = draw(st.sampled_from(links))
        link.remove(link.find("inertial"))


def joint_type(robot, draw):
    joints = robot.findall("joint")
    if joints:
        draw(st.sampled_from(joints)).set("type", draw(st.sampled_from(
            ["floating", "planar", "fixed", "continuous", "prismatic", "spherical", ""])))


MUTATIONS = [duplicate_name, extreme_number, swapped_or_missing_limits, dubious_inertia,
             massless_link, joint_type]


@st.composite
def mutated_urdfs(draw):
    robot = ET.fromstring(to_urdf(draw(trees(max_moving=6, max_fixed=2))))
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        mutation(robot, draw)
    text = ET.tostring(robot, encoding="unicode")
    depth = draw(st.sampled_from([0, 0, 3000]))
    if depth:   # deep nesting inside the first link, beyond Python's recursion limit
        text = text.replace("</link>", "<x>" * depth + "</x>" * depth + "</link>", 1)
    return text


def names_an_element(message):
    return re.search(r"'[^']*'|<\w+|gravity|DOCTYPE|XML|robot", message) is not None


@PROPERTY_SETTINGS
@given(urdf=mutated_urdfs(), seed=st.integers(0, 2**32 - 1))
def test_a_mutated_urdf_is_refused_by_name_or_gives_a_working_model(urdf, seed):
    try:
        model = load_urdf(urdf)
    except ModelError as error:
        assert names_an_element(str(error)), str(error)
        return
    assert isinstance(model.warnings, tuple)
    assert all(isinstance(w, str) and "'" in w for w in model.warnings), model.warnings
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.nq)
    qd, qdd = rng.normal(size=model.nq), rng.normal(size=model.nq)
    for value in (rnea(model, q, qd, qdd), gravity(model, q), crba(model, q)):
        assert np.all(np.isfinite(value))
    try:
        assert np.all(np.isfinite(forward_dynamics(model, q, qd, qdd)))
    except InputError as error:      # a singular H: named, never NaN
        assert "singular" in str(error) and "'" in str(error), str(error)
    check_controller(model, q, qd)


def check_controller(model, q, qd):
    """Default config; where that is refused by name (a joint without a usable effort limit),
    again with an explicit effort_limit, so that every loadable model reaches update()."""
    limit = model.effort_limit
    try:
        controller = Controller(model, ControllerConfig(mode="gravity_compensation"))
    except ConfigError as error:
        assert "'" in str(error), str(error)
        limit = np.full(model.nq, 100.0)
        controller = Controller(model, ControllerConfig(mode="gravity_compensation",
                                                        effort_limit=100.0))
    command = controller.update(0.0, model.joint_names, q, qd)
    assert np.all(np.isfinite(command.tau))
    assert np.all(np.abs(command.tau) <= limit)
