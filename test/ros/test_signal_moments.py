"""A signal at any moment from exec to exit, and a parent's death, end our executables
cleanly (ros/lifetime.py, ros/run.py):

- SIGINT or SIGTERM at 0.2 .. 1.5 s after exec (imports, rclpy.init, the node's
  construction, the first spins) ends rbd_controller and rbd_mujoco_sim with status 0 and
  no traceback. Before: a KeyboardInterrupt traceback inside the imports (status -2), or
  "Failed to create publisher: rcl node's context is invalid", "no attribute '_sigint_gc'".
- The same while the dynamics kernels compile on a cold cache (a first start).
- A parent that dies (SIGKILL, or SIGTERM as ros2 launch does, upstream ros2/launch#666) leaves
  no node of ours alive 2 s later: each asks the kernel for a SIGINT when its parent dies.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

pytestmark = pytest.mark.wall_clock    # the moment of the signal is the point

ros_fixtures = load('ros/conftest.py', 'rbd_test_ros_fixtures')
REPO, node_environment = ros_fixtures.REPO, ros_fixtures.node_environment
URDF = (REPO / 'rbd_control' / 'description' / 'rbd_arm.urdf').read_text()
MODULES = {'rbd_controller': 'rbd_control.cli.controller',
           'rbd_mujoco_sim': 'rbd_control.cli.simulator'}
# from 0.2 s: before, Python's own start (site and the venv's .pth files, 0.04-0.1 s here)
# runs no code of ours, so nothing can take the signal over yet
MOMENTS_S = (0.2, 0.3, 0.6, 1.0, 1.5)
CASES = [(program, moment, signame)
         for program in MODULES for moment in MOMENTS_S
         for signame in (('SIGINT', 'SIGTERM') if moment in (0.3, 0.6) else
                         ('SIGTERM',) if MOMENTS_S.index(moment) % 2 else ('SIGINT',))]


def command(program, workdir):
    """What the console script's entry point runs, with the default arm."""
    params = workdir / 'params.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'robot_description': URDF}}}))
    return [sys.executable, '-c',
            f'import sys; from {MODULES[program]} import main; sys.exit(main())',
            '--ros-args', '--params-file', str(params)]


def signal_it(program, tmp_path, signame, wait_for_moment, environment=None, wait_s=15):
    """Start `program`, call wait_for_moment(process, log_path), send the signal, and check
    the end: status 0, no traceback."""
    log_path = tmp_path / 'output.log'
    with open(log_path, 'w') as log:
        process = subprocess.Popen(command(program, tmp_path),
                                   env={**node_environment(), **(environment or {})},
                                   cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        wait_for_moment(process, log_path)
        process.send_signal(getattr(signal, signame))
        status = process.wait(wait_s)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = log_path.read_text()
    assert status == 0, f'status {status}:\n{output}'
    for text in ('Traceback', 'KeyboardInterrupt', 'Error'):
        assert text not in output, output


@pytest.mark.parametrize('program, moment, signame', CASES,
                         ids=lambda value: str(value))
def test_a_signal_at_any_moment_ends_with_status_0_and_no_traceback(
        program, moment, signame, tmp_path):
    signal_it(program, tmp_path, signame, lambda process, log_path: time.sleep(moment))


def test_a_signal_while_the_kernels_compile_on_a_cold_cache_ends_with_status_0(tmp_path):
    """A first start compiles the dynamics kernels (numba, ~30 s): a Ctrl-C then waits for the
    kernel being compiled (13 s here) and ends as at any other moment, status 0, no
    traceback."""
    def into_the_compilation(process, log_path):
        deadline = time.monotonic() + 30
        while 'compiling the dynamics kernels' not in log_path.read_text():
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        time.sleep(3.0)   # the announcement comes before the compilation

    signal_it('rbd_controller', tmp_path, 'SIGINT', into_the_compilation,
              {'NUMBA_CACHE_DIR': str(tmp_path / 'kernels')}, wait_s=90)


# the parent: starts the node from its main thread, says its pid, then waits to be killed
PARENT = """import subprocess, sys, time
child = subprocess.Popen(sys.argv[1:])
print(child.pid, flush=True)
time.sleep(600)
"""


def alive(pid):
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


@pytest.mark.parametrize('program, signame', [('rbd_controller', 'SIGKILL'),
                                              ('rbd_mujoco_sim', 'SIGTERM')])
def test_a_node_ends_when_its_parent_dies(program, signame, tmp_path):
    log_path = tmp_path / 'output.log'
    with open(log_path, 'w') as log:
        parent = subprocess.Popen([sys.executable, '-c', PARENT, *command(program, tmp_path)],
                                  env=node_environment(), cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=log, text=True, start_new_session=True)
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 60
        while 'model' not in log_path.read_text():         # running: it has its model
            assert alive(child) and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        parent.send_signal(getattr(signal, signame))
        parent.wait(5)
        time.sleep(2.0)
        assert not alive(child), f'{program} outlived its parent:\n{log_path.read_text()}'
        assert 'Traceback' not in log_path.read_text()
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
        parent.stdout.close()
