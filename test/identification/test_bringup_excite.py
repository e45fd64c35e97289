"""rbd_bringup --excite on the simulated default arm, then rbd_identify on what it recorded."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from rbd_control.identification.cli import main as identify
from rbd_control.identification.recording import read_recording


def test_bringup_excite_records_a_run_rbd_identify_reads(ros_env, tmp_path):
    record = tmp_path / "excitation.npz"
    result = subprocess.run(
        [sys.executable, "-m", "rbd_control.bringup", "--lockstep", "--excite", "10",
         "--record", str(record), "--duration", "400", "--log-dir", str(tmp_path)],
        env=ros_env, capture_output=True, text=True, timeout=420)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "excitation sent" in output and f"recorded to {record}" in output, output
    recording = read_recording(record)
    model = load_urdf(default_arm_urdf())
    assert set(model.joint_names) <= set(recording.joints)
    assert recording.t[-1] - recording.t[0] >= 13.0          # lead-in + 10 s + settling
    assert recording.qd is not None and np.abs(recording.tau).max() > 1.0
    assert np.ptp(recording.q, axis=0).min() > 0.2, "every joint must move"
    assert identify(["--recording", str(record), "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "identified.urdf").exists()
