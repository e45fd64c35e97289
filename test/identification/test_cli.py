"""rbd_identify end to end on a recording made here: 20 s of excitation on the perturbed MuJoCo
arm, saved as our .npz, as the demo's .npz layout and as a rosbag2 of JointState."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml

from ident_support import record_tracking
from rbd_control.control import JointTrajectory
from rbd_control.demo.plant import TRUE_FRICTION, perturbed_urdf
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from rbd_control.identification import excitation_trajectory
from rbd_control.identification.cli import main
from rbd_control.identification.recording import Recording, read_recording


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    nominal = load_urdf(default_arm_urdf())
    excitation = excitation_trajectory(nominal, 20.0, iterations=20)
    trajectory = JointTrajectory.from_arrays(nominal.joint_names, *excitation.waypoints())
    rec = record_tracking(perturbed_urdf(default_arm_urdf()), nominal, trajectory, 20.0,
                          q0=excitation.sample(0.0)[0][0])
    return Recording(nominal.joint_names, rec["t"], rec["q"], rec["tau"])


def write_bag(path, recording):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header, Time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    # the bag lists the joints in another order than the model: read by name
    order = list(reversed(range(len(recording.joints))))
    with Writer(path, version=8) as writer:
        connection = writer.add_connection("/joint_states", JointState.__msgtype__,
                                           typestore=store)
        for k in range(0, len(recording.t), 2):          # 500 Hz
            ns = int(round(recording.t[k] * 1e9))
            msg = JointState(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9),
                                           frame_id=""),
                             name=[recording.joints[i] for i in order],
                             position=recording.q[k, order], velocity=np.zeros(0),
                             effort=recording.tau[k, order])
            writer.write(connection, ns, store.serialize_cdr(msg, JointState.__msgtype__))


def check_outputs(out, capsys):
    printed = capsys.readouterr()
    assert "[" + "#" * 30 + "] 100 % done" in printed.err          # the progress bar
    identified = load_urdf((out / "identified.urdf").read_text())
    assert identified.joint_names == load_urdf(default_arm_urdf()).joint_names
    params = yaml.safe_load((out / "friction.yaml").read_text())["/**/rbd_controller"]
    values = params["ros__parameters"]
    for joint, (b, f_c) in TRUE_FRICTION.items():
        assert values[f"friction.{joint}.viscous"] == pytest.approx(b, rel=0.1)
        assert values[f"friction.{joint}.coulomb"] == pytest.approx(f_c, rel=0.1)
    report = (out / "report.txt").read_text()
    assert "base parameters" in report and "held-back" in report
    assert (out / "held_back_torques.png").read_bytes()[:4] == b"\x89PNG"
    return report


def test_cli_on_our_npz(tmp_path, recording, capsys):
    path = recording.save(tmp_path / "excitation.npz")
    assert main(["--recording", str(path), "--output", str(tmp_path / "out")]) == 0
    check_outputs(tmp_path / "out", capsys)


def test_cli_on_a_rosbag(tmp_path, recording, capsys):
    write_bag(tmp_path / "bag", recording)
    assert read_recording(tmp_path / "bag").joints == tuple(reversed(recording.joints))
    assert main(["--recording", str(tmp_path / "bag"), "--output", str(tmp_path / "out")]) == 0
    check_outputs(tmp_path / "out", capsys)


def test_demo_recording_layout_is_read(tmp_path, recording):
    half = len(recording.t) // 2
    np.savez(tmp_path / "recording.npz", joints=np.array(recording.joints),
             feedforward_pd_t=recording.t[half:], feedforward_pd_actual=recording.q[half:],
             feedforward_pd_effort=recording.tau[half:], feedforward_pd_desired=recording.q[half:],
             computed_torque_t=recording.t[:half], computed_torque_actual=recording.q[:half],
             computed_torque_effort=recording.tau[:half], latency_s=np.zeros(3))
    read = read_recording(tmp_path / "recording.npz")
    np.testing.assert_array_equal(read.t, recording.t)
    np.testing.assert_array_equal(read.tau, recording.tau)


def test_console_script_reports_bad_input(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, something=np.zeros(3))
    run = subprocess.run([sys.executable, "-m", "rbd_control.identification.cli", "--recording",
                          str(bad)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "no 'joints' array" in run.stderr
