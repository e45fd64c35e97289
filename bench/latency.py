"""State -> command latency and CPU of rbd_controller against an echo node (a benchmark, not a
test).

    source scripts/ros_env.sh
    python bench/latency.py [--rate 1000] [--duration 10] [--rounds 2] [--phases quiet load]
                            [--variants echo rbd rbd:single_threaded rbd:events]
                            [--mode feedforward_pd] [--profile DIR] [--sim-time]

Three processes per run, as in a real setup: the node under test; a publisher of
sensor_msgs/JointState at --rate on an absolute schedule; this process, which takes the
commands. Variants (`node[:executor]`):
  echo   bench/echo_node.py, the floor: rclpy copies positions to a Float64MultiArray
         (SingleThreadedExecutor unless an executor is named);
  rbd    rbd_controller as shipped (tuning topics on, nobody subscribed to them);
  :KIND  the executor (ros/run.py): state_thread (rbd's default: the joint states taken by a
         thread of their own from a one-subscription wait set), single_threaded (every
         callback through rclpy's SingleThreadedExecutor), events (rclpy's EventsExecutor).
A variant whose node dies or does not answer within --handshake-timeout is reported as
failed, with the tail of its log, and the others go on.
Variants run interleaved in rounds, so a machine whose load drifts affects all alike; the
ratios compare each variant with the echo of the same round and phase. Phase `load` runs
two busy loops pinned one to each of the first two CPUs for its whole duration.

Every state carries its index: the echo returns it (extra_joint's position); rbd_controller
runs feedforward_pd with zero gains, so its command is G(q_k) and decodes to k (the control
law costs the same with zero gains). So each command is matched with the state it answers
even when a node coalesces a backlog. Latency = receive time of the command minus send time
of its state, both CLOCK_MONOTONIC (system-wide). CPU = the node's user+system time over the
stream divided by its wall time (1.0 = one core).

--sim-time runs rbd_controller with use_sim_time and no /clock, as a node on sim time fed by a
driver that stamps wall time: it cannot date the states and warns on every one (the per-state
warning path; the log line is throttled, the call is not free).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
ARM = 6                                 # joints of the default arm; states carry one extra
LOG_TAIL = 1500                         # characters of a failed node's log shown


class Failure(str):
    """A run whose node died or never answered the handshake: why, with its log tail."""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--phases', nargs='+', default=['quiet', 'load'],
                        choices=['quiet', 'load'])
    parser.add_argument('--variants', nargs='+',
                        default=['echo', 'rbd', 'rbd:single_threaded', 'rbd:events'])
    parser.add_argument('--mode', default='feedforward_pd')
    parser.add_argument('--handshake-timeout', type=float, default=180.0,
                        help='seconds a node may take to answer its first state (a cold numba '
                             'compile takes ~40 s of one core); then its run counts as failed')
    parser.add_argument('--profile', metavar='DIR',
                        help='run each rbd node under cProfile, writing DIR/<variant>-<n>.prof')
    parser.add_argument('--sim-time', action='store_true',
                        help='run rbd_controller on sim time (its states then on another clock)')
    parser.add_argument('--publisher', metavar='TIMES_FILE', help=argparse.SUPPRESS)
    parser.add_argument('--names', nargs='*', help=argparse.SUPPRESS)
    return parser.parse_args()


def state_positions(k, n):
    """Arm pose of state k (distinct for every k), then k itself for extra_joint."""
    return np.append(0.3 * np.sin(0.001 * k + np.arange(n - 1)), float(k))


# --------------------------------------------------------------------- publisher process

def run_publisher(args):
    """Handshake, then publish states on schedule; write the send times (ns) to args.publisher."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    rclpy.init()
    node = rclpy.create_node('bench_state_publisher')
    publisher = node.create_publisher(
        JointState, 'joint_states', QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    answers = []
    node.create_subscription(Float64MultiArray, '/effort_controller/commands', answers.append, 10)
    msg = JointState(name=args.names)
    n = len(args.names)
    ready = Path(args.publisher).with_name('ready')
    while not (answers and ready.with_name('receiver_ready').exists()):  # all paths matched
        msg.position = list(state_positions(-1, n))
        msg.velocity = [0.0] * n
        publisher.publish(msg)
        rclpy.spin_once(node, timeout_sec=0.05)
    ready.touch()
    time.sleep(1.0)
    count = int(args.rate * args.duration)
    sent = np.zeros(count, dtype=np.int64)
    period_ns = int(1e9 / args.rate)
    start = time.monotonic_ns() + 10_000_000
    for k in range(count):
        delay = (start + k * period_ns - time.monotonic_ns()) * 1e-9
        if delay > 0:
            time.sleep(delay)
        msg.position = list(state_positions(k, n))
        msg.header.stamp = node.get_clock().now().to_msg()   # wall time: the node's clock
        sent[k] = time.monotonic_ns()
        publisher.publish(msg)
    np.save(args.publisher, sent)
    time.sleep(2.0)     # a writer that leaves takes its undelivered samples with it
    node.destroy_node()
    rclpy.shutdown()


# --------------------------------------------------------------------- one run

def cpu_seconds(pid):
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def node_command(variant, workdir, args, joints):
    """argv of the node under test."""
    import yaml
    from rbd_control.description import default_arm_urdf
    name, _, executor = variant.partition(':')
    executor_args = ['--executor', executor] if executor else []
    python = [sys.executable]
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
        runs = len(list(Path(args.profile).glob(f'{variant.replace(":", "_")}-*.prof')))
        python += ['-m', 'cProfile', '-o',
                   str(Path(args.profile, f'{variant.replace(":", "_")}-{runs}.prof'))]
    if name == 'echo':
        return [*python, str(REPO / 'bench' / 'echo_node.py'), *executor_args]
    zero_gains = {f'gains.{j}.{g}': 0.0 for j in joints for g in ('p', 'd')}
    params = workdir / 'params.yaml'
    params.write_text(yaml.safe_dump({'rbd_controller': {'ros__parameters': {
        'robot_description': default_arm_urdf(), 'mode': args.mode,
        'state_timeout': 10.0,        # the watchdog's safe commands must not be counted
        'use_sim_time': args.sim_time, **zero_gains}}}))
    return [*python, '-m', 'rbd_control.ros.controller.node', *executor_args,
            '--ros-args', '--params-file', str(params)]


def run_once(variant, args, env, names, decode):
    """(latency in us of each answered state, states sent, node CPU fraction)."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray

    workdir = Path(tempfile.mkdtemp(prefix='rbd_latency_'))
    log = open(workdir / 'node.log', 'w')
    node_process = subprocess.Popen(node_command(variant, workdir, args, names[:ARM]), env=env,
                                    cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    node = rclpy.create_node('bench_latency')
    received = []           # (receive time ns, command data)

    def on_command(msg):
        # take what is already queued too: an executor round trip per message would make
        # this process the bottleneck
        received.append((time.monotonic_ns(), msg.data))
        while True:
            with commands.handle:
                taken = commands.handle.take_message(Float64MultiArray, False)
            if taken is None:
                return
            received.append((time.monotonic_ns(), taken[0].data))

    commands = node.create_subscription(
        Float64MultiArray, '/effort_controller/commands', on_command,
        QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE))
    times_file = workdir / 'sent.npy'
    publisher = subprocess.Popen(
        [sys.executable, __file__, '--publisher', str(times_file), '--rate', str(args.rate),
         '--duration', str(args.duration), '--names', *names], env=env)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    cpu_start = wall_start = None
    deadline = time.monotonic() + args.handshake_timeout
    try:
        while not (workdir / 'ready').exists():       # the publisher's handshake
            executor.spin_once(timeout_sec=0.01)
            if received:
                (workdir / 'receiver_ready').touch()
            failure = ('exited' if node_process.poll() is not None else
                       'no handshake' if time.monotonic() > deadline else None)
            if failure:
                publisher.kill()
                publisher.wait()
                log_tail = (workdir / 'node.log').read_text()[-LOG_TAIL:]
                return Failure(f'{variant}: {failure}; node log (tail):\n{log_tail}')
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
        received.clear()                              # answers to the probes
        while publisher.poll() is None:
            executor.spin_once(timeout_sec=0.01)
            if received and cpu_start is None:        # the stream has reached the node
                cpu_start, wall_start = cpu_seconds(node_process.pid), time.monotonic()
        cpu_end, wall_end = cpu_seconds(node_process.pid), time.monotonic()
        end = time.monotonic() + 3.0                  # a backlog may still be draining
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
    finally:
        node_process.send_signal(2)
        try:
            node_process.wait(10)
        except subprocess.TimeoutExpired:
            node_process.kill()
            node_process.wait()
        executor.remove_node(node)
        node.destroy_node()
    sent = np.load(times_file)
    index = decode(variant, [data for _, data in received], len(sent))
    answered = index >= 0
    received_ns = np.array([t for t, _ in received], dtype=np.int64)
    latency_us = (received_ns[answered] - sent[index[answered]]) / 1e3
    return latency_us, len(sent), (cpu_end - cpu_start) / (wall_end - wall_start)


def decoder(names, count):
    """decode(variant, command data list, states sent) -> index of the state each answers."""
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import gravity, load_urdf
    model = load_urdf(default_arm_urdf())
    order = [names.index(j) for j in model.joint_names]
    expected = np.array([gravity(model, state_positions(k, len(names))[order])
                         for k in range(count)])

    def decode(variant, data, sent):
        if variant.startswith('echo'):
            return np.array([int(d[-1]) if len(d) and 0 <= d[-1] < sent else -1 for d in data])
        index, k = np.full(len(data), -1), 0
        for i, tau in enumerate(data):        # answers come in order: search forward
            tau = np.asarray(tau)
            for candidate in range(k, min(k + 5000, sent)):
                if np.allclose(expected[candidate], tau, rtol=0, atol=1e-9):
                    index[i], k = candidate, candidate + 1
                    break
        return index
    return decode


# --------------------------------------------------------------------- main

def busy_loops():
    """One busy process pinned to each of the first two CPUs (the `load` phase)."""
    spin = 'import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass'
    return [subprocess.Popen([sys.executable, '-c', spin, str(cpu)])
            for cpu in range(min(2, os.cpu_count()))]


def main():
    args = parse_args()
    if args.publisher:
        return run_publisher(args)
    env = dict(os.environ)
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(101, 232)))
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONPATH'] = str(REPO)
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')})
    import rclpy
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf
    names = list(reversed(load_urdf(default_arm_urdf()).joint_names)) + ['extra_joint']
    decode = decoder(names, int(args.rate * args.duration))
    rclpy.init()
    results = {}            # (phase, variant) -> list of (latency array, sent, cpu)
    try:
        for phase in args.phases:
            loads = busy_loops() if phase == 'load' else []
            try:
                for _ in range(args.rounds):
                    for variant in args.variants:
                        run = run_once(variant, args, env, names, decode)
                        if isinstance(run, Failure):
                            print(f'FAILED {run}', file=sys.stderr)
                        results.setdefault((phase, variant), []).append(run)
            finally:
                for process in loads:
                    process.kill()
                    process.wait()
    finally:
        rclpy.try_shutdown()
    report(args, results)


def report(args, results):
    print(f'{args.rate:g} Hz, {args.duration:g} s per run, {args.rounds} round(s) interleaved, '
          f'mode {args.mode}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}')
    print(f'{"phase":6} {"variant":14} {"p50 us":>8} {"p99 us":>8} {"max us":>8} '
          f'{"answered":>9} {"CPU %":>6} {"p50/echo":>9} {"p99/echo":>9}')
    failures = [run for runs in results.values() for run in runs if isinstance(run, Failure)]
    for (phase, variant), runs in results.items():
        runs = [run for run in runs if not isinstance(run, Failure)]
        if not runs:
            print(f'{phase:6} {variant:14} no run completed')
            continue
        latency = np.concatenate([r[0] for r in runs])
        answered = len(latency) / sum(r[1] for r in runs)
        cpu = np.median([r[2] for r in runs])
        p50, p99 = np.percentile(latency, [50, 99]) if latency.size else (np.nan, np.nan)
        floor = [run for run in results.get((phase, 'echo'), ()) if not isinstance(run, Failure)]
        ratios = ''
        if floor:
            echo = np.concatenate([r[0] for r in floor])
            f50, f99 = np.percentile(echo, [50, 99])
            ratios = f'{p50 / f50:9.2f} {p99 / f99:9.2f}'
        print(f'{phase:6} {variant:14} {p50:8.0f} {p99:8.0f} {latency.max(initial=0):8.0f} '
              f'{100 * answered:8.1f}% {100 * cpu:6.1f} {ratios}')
    for failure in failures:
        print(f'\nFAILED {failure}')


if __name__ == '__main__':
    main()
