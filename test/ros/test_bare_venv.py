"""rbd_bringup from a bare activated venv (`source .venv/bin/activate`, no scripts/ros_env.sh):
the installed copy finds its own share files and rclpy loads, or it says in one line what to
source. Run as a reader's new shell would: a clean environment, the venv's bin/ first on PATH,
no LD_LIBRARY_PATH, no AMENT_PREFIX_PATH, from outside the checkout (the installed copy)."""
import os
import subprocess
import sys
from pathlib import Path

VENV = Path(sys.prefix)


def bare_venv_run(code, tmp_path):
    """`python -c code` of the venv as `source .venv/bin/activate` leaves a clean shell."""
    env = {"HOME": os.environ.get("HOME", "/tmp"), "PATH": f"{VENV / 'bin'}:/usr/bin:/bin",
           "VIRTUAL_ENV": str(VENV)}
    return subprocess.run([str(VENV / "bin" / "python"), "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_bringup_finds_its_config_and_rclpy_without_ros_env(tmp_path):
    done = bare_venv_run(
        "import rclpy, rbd_control\n"
        "from rbd_control.bringup.arguments import parse_args\n"
        "from rbd_control.bringup.launcher import config_from_args\n"
        "config, model = config_from_args(parse_args([]))\n"   # what main() does first
        "rclpy.init(); rclpy.shutdown()\n"
        "print(rbd_control.__file__); print(config.config_file)\n", tmp_path)
    assert done.returncode == 0, done.stderr
    module, config_file = done.stdout.split()
    assert module.startswith(str(VENV)), "the test ran the checkout, not the installed copy"
    assert Path(config_file) == VENV / "share" / "rbd_control" / "config" / "arm_controller.yaml"


def test_a_missing_share_file_is_one_line_naming_the_script_to_source(tmp_path):
    # rbd_bringup's main as installed, its config looked up under a name nothing installs
    done = bare_venv_run(
        "import sys\n"
        "from rbd_control.bringup import launcher, processes\n"
        "launcher.find_config_file = lambda: processes.find_config_file('config/absent.yaml')\n"
        "sys.exit(launcher.main([]))\n", tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("rbd_bringup: error: config/absent.yaml is not installed")
    assert "source scripts/ros_env.sh" in done.stderr


def test_rbd_bringup_console_script_answers_help(tmp_path):
    env = {"HOME": os.environ.get("HOME", "/tmp"), "PATH": f"{VENV / 'bin'}:/usr/bin:/bin"}
    done = subprocess.run(["rbd_bringup", "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: rbd_bringup")
