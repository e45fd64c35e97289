"""Every bad input gets the package's own exception, and its message names the culprit.

Robot descriptions are built from one small valid arm (base -> shoulder -> upper_arm) with a
single defect each, so the element the message must name is known and distinctive.
"""
from __future__ import annotations

import errno
import os
import re
import threading
import time

import numpy as np
import pytest

from rbd_control.dynamics import (InputError, ModelError, RbdError, bias, coriolis_matrix, crba,
                                  crba_batch, forward_dynamics, frame_jacobian, frame_pose,
                                  gravity, gravity_batch, joint_forces, load_urdf, load_urdf_file,
                                  momentum_observer_step, momentum_terms,
                                  operational_space_inertia, rnea, rnea_batch)
from rbd_control.dynamics.closed_form import closed_form_rnea

INERTIAL = ('<inertial><mass value="1"/>'
            '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>')


def arm(upper_arm_inertial=INERTIAL, axis="0 0 1", joint_type="revolute", extra=""):
    """A one-joint arm; `extra` is spliced in before </robot>."""
    return (f'<robot name="arm"><link name="base"/>'
            f'<link name="upper_arm">{upper_arm_inertial}</link>'
            f'<joint name="shoulder" type="{joint_type}"><parent link="base"/>'
            f'<child link="upper_arm"/><axis xyz="{axis}"/>'
            f'<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>{extra}</robot>')


def test_the_template_itself_is_valid():
    assert load_urdf(arm()).joint_names == ("shoulder",)


def assert_model_error(xml, *culprits):
    with pytest.raises(ModelError) as raised:
        load_urdf(xml)
    for culprit in culprits:
        assert culprit in str(raised.value), f"{culprit!r} not named in: {raised.value}"
    return raised.value


def test_malformed_xml_names_the_position():
    assert_model_error("<robot name='arm'><link name='base'></robot>", "not well-formed",
                       "line 1, column")


def test_no_links():
    assert_model_error('<robot name="empty"></robot>', "no <link>")


def test_several_roots_are_named():
    assert_model_error(arm(extra='<link name="lonely_link"/>'), "'base'", "'lonely_link'")


def test_a_cycle_beside_the_tree_is_named():
    cycle = ('<link name="ring_a"/><link name="ring_b"/>'
             '<joint name="a_to_b" type="fixed">'
             '<parent link="ring_a"/><child link="ring_b"/></joint>'
             '<joint name="b_to_a" type="fixed">'
             '<parent link="ring_b"/><child link="ring_a"/></joint>')
    assert_model_error(arm(extra=cycle), "cycle", "'ring_a'", "'ring_b'")


def test_a_cycle_through_every_link_is_named():
    cycle = ('<robot name="ring"><link name="ring_a"/><link name="ring_b"/>'
             '<joint name="a_to_b" type="fixed">'
             '<parent link="ring_a"/><child link="ring_b"/></joint>'
             '<joint name="b_to_a" type="fixed">'
             '<parent link="ring_b"/><child link="ring_a"/></joint>'
             '</robot>')
    error = assert_model_error(cycle, "cycle")
    assert "ring_a" in str(error) or "a_to_b" in str(error), str(error)


def assert_warns(xml, *culprits):
    """Loads, with one warning naming every culprit; strict=True refuses with the same words."""
    model = load_urdf(xml)
    matching = [w for w in model.warnings if all(c in w for c in culprits)]
    assert matching, f"no warning names {culprits}: {model.warnings}"
    assert_model_error_strict(xml, *culprits)
    return model


def assert_model_error_strict(xml, *culprits):
    with pytest.raises(ModelError) as raised:
        load_urdf(xml, strict=True)
    for culprit in culprits + ("strict",):
        assert culprit in str(raised.value), f"{culprit!r} not named in: {raised.value}"


def test_a_valid_arm_has_no_warnings():
    assert load_urdf(arm()).warnings == ()
    assert load_urdf(arm(), strict=True).warnings == ()


def test_a_moving_link_whose_subtree_has_no_mass_warns_and_forward_dynamics_names_it():
    model = assert_warns(arm(upper_arm_inertial=""), "'shoulder'", "'upper_arm'", "no mass")
    assert gravity(model, [0.3]) == pytest.approx([0.0])
    with pytest.raises(InputError, match="singular.*'shoulder'"):
        forward_dynamics(model, [0.3], [0.0], [1.0])


