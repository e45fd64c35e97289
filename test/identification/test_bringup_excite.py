"""rbd_bringup --excite on a simulated arm that is not its URDF (--plant-description: the
perturbed default arm of rbd_control/demo/plant.py), then rbd_identify on what it recorded."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import yaml

from rbd_control.demo.plant import TRUE_FRICTION, perturbed_urdf
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from rbd_control.identification.cli import main as identify
from rbd_control.identification.recording import read_recording

HEAVY_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow")


def test_bringup_excite_records_a_run_rbd_identify_reads(ros_env, tmp_path):
    record, plant = tmp_path / "excitation.npz", tmp_path / "plant.urdf"
    plant.write_text(perturbed_urdf(default_arm_urdf()))
    result = subprocess.run(
        [sys.executable, "-m", "rbd_control.bringup.launcher", "--lockstep", "--excite", "10",
         "--plant-description", str(plant), "--record", str(record), "--duration", "400",
         "--log-dir", str(tmp_path)],
        env=ros_env, capture_output=True, text=True, timeout=420)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "excitation sent" in output and f"recorded to {record}" in output, output
    simulator_log = (tmp_path / "simulator.log").read_text()
    assert "model from plant_description" in simulator_log, simulator_log
    assert "model from topic" not in simulator_log, simulator_log
    assert "from the robot_description topic" in (tmp_path / "controller.log").read_text()
    recording = read_recording(record)
    model = load_urdf(default_arm_urdf())
    assert set(model.joint_names) <= set(recording.joints)
    assert recording.t[-1] - recording.t[0] >= 13.0          # lead-in + 10 s + settling
    assert recording.qd is not None and np.abs(recording.tau).max() > 1.0
    assert np.ptp(recording.q, axis=0).min() > 0.2, "every joint must move"
    assert identify(["--recording", str(record), "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "identified.urdf").exists()
    # The simulated joints had friction, the URDF's have none: the fit finds it (MuJoCo's soft
    # frictionloss without stiff_friction gives less than f_c, so only the order of magnitude).
    values = yaml.safe_load((tmp_path / "out" / "friction.yaml").read_text())
    values = values["/**/rbd_controller"]["ros__parameters"]
    for joint in HEAVY_JOINTS:
        found = values[f"friction.{joint}.viscous"] + values[f"friction.{joint}.coulomb"]
        assert found > 0.5 * sum(TRUE_FRICTION[joint]), (joint, values)
