"""Publish sensor_msgs/JointState at a fixed rate from its own process.

    python publish_states.py --rate 1000 --duration 30 --names a b c [--topic joint_states]

Waits until `--subscribers` subscribers are matched, then publishes for `duration`
seconds on an absolute schedule (a late tick is sent at once, not skipped), with
positions that change every message. Prints `sent <N>` and exits.

With --handshake-topic T: first publishes a probe state every 50 ms until a message
arrives on T (a Float64MultiArray answer), which proves the subscriber has matched us
back - a publisher counts a subscriber before that, and states sent meanwhile are lost.
Then prints `ready`, waits --ready-pause seconds (for the caller to take note) and
streams.

With --late FROM TO DELAY: the states sent between FROM and TO seconds into the stream are
stamped DELAY seconds in the past, as if they had waited in a queue (a late driver).
"""
import argparse
import math
import time

import rclpy
from rclpy.duration import Duration
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rate', type=float, required=True)
    parser.add_argument('--duration', type=float, required=True)
    parser.add_argument('--names', nargs='+', required=True)
    parser.add_argument('--topic', default='joint_states')
    parser.add_argument('--subscribers', type=int, default=1)
    parser.add_argument('--handshake-topic')
    parser.add_argument('--ready-pause', type=float, default=1.0)
    parser.add_argument('--late', nargs=3, type=float, metavar=('FROM', 'TO', 'DELAY'))
    return parser.parse_args()


def handshake(node, publisher, args):
    answers = []
    node.create_subscription(Float64MultiArray, args.handshake_topic, answers.append, 10)
    probe = JointState(name=args.names)
    probe.position = [0.0] * len(args.names)
    probe.velocity = [0.0] * len(args.names)
    deadline = time.monotonic() + 20.0
    while not answers:
        if time.monotonic() > deadline:
            raise SystemExit('no answer to the probe state')
        publisher.publish(probe)
        rclpy.spin_once(node, timeout_sec=0.05)
    end = time.monotonic() + 0.3           # answers to probes still in flight
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    print('ready', flush=True)
    time.sleep(args.ready_pause)


def main():
    args = parse_args()
    rclpy.init()
    node = rclpy.create_node('state_stream')
    publisher = node.create_publisher(
        # A reliable writer drops what its history cannot hold until acknowledged:
        # keep a second of states so a busy subscriber gets every one.
        JointState, args.topic, QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 20.0
    while publisher.get_subscription_count() < args.subscribers:
        if time.monotonic() > deadline:
            raise SystemExit('no subscriber matched')
        time.sleep(0.01)
    if args.handshake_topic:
        handshake(node, publisher, args)
    else:
        time.sleep(0.2)     # discovery is two-way; give the other side time to match us

    count = int(args.rate * args.duration)
    period = 1.0 / args.rate
    msg = JointState()
    msg.name = args.names
    start = time.monotonic()
    for k in range(count):
        delay = start + k * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        phase = 0.001 * k
        stamp = node.get_clock().now()
        if args.late and args.late[0] <= k * period < args.late[1]:
            stamp -= Duration(seconds=args.late[2])
        msg.header.stamp = stamp.to_msg()
        msg.position = [0.3 * math.sin(phase + i) for i in range(len(args.names))]
        msg.velocity = [0.3 * math.cos(phase + i) for i in range(len(args.names))]
        publisher.publish(msg)
    print(f'sent {count}', flush=True)
    time.sleep(2.0)     # a writer that leaves takes its undelivered samples with it
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
