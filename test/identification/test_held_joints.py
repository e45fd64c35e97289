"""rbd_identify on a recording that lacks some of the URDF's joints: held (welded) at --fixed's
value, a bag's other source's value or the URDF zero, said once; on a real Franka Panda log
(../shared/data, skipped where absent) with example-robot-data's panda.urdf, which has a hand
and two fingers the log lacks."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

from rbd_control.dynamics import InputError, load_urdf, rnea
from rbd_control.identification.cli import main
from rbd_control.identification.held_joints import (held_positions, parse_fixed,
                                                    weld_joints)
from rbd_control.identification.recording import read_recording

if str(pathlib.Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

shared = load("shared_data.py", "rbd_test_ident_shared_data")
PANDA_XML = shared.panda_urdf().read_text()
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")


@pytest.mark.parametrize("held", [{"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.01},
                                  {"panda_joint7": 0.7, "panda_finger_joint1": 0.0,
                                   "panda_finger_joint2": 0.0}])
def test_a_welded_joint_moves_the_links_beyond_it_as_the_joint_did(held):
    """The welded model's inverse dynamics equal the full model's with the held joints at
    their values and at rest: a prismatic joint's offset and a revolute joint's turn."""
    full = load_urdf(PANDA_XML)
    welded = load_urdf(weld_joints(PANDA_XML, held))
    assert welded.joint_names == tuple(j for j in full.joint_names if j not in held)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = (rng.uniform(-1, 1, welded.nq) for _ in range(3))
        state = [np.zeros(full.nq) for _ in range(3)]
        for x, values in zip(state, (q, qd, qdd)):
            x[[full.joint_names.index(j) for j in welded.joint_names]] = values
        for joint, value in held.items():
            state[0][full.joint_names.index(joint)] = value
        expected = rnea(full, *state)[[full.joint_names.index(j) for j in welded.joint_names]]
        np.testing.assert_allclose(rnea(welded, q, qd, qdd), expected, rtol=1e-10, atol=1e-10)


def test_held_values_come_from_fixed_then_the_recording_then_zero():
    model = load_urdf(PANDA_XML)
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    assert held_positions(model, arm) == {j: 0.0 for j in FINGERS}
    assert held_positions(model, arm, {"panda_finger_joint2": 0.01},
                          {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03}) == {
        "panda_finger_joint1": 0.02, "panda_finger_joint2": 0.01}
    with pytest.raises(InputError, match="'nope'.*not moving joints"):
        held_positions(model, arm, {"nope": 1.0})
    with pytest.raises(InputError, match="panda_joint3.*which the recording has"):
        held_positions(model, arm, {"panda_joint3": 1.0})


@pytest.mark.parametrize("entry", ["panda_finger_joint1", "=1", "a=nan", "a=x", "a=inf"])
def test_a_bad_fixed_entry_is_refused_naming_it(entry):
    with pytest.raises(InputError, match="--fixed"):
        parse_fixed([entry])
    assert parse_fixed(["a=0.5", " b = -1e-2"]) == {"a": 0.5, "b": -0.01}


def test_the_command_refuses_a_fixed_joint_the_robot_lacks(tmp_path, capsys):
    q = np.linspace(0, 1, 200)[:, None] * np.ones(7)
    np.savez(tmp_path / "r.npz", joints=np.array([f"panda_joint{i}" for i in range(1, 8)]),
             t=np.linspace(0, 1, 200), q=q, tau=q)
    argv = ["--recording", str(tmp_path / "r.npz"), "--urdf", str(shared.panda_urdf()),
            "--output", str(tmp_path / "out")]
    assert main(argv + ["--fixed", "gripper=0.1"]) == 2
    assert "--fixed names ['gripper']" in capsys.readouterr().err
    assert main(argv + ["--fixed", "panda_finger_joint1"]) == 2
    assert "is not NAME=VALUE" in capsys.readouterr().err


def write_two_source_bag(path, t, q, tau, arm, finger_position):
    """An arm's JointState at the log's stamps and a gripper's at ~30 Hz (positions and
    efforts of its two fingers), on one /joint_states topic, as a Panda's bringup records."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header, Time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]

    def message(ns, names, position, effort):
        return JointState(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9),
                                        frame_id=""), name=list(names),
                          position=np.asarray(position, float), velocity=np.zeros(0),
                          effort=np.asarray(effort, float))
    with Writer(path, version=8) as writer:
        topic = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        gripper_due = 0.0
        for k in range(len(t)):
            ns = int(round((t[k] + 1.0) * 1e9))
            writer.write(topic, ns, store.serialize_cdr(message(ns, arm, q[k], tau[k]),
                                                        JointState.__msgtype__))
            if t[k] >= gripper_due:
                gripper_due += 1 / 30
                msg = message(ns + 1, FINGERS, [finger_position] * 2, [0.0, 0.0])
                writer.write(topic, ns + 1, store.serialize_cdr(msg, JointState.__msgtype__))


def test_a_real_panda_log_in_a_bag_with_a_gripper_source(tmp_path, capsys):
    """12.5 s of a real Panda (7 joints) as a bag with a second, gripper source: rbd_identify
    fits the arm with example-robot-data's panda.urdf, holding finger 1 at its recorded value
    and finger 2 at --fixed's, says so once, and predicts the held-back torques of the big
    joints within a few per cent."""
    log, why = shared.panda_log()
    if log is None:
        pytest.skip(why)
    data = np.load(log)
    arm = [str(j) for j in data["joints"]]
    write_two_source_bag(tmp_path / "bag", data["t"], data["q"], data["tau"], arm, 0.035)
    read = read_recording(tmp_path / "bag")
    assert read.joints == tuple(arm) and len(read.t) == len(data["t"])
    assert read.other_positions == {j: pytest.approx(0.035) for j in FINGERS}
    out = tmp_path / "out"
    assert main(["--recording", str(tmp_path / "bag"), "--urdf", str(shared.panda_urdf()),
                 "--fixed", "panda_finger_joint2=0.01", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    line = ("joints not in the recording, held (welded) at: panda_finger_joint1 = 0.035 "
            "(their recorded median), panda_finger_joint2 = 0.01 (--fixed)")
    assert printed.count(line) == 1
    identified = load_urdf((out / "identified.urdf").read_text())
    assert identified.joint_names == tuple(arm)
    rows = {r.split()[0]: r.split() for r in printed.splitlines() if r.startswith("panda_joint")}
    for joint in ("panda_joint2", "panda_joint4"):      # the two that carry the arm's weight
        assert float(rows[joint][2].rstrip("%")) < 3.0, rows[joint]
