"""The user-facing commands, run as a user runs them: rbd_bringup and the demo.

Both start real nodes (simulator, controller) as child processes from the shipped
config/arm_controller.yaml, so these tests also check that the config works in a loop.
"""
from __future__ import annotations

import re
import subprocess
import sys


def run(module, args, env, timeout):
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_bringup_closes_the_loop_and_sends_the_demo_trajectory(ros_env, tmp_path):
    result = run(
        "rbd_control.bringup.launcher",
        ["--lockstep", "--demo-trajectory", "--duration", "15", "--log-dir", str(tmp_path)],
        ros_env,
        timeout=60,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "demo trajectory sent" in output, output
    counts = re.findall(r"(\d+) joint states, (\d+) effort commands seen", output)
    assert counts, output
    states, commands = map(int, counts[-1])
    assert commands > 1000 and commands >= 0.9 * states, output
    controller_log = (tmp_path / "controller.log").read_text()
    assert "from the robot_description topic" in controller_log, controller_log
    assert "trajectory rejected" not in controller_log, controller_log


def test_demo_prints_the_summary_table_and_writes_the_plots(ros_env, tmp_path):
    result = run("rbd_control.demo", ["--output", str(tmp_path)], ros_env, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[demo]" in result.stderr, "no progress line"
    table = result.stdout
    for heading in ("gravity_compensation", "computed_torque", "feedforward_pd", "latency"):
        assert heading in table, table

    # gravity compensation: every joint's drift (rad) in the table is below 1e-3
    drift_rows = re.findall(r"^\s+(\w+)\s+([0-9.e+-]+)\s+[0-9.]+$",
                            table.split("identification:")[0], flags=re.M)
    assert len(drift_rows) == 6, table
    assert all(float(drift) < 1e-3 for _, drift in drift_rows), table

    # tracking: RMS over all joints, in mrad, for both modes
    all_joints = re.search(
        r"all joints\s+\|\s+([0-9.]+)\s+([0-9.]+)\s+\|\s+([0-9.]+)\s+([0-9.]+)", table)
    assert all_joints, table
    rms_computed_torque, rms_feedforward_pd = float(all_joints[1]), float(all_joints[3])
    assert rms_computed_torque < 2.0 and rms_feedforward_pd < 2.0, table
    assert "verdict: OK" in table, table

    # cartesian_impedance: pushed, yielded by F/K (the verdict checks 5 %), sprang back
    assert "cartesian_impedance: pushed tool0" in table, table
    # contact: tool0 into the box, detected, stopped (the verdict checks 200 ms)
    assert re.search(r"detected \d+ ms after the true \|tau_ext\| passed", table), table

    # identification before / after: the nominal model lets the arm fall, the identified one
    # holds it and tracks within 2x of the exact model and 20x better than the nominal one
    rows = {name: (drift, rms) for name, drift, rms in re.findall(
        r"^\s+(nominal|identified|exact)\s+(\S+)\s+([0-9.]+)$", table, flags=re.M)}
    assert set(rows) == {"nominal", "identified", "exact"}, table
    drift = {name: float(rows[name][0]) for name in ("nominal", "identified")}
    rms = {name: float(rows[name][1]) for name in rows}
    assert drift["nominal"] > 0.1 and drift["identified"] < 1e-3, table
    assert (rms["identified"] <= 2 * rms["exact"]
            and 20 * rms["identified"] <= rms["nominal"]), table
    assert "before / after: drift" in table, table
    for name in ("identified.urdf", "friction.yaml", "payload.yaml", "plant.urdf",
                 "excitation.npz", "payload_excitation.npz"):
        assert (tmp_path / "identification" / name).is_file(), name

    for name in ("tracking_positions", "tracking_error", "effort", "gravity_compensation",
                 "cartesian_impedance_push", "contact_detection", "identification_before_after"):
        png = tmp_path / f"{name}.png"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, f"{png} is not a real plot"
