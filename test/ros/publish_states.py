"""Publish sensor_msgs/JointState at a fixed rate from its own process.

    python publish_states.py --rate 1000 --duration 30 --names a b c [--topic joint_states]

Waits until `--subscribers` subscribers are matched, then publishes for `duration`
seconds on an absolute schedule (a late tick is sent at once, not skipped), with
positions that change every message. Prints `sent <N>` and exits.
"""
import argparse
import math
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rate', type=float, required=True)
    parser.add_argument('--duration', type=float, required=True)
    parser.add_argument('--names', nargs='+', required=True)
    parser.add_argument('--topic', default='joint_states')
    parser.add_argument('--subscribers', type=int, default=1)
    return parser.parse_args()


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
    time.sleep(0.2)     # discovery is two-way; give the other side time to match us too

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
        msg.header.stamp = node.get_clock().now().to_msg()
        msg.position = [0.3 * math.sin(phase + i) for i in range(len(args.names))]
        msg.velocity = [0.3 * math.cos(phase + i) for i in range(len(args.names))]
        publisher.publish(msg)
    print(f'sent {count}', flush=True)
    time.sleep(0.5)     # let reliable delivery finish before the participant goes away
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
