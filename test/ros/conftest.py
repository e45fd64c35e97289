"""Fixtures for tests with real rclpy nodes in separate processes.

Reusable by any ROS test of the project (the simulator's too):

    ros_env          per test: the environment every node process gets (the wheels'
                     library paths, its own ROS_DOMAIN_ID, LOCALHOST discovery);
                     also applied to this process before rclpy.init.
    ros_node         ProbeNode: an rclpy node in the test process, with helpers to
                     spin, wait for a condition and collect messages.
    spawn_node       start `python -m <module> --ros-args ...` with a parameter file;
                     every process is stopped (SIGINT, then SIGKILL) after the test.

A SIGKILLed Fast DDS participant leaves /dev/shm/fastrtps_* segments behind. Before
killing, NodeProcess.stop notes the segments the process uses; afterwards it (and the
session's end) deletes those of them no live process uses any more. Nothing else under
/dev/shm is touched: other people's participants share this machine.
"""
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from rbd_control.bringup.piped_log import PipedLog
from rbd_control.ros.drained import DrainedSubscriptions
from shm_segments import KILLED_PROCESS_SEGMENTS, remove_orphan_shm_segments, shm_segments_of

REPO = Path(__file__).resolve().parents[2]
ENV_SCRIPT = REPO / 'scripts' / 'ros_env.sh'


def _ros_environment(venv):
    """The variables scripts/ros_env.sh sets, for `venv`, as a dict."""
    output = subprocess.run(
        ['bash', '-c', f'source "{ENV_SCRIPT}" "{venv}" >&2 && env -0'],
        check=True, capture_output=True, text=True).stdout
    return dict(item.split('=', 1) for item in output.split('\0') if '=' in item)


# Domains 0..100 are where people run things by hand; keep clear of them (Fast DDS derives
# ports from the domain id, 232 is its maximum). Each test gets the next domain: a test
# that leaves a participant behind (a SIGSTOPped node's clogged shared-memory port, a
# lease not yet expired) cannot slow or confuse the next one. Two pytest runs side by side
# (scripts/test.sh) each take a part of the range, RBD_TEST_DOMAINS=first-last.
_FIRST_DOMAIN, _LAST_DOMAIN = map(int, os.environ.get('RBD_TEST_DOMAINS', '101-232').split('-'))
_domains = itertools.count(random.randint(_FIRST_DOMAIN, _LAST_DOMAIN))


def node_environment():
    """The environment of a node process, on a domain of its own (the next one)."""
    env = _ros_environment(sys.prefix)
    span = _LAST_DOMAIN - _FIRST_DOMAIN + 1
    env['ROS_DOMAIN_ID'] = str(_FIRST_DOMAIN + (next(_domains) - _FIRST_DOMAIN) % span)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(REPO), env.get('PYTHONPATH')]))
    env['PYTHONUNBUFFERED'] = '1'
    return env


@pytest.fixture
def ros_env():
    env = node_environment()
    # rclpy of this process reads the same variables at init.
    for name in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'AMENT_PREFIX_PATH',
                 'RMW_IMPLEMENTATION', 'FASTRTPS_DEFAULT_PROFILES_FILE'):
        if name in env:
            os.environ[name] = env[name]
    yield env
    remove_orphan_shm_segments(KILLED_PROCESS_SEGMENTS)


