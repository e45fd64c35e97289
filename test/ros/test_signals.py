"""Every executable ends on SIGINT and SIGTERM within END_WITHIN_S, with exit status 0, no
traceback and no process left behind (the controller's description-prepass helper included):
whether the signal comes once or twice, to the process group (as a terminal's Ctrl-C does,
and then launch on top) or to the process alone (as launch and `kill` do).

Each case is its own process, started in a session of its own (start_new_session, so the
group signal reaches what the program started and nothing of pytest's), started in a few
waves by one module fixture, then signalled one after another while running: the controller with
its model and its prepass helper, the simulator stepping in real time, rbd_bringup with its
loop closed (sim and controller children), rbd_description_publisher. rbd_identify is a
command-line tool, not a node.
"""
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # test/: by_path
from by_path import load  # noqa: E402

pytestmark = pytest.mark.wall_clock   # setup.cfg: nothing else at normal priority beside them

# every test folder's conftest is a module named `conftest`: reach this one by its path
ros_fixtures = load('ros/conftest.py', 'rbd_test_ros_fixtures')
REPO, node_environment = ros_fixtures.REPO, ros_fixtures.node_environment

END_WITHIN_S = 2.0
START_TIMEOUT_S = 240.0     # all cases start at once on a shared 2-core machine
URDF = (REPO / 'rbd_control' / 'description' / 'rbd_arm.urdf').read_text()

# program -> (its console script's module, a log line that says it is running)
PROGRAMS = {
    'rbd_controller': ('rbd_control.cli.controller', r'controlling \d+ joints'),
    'rbd_mujoco_sim': ('rbd_control.cli.simulator', r'model from parameter'),
    'rbd_bringup': ('rbd_control.bringup.launcher', r'[1-9]\d* effort commands seen'),
    'rbd_description_publisher': ('rbd_control.ros.description_publisher',
                                  r'publishing /robot_description'),
}
# (program, signal, to the group or the process alone, how many times); each dimension is
# covered for each node; rbd_bringup (three processes a case) in the two launch cases.
# Started in waves, each wave at once: a wave of stepping simulators and closed loops is
# what a 2-core machine can run at full rate, and an overloaded machine would measure its
# own load rather than the shutdown.
WAVES = [
    [('rbd_bringup', 'SIGINT', 'group', 2), ('rbd_bringup', 'SIGTERM', 'process', 1)],
    [('rbd_mujoco_sim', signum, target, count) for signum, target, count in
     (('SIGINT', 'group', 2), ('SIGINT', 'process', 1), ('SIGTERM', 'process', 2),
      ('SIGTERM', 'group', 1))],
    [*[('rbd_controller', signum, target, count) for signum, target, count in
       (('SIGINT', 'group', 2), ('SIGINT', 'process', 1), ('SIGTERM', 'process', 2),
        ('SIGTERM', 'group', 1))],
     ('rbd_description_publisher', 'SIGINT', 'group', 2),
     ('rbd_description_publisher', 'SIGTERM', 'process', 1)],
]
CASES = [case for wave in WAVES for case in wave]


def case_id(case):
    return '-'.join(map(str, case))


def descendants(pid):
    """{pid: command line} of every live descendant of `pid` (new sessions included)."""
    found, todo = {}, [pid]
    while todo:
        for task in Path(f'/proc/{todo.pop()}/task').glob('*'):
            try:
                children = (task / 'children').read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found[child] = command_line(child)
                todo.append(child)
    return found


def command_line(pid):
    try:
        return Path(f'/proc/{pid}/cmdline').read_bytes()
    except OSError:
        return None


def still_running(pid, cmdline):
    """The same process (not a reused pid) and not a zombie."""
    if command_line(pid) != cmdline:
        return False
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


@dataclass
class Ending:
    returncode: object
    seconds: float
    log: str
    helpers: dict          # descendants while it ran
    left: list             # those still running after it ended