def test_negative_mass():
    assert_model_error(arm(INERTIAL.replace('value="1"', 'value="-1"')), "'upper_arm'", "mass")


def test_an_inertia_no_body_can_have_is_refused():
    # principal moments (-0.1, 0.1, 0.1): clearly negative, not a rounding or CAD error
    assert_model_error(arm(INERTIAL.replace('ixx="0.1"', 'ixx="-0.1"')), "'upper_arm'",
                       "positive semi-definite")


def test_a_slightly_negative_principal_moment_warns():
    assert_warns(arm(INERTIAL.replace('ixx="0.1"', 'ixx="-0.001"')), "'upper_arm'",
                 "slightly negative")


def test_rounding_noise_on_a_rod_is_not_a_warning():
    # a thin rod along x whose zero moment came out as -2e-22 (hyq's feet)
    rod = INERTIAL.replace('ixx="0.1"', 'ixx="-2e-22"')
    assert load_urdf(arm(rod)).warnings == ()


POINT_MASS = ('<inertial><origin xyz="{xyz}"/><mass value="2"/>'
              '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>')


def test_a_point_mass_off_the_axis_is_a_valid_link():
    model = load_urdf(arm(POINT_MASS.format(xyz="0.5 0 0")))
    # a 2 kg point mass at 0.5 m from the z axis: H = m r^2
    assert crba(model, [0.3])[0, 0] == pytest.approx(2 * 0.5 ** 2)
    assert model.warnings == ()


def test_a_point_mass_on_its_own_axis_makes_H_singular_and_names_the_joint():
    model = assert_warns(arm(POINT_MASS.format(xyz="0 0 0.5")), "'shoulder'", "singular")
    with pytest.raises(InputError, match="'shoulder'"):
        forward_dynamics(model, [0.3], [0.0], [1.0])


def test_inertia_breaking_the_triangle_inequality_warns_and_is_used_as_written():
    model = assert_warns(arm(INERTIAL.replace('izz="0.1"', 'izz="0.5"')), "'upper_arm'",
                         "triangle inequality")
    assert crba(model, [0.0])[0, 0] == pytest.approx(0.5)


def test_zero_axis():
    assert_model_error(arm(axis="0 0 0"), "'shoulder'", "axis")


@pytest.mark.parametrize("joint_type", ["floating", "planar"])
def test_floating_and_planar_joints_inside_the_tree_are_refused_by_name(joint_type):
    inner = (f'<link name="hand">{INERTIAL}</link><joint name="wrist" type="{joint_type}">'
             '<parent link="upper_arm"/><child link="hand"/></joint>')
    assert_model_error(arm(extra=inner), "'wrist'", joint_type)


@pytest.mark.parametrize("joint_type", ["floating", "planar"])
def test_a_floating_or_planar_base_joint_is_welded_with_a_warning(joint_type):
    mobile = arm().replace('<link name="base"/>', (
        f'<link name="world"/><link name="base">{INERTIAL}</link>'
        f'<joint name="base_free" type="{joint_type}"><parent link="world"/>'
        '<child link="base"/></joint>'))
    model = assert_warns(mobile, "'base_free'", joint_type, "treated as fixed")
    assert model.joint_names == ("shoulder",)
    assert model.link_body["base"] == -1


def test_a_robot_whose_only_joint_is_a_floating_base_has_no_moving_joint():
    assert_model_error(arm(joint_type="floating"), "no moving joint")


def test_duplicate_joint_names_are_refused():
    twin = (f'<link name="forearm">{INERTIAL}</link><joint name="shoulder" type="revolute">'
            '<parent link="upper_arm"/><child link="forearm"/><axis xyz="0 1 0"/>'
            '<limit lower="-1" upper="1" effort="100" velocity="1"/></joint>')
    assert_model_error(arm(extra=twin), "'shoulder'", "twice")


def test_duplicate_link_names_are_refused():
    assert_model_error(arm(extra=f'<link name="upper_arm">{INERTIAL}</link>'), "'upper_arm'",
                       "twice")


LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="1"/>'


