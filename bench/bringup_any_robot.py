"""rbd_bringup --description on example-robot-data's UR5, Panda and so101, no --config, in lock
step with the demo trajectory: prints each run's outcome lines (the hold, the goal, its result
and RMS tracking error, the final line), its exit status and wall time.

    python bench/bringup_any_robot.py [--realtime]

Not a test (test/sim/test_bringup_any_robot.py runs the three in lock step and asserts):
~15-30 s per robot. Inside the environment (scripts/ros_env.sh).
"""
import importlib.metadata
import subprocess
import sys
import time
from pathlib import Path

ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
}
OUTCOME = ("held the start pose", "goal accepted", "ended", "refused", "done:", "FAILED")


def main() -> int:
    root = Path(importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))
    loop = [] if "--realtime" in sys.argv else ["--lockstep"]
    failed = 0
    for name, relative in ROBOTS.items():
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "rbd_control.bringup.launcher", "--description",
             str(root / relative), *loop, "--demo-trajectory", "--duration", "60"],
            capture_output=True, text=True, timeout=180)
        print(f"{name}: exit {result.returncode} after {time.monotonic() - started:.1f} s")
        for line in result.stdout.splitlines() + result.stderr.splitlines():
            if any(word in line for word in OUTCOME):
                print(f"    {line}")
        failed += result.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