class Case:
    def __init__(self, case, workdir):
        self.case = case
        program, *_ = case
        module, ready = PROGRAMS[program]
        self.ready = re.compile(ready)
        params = workdir / 'params.yaml'
        args = []
        if program != 'rbd_bringup':
            parameters = {'robot_description': URDF}
            if program == 'rbd_mujoco_sim':
                parameters['wait_for_first_command'] = False   # stepping at full rate
            params.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}))
            args = ['--ros-args', '--params-file', str(params)]
        self.log_path = workdir / 'output.log'
        with open(self.log_path, 'w') as log:
            # what the console script's entry point does
            self.process = subprocess.Popen(
                [sys.executable, '-c', f'import sys; from {module} import main; sys.exit(main())',
                 *args], env=node_environment(), cwd=workdir, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)

    def log(self):
        return self.log_path.read_text()

    def is_ready(self):
        if self.process.poll() is not None:
            raise AssertionError(f'{case_id(self.case)} exited while starting:\n{self.log()}')
        if not self.ready.search(self.log()):
            return False
        # the controller's prepass helper has started (ControllerNode starts it at once)
        return self.case[0] != 'rbd_controller' or any(
            b'prepass' in (cmd or b'') for cmd in descendants(self.process.pid).values())

    def end(self):
        program, signame, target, count = self.case
        signum = getattr(signal, signame)
        helpers = descendants(self.process.pid)
        for _ in range(count):
            if target == 'group':
                os.killpg(self.process.pid, signum)
            else:
                self.process.send_signal(signum)
            time.sleep(0.05)
        sent = time.monotonic() - 0.05 * count
        try:
            self.process.wait(10 + END_WITHIN_S)
        except subprocess.TimeoutExpired:
            pass
        seconds = time.monotonic() - sent
        time.sleep(0.2)    # a helper's end follows its parent's (its pipe closes)
        left = [pid for pid, cmd in helpers.items() if still_running(pid, cmd)]
        return Ending(self.process.poll(), seconds, self.log(), helpers, left)

    def kill(self):
        for pid, cmd in descendants(self.process.pid).items():
            if still_running(pid, cmd):
                os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def run_wave(wave, tmp_path_factory):
    """Start the wave's cases at once, wait until all run, then signal them one by one."""
    cases = [Case(case, tmp_path_factory.mktemp(case_id(case))) for case in wave]
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        waiting = list(cases)
        while waiting:
            waiting = [c for c in waiting if not c.is_ready()]
            assert time.monotonic() < deadline, \
                f'not running after {START_TIMEOUT_S} s: {[case_id(c.case) for c in waiting]}'
            time.sleep(0.2)
        time.sleep(1.0)     # running for a moment, not just started
        return {c.case: c.end() for c in cases}
    finally:
        for c in cases:
            c.kill()


@pytest.fixture(scope='module')
def endings(tmp_path_factory):
    return {case: ending for wave in WAVES for case, ending in
            run_wave(wave, tmp_path_factory).items()}


@pytest.mark.parametrize('case', CASES, ids=case_id)
def test_ends_at_once_with_status_0_no_traceback_no_orphan(endings, case):
    ending = endings[case]
    assert ending.returncode == 0, f'exit status {ending.returncode}:\n{ending.log}'
    assert ending.seconds <= END_WITHIN_S, f'took {ending.seconds:.2f} s to end:\n{ending.log}'
    for text in ('Traceback', 'KeyboardInterrupt', 'Error'):
        assert text not in ending.log, ending.log
    # the check means something: these programs do have helper processes
    if case[0] == 'rbd_controller':
        assert any(b'prepass' in (cmd or b'') for cmd in ending.helpers.values())
    if case[0] == 'rbd_bringup':
        assert len(ending.helpers) >= 3, ending.helpers   # sim, controller, its helper
    assert not ending.left, f'left running: {[ending.helpers[pid] for pid in ending.left]}'