@pytest.mark.parametrize("attribute", ["lower", "upper", "effort", "velocity"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_limits_are_refused(attribute, value):
    limit = re.sub(rf'{attribute}="[^"]*"', f'{attribute}="{value}"', LIMIT)
    assert_model_error(arm().replace(LIMIT, limit), "'shoulder'", attribute)


@pytest.mark.parametrize("old, new, culprit", [
    ('<axis', '<origin xyz="1e300 0 0"/><axis', "'shoulder' <origin xyz>"),
    ('<axis', '<origin rpy="0 nan 0"/><axis', "'shoulder' <origin rpy>"),
    ('<axis xyz="0 0 1"/>', '<axis xyz="0 0 inf"/>', "'shoulder' <axis xyz>"),
    ('<mass value="1"/>', '<mass value="1e308"/>', "'upper_arm' <mass>"),
    ('ixx="0.1"', 'ixx="nan"', "'upper_arm' <inertia ixx>"),
    ('<axis', '<dynamics damping="nan"/><axis', "'shoulder' <damping>"),
    ('<axis', '<dynamics friction="1e300"/><axis', "'shoulder' <friction>"),
])
def test_non_finite_or_absurd_numbers_are_refused_by_name(old, new, culprit):
    assert_model_error(arm().replace(old, new), culprit)


def test_swapped_limits_warn_and_are_used_sorted():
    model = assert_warns(arm().replace('lower="-1" upper="1"', 'lower="1" upper="-1"'),
                         "'shoulder'", "lower limit")
    assert model.position_limits.tolist() == [[-1.0, 1.0]]


def test_equal_nonzero_limits_lock_the_joint_and_zero_zero_means_unlimited():
    locked = assert_warns(arm().replace('lower="-1" upper="1"', 'lower="0.5" upper="0.5"'),
                          "'shoulder'", "locked")
    assert locked.position_limits.tolist() == [[0.5, 0.5]]
    default = load_urdf(arm().replace('lower="-1" upper="1"', 'lower="0" upper="0"'))
    assert default.position_limits.tolist() == [[-np.inf, np.inf]] and not default.warnings


@pytest.mark.parametrize("value", ["0", "-5", "1e308"])
def test_zero_negative_or_absurd_effort_limit_warns_and_reads_as_not_given(value):
    model = assert_warns(arm().replace('effort="10"', f'effort="{value}"'), "'shoulder'",
                         "effort")
    assert model.effort_limit.tolist() == [np.inf]


def test_huge_position_limits_mean_unlimited_without_a_warning():
    model = load_urdf(arm().replace('lower="-1" upper="1"', 'lower="-1e16" upper="1e16"'))
    assert model.position_limits.tolist() == [[-np.inf, np.inf]] and not model.warnings


def test_a_revolute_joint_without_limit_warns():
    assert_warns(arm().replace(LIMIT, ""), "'shoulder'", "no <limit>")


def test_negative_damping_warns_and_reads_as_zero():
    model = assert_warns(arm().replace("<axis", '<dynamics damping="-1"/><axis'), "'shoulder'",
                         "damping")
    assert model.damping.tolist() == [0.0]


@pytest.mark.parametrize("g", [(0, 0, -1e300), (0, 0, 2e3), (0, np.nan, 0), (0, 0), "down"])
def test_absurd_gravity_is_refused(g):
    with pytest.raises(ModelError, match="gravity"):
        load_urdf(arm(), gravity=g)
    with pytest.raises(InputError, match="gravity"):
        load_urdf(arm()).with_gravity(g)


def test_a_link_that_is_the_child_of_two_joints():
    second = ('<joint name="second_mount" type="fixed"><parent link="base"/>'
              '<child link="upper_arm"/></joint>')
    assert_model_error(arm(extra=second), "'upper_arm'", "'shoulder'", "'second_mount'")


def test_unknown_parent_link_is_named():
    dangling = ('<link name="hand"/><joint name="wrist" type="fixed"><parent link="ghost"/>'
                '<child link="hand"/></joint>')
    assert_model_error(arm(extra=dangling), "'wrist'", "'ghost'")


def test_missing_file_is_a_model_error_naming_the_path(tmp_path):
    missing = tmp_path / "nowhere.urdf"
    with pytest.raises(ModelError, match="nowhere.urdf"):
        load_urdf_file(missing)


def test_errors_are_value_errors_and_rbd_errors():
    # a ROS node can catch everything in one place, older callers keep catching ValueError
    assert issubclass(ModelError, RbdError) and issubclass(InputError, RbdError)
    assert issubclass(RbdError, ValueError)


# --- network-borne robot_description: no entities, no expansion -------------------------------

def test_external_entity_is_refused_without_reading_the_file(tmp_path):
    """The entity points at a FIFO: any attempt to open it would block the reader (caught by the
    join timeout) or leave a reader attached (caught by the non-blocking writer open)."""
    fifo = tmp_path / "secret"
    os.mkfifo(fifo)
    xml = (f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{fifo}">]>'
           '<robot name="arm"><link name="&x;"/></robot>')
    outcome = {}

    def load():
        try:
            load_urdf(xml)
            outcome["error"] = None
        except Exception as error:  # noqa: BLE001 - the test inspects the type below
            outcome["error"] = error

    reader = threading.Thread(target=load, daemon=True)
    started = time.monotonic()
    reader.start()
    reader.join(timeout=5.0)
    if reader.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))   # release the blocked reader
        pytest.fail("load_urdf opened the external entity's file and blocked on it")
    assert time.monotonic() - started < 1.0
    with pytest.raises(OSError) as no_reader:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert no_reader.value.errno == errno.ENXIO, "someone still holds the file open"
    assert isinstance(outcome["error"], ModelError), outcome["error"]
    assert "DOCTYPE" in str(outcome["error"])