class ProbeNode:
    """An rclpy node living in the test process, with an executor to spin it."""

    def __init__(self, name):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        # collect()'s subscriptions are drained after every spin (ros/drained.py): through
        # the executor, watching a lockstep loop took ~0.4 of a core from the nodes under test
        self._collector = DrainedSubscriptions(self.node)

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._spin_once(min(0.01, max(0.0, end - time.monotonic())))

    def wait_for(self, predicate, timeout, what='condition'):
        """Spin until predicate() is true; fail the test after `timeout` seconds."""
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                pytest.fail(f'timed out after {timeout} s waiting for {what}')
            self._spin_once(0.01)

    def _spin_once(self, timeout):
        self.executor.spin_once(timeout_sec=timeout)
        self._collector.drain()

    def collect(self, msg_type, topic, qos=10):
        """Subscribe and return the list every received message is appended to (when this
        node spins: every ~10 ms at the latest). A depth given as a number is raised to
        1000, what a 1 kHz topic queues between two spins with room to spare."""
        received = []
        self._collector.subscribe(msg_type, topic, received.append,
                                  max(qos, 1000) if isinstance(qos, int) else qos)
        return received

    def stop_collecting(self):
        """Unsubscribe every collect(); the lists keep what they have."""
        self._collector.unsubscribe_all()

    def wait_for_subscribers(self, publisher, count=1, timeout=10.0):
        self.wait_for(lambda: publisher.get_subscription_count() >= count, timeout,
                      f'{count} subscriber(s) on {publisher.topic_name}')

    def wait_for_publishers(self, topic, count=1, timeout=10.0):
        self.wait_for(lambda: self.node.count_publishers(topic) >= count, timeout,
                      f'{count} publisher(s) on {topic}')

    def close(self):
        self.executor.shutdown()
        self._collector.close()
        self.node.destroy_node()
        self.context.try_shutdown()


@pytest.fixture
def ros_node(ros_env):
    node = ProbeNode(f'test_{os.getpid()}_{random.randrange(1 << 30)}')
    yield node
    node.close()


class NodeProcess:
    """A Python process (`python -m module` or `python script.py`), output in a log file,
    through a pipe as rbd_bringup and ros2 launch take it (PipedLog: a node writing onto a
    busy disk itself can stall its loop)."""

    def __init__(self, target, args, env, log_path):
        self.module = target
        self.log_path = log_path
        self._log = PipedLog(log_path)
        launcher = [str(target)] if str(target).endswith('.py') else ['-m', target]
        self.process = self._log.popen([sys.executable, *launcher, *args], env=env, cwd=REPO)

    @property
    def pid(self):
        return self.process.pid

    def alive(self):
        return self.process.poll() is None

    def log(self):
        self._log.sync()   # what the node wrote before it answered is in the file
        return Path(self.log_path).read_text()

    def wait_for_log(self, text, timeout):
        end = time.monotonic() + timeout
        while text not in self.log():
            if not self.alive():
                pytest.fail(f'{self.module} exited ({self.process.returncode}) before '
                            f'logging {text!r}:\n{self.log()}')
            if time.monotonic() > end:
                pytest.fail(f'{self.module} did not log {text!r} in {timeout} s:\n{self.log()}')
            time.sleep(0.05)

    def stop(self, timeout=5.0):
        """SIGINT (clean rclpy shutdown), then SIGKILL; returns the exit code."""
        if self.alive():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
        return self.process.returncode

    def kill(self):
        """SIGKILL, then delete the shared-memory segments only this process used."""
        KILLED_PROCESS_SEGMENTS.update(shm_segments_of(self.pid))
        self.process.kill()
        self.process.wait()
        remove_orphan_shm_segments(KILLED_PROCESS_SEGMENTS)


def write_parameter_file(path, node_name, parameters):
    """A --params-file YAML for one node (parameters: dict of name -> value)."""
    path.write_text(yaml.safe_dump({node_name: {'ros__parameters': parameters}}))
    return path


@pytest.fixture
def spawn_node(ros_env, tmp_path):
    """spawn_node(target, parameters=None, node_name='rbd_controller', ros_args=(), args=())

    target: a module (run with -m) or a path to a .py script. `parameters` go to a
    --params-file for `node_name`; `args` come before --ros-args."""
    started = []

    def spawn(target, parameters=None, node_name='rbd_controller', ros_args=(), args=(),
              env=None):
        index = len(started)
        ros_args = list(ros_args)
        if parameters:
            params_file = write_parameter_file(
                tmp_path / f'{node_name}_{index}.yaml', node_name, parameters)
            ros_args += ['--params-file', str(params_file)]
        argv = list(args) + (['--ros-args', *ros_args] if ros_args else [])
        process = NodeProcess(target, argv, {**ros_env, **(env or {})},
                              tmp_path / f'{node_name}_{index}.log')
        started.append(process)
        return process

    yield spawn
    for process in started:
        process.stop()
