"""State -> command latency and CPU use of rbd_controller (a benchmark, not a test).

    source scripts/ros_env.sh
    python bench/latency.py [--rate 1000] [--duration 20] [--mode feedforward_pd] [--no-tuning]

Three processes, as in a real setup: rbd_controller; a publisher of sensor_msgs/JointState
at --rate on an absolute schedule; this process, which takes the commands. The k-th command
answers the k-th state (one executor thread, FIFO, nothing dropped - checked), so the
latency is receive time of command k minus send time of state k, both CLOCK_MONOTONIC
(system-wide, so comparable across processes). CPU is the node's user+system time over the
stream divided by its wall time (1.0 = one core busy).
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


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--duration', type=float, default=20.0)
    parser.add_argument('--mode', default='feedforward_pd')
    parser.add_argument('--no-tuning', action='store_true', help='publish_tuning:=false')
    parser.add_argument('--publisher', metavar='TIMES_FILE', help=argparse.SUPPRESS)
    parser.add_argument('--names', nargs='*', help=argparse.SUPPRESS)
    return parser.parse_args()


# --------------------------------------------------------------------- publisher process

def handshake(node, publisher, names, ready_flag):
    """Probe until the controller answers both this process and the receiver (only then
    are all paths matched; states sent before are lost), flag `ready`, then give the
    receiver a second to reset its count."""
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    answers = []
    node.create_subscription(Float64MultiArray, '/effort_controller/commands', answers.append, 10)
    probe = JointState(name=names)
    probe.position = [0.0] * len(names)
    probe.velocity = [0.0] * len(names)
    receiver_ready = ready_flag.with_name('receiver_ready')
    while not (answers and receiver_ready.exists()):
        publisher.publish(probe)
        rclpy.spin_once(node, timeout_sec=0.05)
    ready_flag.touch()
    time.sleep(1.0)


def run_publisher(args):
    """Publish states; write the send times (ns) to args.publisher."""
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node('bench_state_publisher')
    publisher = node.create_publisher(
        JointState, 'joint_states', QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    handshake(node, publisher, args.names, Path(args.publisher).with_name('ready'))
    count = int(args.rate * args.duration)
    sent = np.zeros(count, dtype=np.int64)
    msg = JointState()
    msg.name = args.names
    n = len(args.names)
    period_ns = int(1e9 / args.rate)
    start = time.monotonic_ns() + 10_000_000
    for k in range(count):
        delay = (start + k * period_ns - time.monotonic_ns()) * 1e-9
        if delay > 0:
            time.sleep(delay)
        msg.position = list(0.3 * np.sin(0.001 * k + np.arange(n)))
        msg.velocity = list(0.3 * np.cos(0.001 * k + np.arange(n)))
        sent[k] = time.monotonic_ns()
        publisher.publish(msg)
    np.save(args.publisher, sent)
    time.sleep(2.0)     # a writer that leaves takes its undelivered samples with it
    node.destroy_node()
    rclpy.shutdown()


# --------------------------------------------------------------------- main process

def cpu_seconds(pid):
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def start_controller(workdir, env, args):
    import yaml
    from rbd_control.description import default_arm_urdf
    params = workdir / 'params.yaml'
    params.write_text(yaml.safe_dump({'rbd_controller': {'ros__parameters': {
        'robot_description': default_arm_urdf(), 'mode': args.mode,
        # longer than the drain below: the watchdog's safe commands must not be counted
        'state_timeout': 10.0,
        'publish_tuning': not args.no_tuning}}}))
    log = open(workdir / 'controller.log', 'w')
    return subprocess.Popen(
        [sys.executable, '-m', 'rbd_control.ros.controller_node', '--ros-args',
         '--params-file', str(params)], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)


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
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf

    names = list(reversed(load_urdf(default_arm_urdf()).joint_names)) + ['extra_joint']
    workdir = Path(tempfile.mkdtemp(prefix='rbd_latency_'))
    controller = start_controller(workdir, env, args)

    rclpy.init()
    node = rclpy.create_node('bench_latency')
    received = []

    def on_command(_msg):
        # Stamp this one and any already queued (as the node does): a Python executor
        # round trip per message would make this process the bottleneck.
        received.append(time.monotonic_ns())
        while True:
            with commands.handle:
                taken = commands.handle.take_message(Float64MultiArray, False)
            if taken is None:
                return
            received.append(time.monotonic_ns())

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
    try:
        while not (workdir / 'ready').exists():       # the publisher's handshake
            executor.spin_once(timeout_sec=0.01)
            if received:
                (workdir / 'receiver_ready').touch()
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
        received.clear()                              # answers to its probes
        while publisher.poll() is None:
            executor.spin_once(timeout_sec=0.01)
            if received and cpu_start is None:   # the stream has reached the node
                cpu_start, wall_start = cpu_seconds(controller.pid), time.monotonic()
        cpu_end, wall_end = cpu_seconds(controller.pid), time.monotonic()
        expected = int(args.rate * args.duration)
        end = time.monotonic() + 5.0                  # a backlog may still be draining
        while len(received) < expected and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
    finally:
        controller.send_signal(2)
        try:
            controller.wait(10)
        except subprocess.TimeoutExpired:
            controller.kill()
            controller.wait()
        node.destroy_node()
        rclpy.shutdown()

    sent = np.load(times_file)
    np.save(workdir / 'received.npy', np.array(received, dtype=np.int64))
    print(f'raw times (ns, CLOCK_MONOTONIC): {workdir}/sent.npy, {workdir}/received.npy')
    report(args, sent, np.array(received, dtype=np.int64),
           (cpu_end - cpu_start) / (wall_end - wall_start))


def report(args, sent, received, cpu):
    print(f'rbd_controller, mode {args.mode}, tuning topics '
          f'{"off" if args.no_tuning else "on"}, '
          f'{args.rate:g} Hz for {args.duration:g} s')
    print(f'states sent {len(sent)}, commands received {len(received)}')
    if len(received) != len(sent):
        print('  counts differ: states were dropped, latency matching is not possible')
    else:
        latency_us = (received - sent) / 1e3
        p50, p99, p999 = np.percentile(latency_us, [50, 99, 99.9])
        print(f'state -> command latency: p50 {p50:.0f} us, p99 {p99:.0f} us, '
              f'p99.9 {p999:.0f} us, max {latency_us.max():.0f} us')
    print(f'node CPU: {100 * cpu:.0f} % of one core')
    print(f'machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}')


if __name__ == '__main__':
    main()