def test_entity_bomb_is_refused_quickly():
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol%d;" % (i - 1)) * 10}">' for i in range(1, 10)]
    xml = (f'<?xml version="1.0"?><!DOCTYPE bomb [{"".join(entities)}]>'
           '<robot name="&lol9;"><link name="a"/></robot>')   # 10^9 "lol"s if expanded
    started = time.monotonic()
    with pytest.raises(ModelError, match="DOCTYPE"):
        load_urdf(xml)
    assert time.monotonic() - started < 1.0


# --- state arguments ---------------------------------------------------------------------------

TWO_JOINTS = arm(extra=(
    f'<link name="forearm">{INERTIAL}</link><joint name="elbow" type="prismatic">'
    '<parent link="upper_arm"/><child link="forearm"/><axis xyz="1 0 0"/>'
    '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'))


@pytest.fixture(scope="module")
def model():
    return load_urdf(TWO_JOINTS)


# (function, names of its state arguments in order)
STATE_FUNCTIONS = [
    (rnea, ("q", "qd", "qdd")),
    (joint_forces, ("q", "qd", "qdd")),
    (closed_form_rnea, ("q", "qd", "qdd")),
    (forward_dynamics, ("q", "qd", "tau")),
    (bias, ("q", "qd")),
    (coriolis_matrix, ("q", "qd")),
    (momentum_terms, ("q", "qd")),
    (gravity, ("q",)),
    (crba, ("q",)),
]
# the api functions that try the compiled kernel before converting their arguments
STATE_CASES = [(function, position, name) for function, names in STATE_FUNCTIONS
               for position, name in enumerate(names)]
CASE_IDS = [f"{function.__name__}-{name}" for function, _, name in STATE_CASES]


def call_with(model, function, position, bad, as_list):
    n = len([names for f, names in STATE_FUNCTIONS if f is function][0])
    args = [np.full(model.nq, 0.1) for _ in range(n)]
    args[position] = bad
    if as_list:
        args = [list(np.asarray(a, dtype=float)) for a in args]
    return function(model, *args)


def names_argument(message, name):
    # the argument's name must lead the message, as a whole word (q is not qd)
    return re.match(rf"{name}\b", message) is not None


@pytest.mark.parametrize("as_list", [False, True], ids=["ndarray", "list"])
@pytest.mark.parametrize("function, position, name", STATE_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("length", [1, 3, 0])
def test_wrong_length_names_the_argument(model, function, position, name, as_list, length):
    with pytest.raises(InputError) as raised:
        call_with(model, function, position, np.zeros(length), as_list)
    assert names_argument(str(raised.value), name), str(raised.value)


@pytest.mark.parametrize("as_list", [False, True], ids=["ndarray", "list"])
@pytest.mark.parametrize("function, position, name", STATE_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_input_names_the_argument(model, function, position, name, as_list, value):
    bad = np.array([0.1, value])
    with pytest.raises(InputError) as raised:
        call_with(model, function, position, bad, as_list)
    assert names_argument(str(raised.value), name), str(raised.value)
    assert "NaN or inf" in str(raised.value)


# the functions that pass a float64 vector q straight to a kernel's compiled code, which checks
# no dtype or layout (spatial.entry_point): every other array must be converted first
Q_ONLY = {
    "gravity": gravity,
    "crba": crba,
    "frame_pose": lambda model, q: frame_pose(model, q, "forearm"),
    "frame_jacobian": lambda model, q: frame_jacobian(model, q, "forearm"),
    "operational_space_inertia": lambda model, q: operational_space_inertia(
        model, q, "forearm").Lambda,
}


@pytest.mark.parametrize("function", Q_ONLY.values(), ids=Q_ONLY.keys())
def test_other_array_types_give_the_float64_result(model, function):
    q = np.array([0.7, -0.4])
    strided = np.zeros(4)
    strided[::2] = q
    read_only = q.copy()
    read_only.flags.writeable = False
    expected = function(model, q)
    for same in (strided[::2], read_only, q.astype(">f8"), list(q)):
        np.testing.assert_array_equal(function(model, same), expected)
    # int64 has float64's item size: read as float64 bits it would give garbage, not this
    np.testing.assert_array_equal(function(model, np.array([1, -2])),
                                  function(model, np.array([1.0, -2.0])))
    with pytest.raises(InputError, match="q must have length"):
        function(model, np.zeros((2, 1)))


@pytest.mark.parametrize("batched, names", [
    (lambda m, X: rnea_batch(m, *X), ("q", "qd", "qdd")),
    (lambda m, X: gravity_batch(m, X[0]), ("q",)),
    (lambda m, X: crba_batch(m, X[0]), ("q",)),
], ids=["rnea_batch", "gravity_batch", "crba_batch"])
def test_batched_forms_name_the_bad_argument(model, batched, names):
    for position, name in enumerate(names):
        for defect in ("width", "nan"):
            X = [np.zeros((4, model.nq)) for _ in range(3)]
            if defect == "width":
                X[position] = np.zeros((4, model.nq + 1))
            else:
                X[position][2, 1] = np.nan
            with pytest.raises(InputError) as raised:
                batched(model, X)
            message = str(raised.value)
            # batch arguments are Q, QD, QDD in the signature; either case names them
            assert re.match(rf"{name}\b", message, re.IGNORECASE), message
            if defect == "nan":
                assert "state 2" in message, message


def test_external_force_on_an_unknown_link_is_named(model):
    zeros = np.zeros(model.nq)
    for function in (rnea, closed_form_rnea):
        with pytest.raises(InputError, match="'gripper_pad'"):
            function(model, zeros, zeros, zeros, {"gripper_pad": np.zeros(6)})
    with pytest.raises(InputError, match="'gripper_pad'"):
        forward_dynamics(model, zeros, zeros, zeros, {"gripper_pad": np.zeros(6)})


@pytest.mark.parametrize("wrench", [np.zeros(5), [np.nan, 0, 0, 0, 0, 0], "six"])
def test_malformed_external_force_names_the_link(model, wrench):
    zeros = np.zeros(model.nq)
    with pytest.raises(InputError, match="'forearm'"):
        rnea(model, zeros, zeros, zeros, {"forearm": wrench})


def test_momentum_observer_step_names_a_bad_argument(model):
    n = model.nq
    good = [np.zeros(n), np.zeros(n), np.zeros(n)]
    s, r, terms = np.zeros(n), np.zeros(n), np.empty((3, n))
    for position, name in enumerate(("q", "qd", "tau")):
        bad = list(good)
        bad[position] = np.full(n, np.nan)
        with pytest.raises(InputError, match=name):
            momentum_observer_step(model, *bad, 10.0, 1e-3, s, r, terms)
    with pytest.raises(InputError, match="terms"):
        momentum_observer_step(model, *good, 10.0, 1e-3, s, r, np.empty((2, n)))
    with pytest.raises(InputError, match="terms"):
        momentum_observer_step(model, *good, 10.0, 1e-3, s.astype(np.float32), r, terms)
