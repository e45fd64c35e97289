"""Replay a recorded log (an .npz of t, q, qd, tau, joints: rbd_identify's layout) as
sensor_msgs/JointState with efforts, at the log's own uneven stamps, in real time.

    python bench/replay_log.py LOG.npz [--every N] [--duration S] [--topic joint_states]

Waits until the topic has a subscriber and a further --settle seconds (so that the
subscriber has matched back), then publishes sample k at start + (t_k - t_0): header.stamp is
that time on this machine's clock, so a node on the same clock sees fresh states. --every N
sends every Nth sample (a 1 kHz log at 250 Hz with N = 4); the stamps stay the log's.
Prints `sent <N> first <stamp> last <stamp>` (stamps in s) and exits.
"""
import argparse
import time

import numpy as np
import rclpy
from sensor_msgs.msg import JointState


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('log')
    parser.add_argument('--every', type=int, default=1)
    parser.add_argument('--duration', type=float, default=np.inf)
    parser.add_argument('--topic', default='joint_states')
    parser.add_argument('--settle', type=float, default=1.0)
    parser.add_argument('--wait', type=float, default=30.0,
                        help='seconds to wait for a subscriber before giving up')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    with np.load(args.log) as data:
        t, q, qd, tau = (np.asarray(data[k], float) for k in ('t', 'q', 'qd', 'tau'))
        names = [str(j) for j in data['joints']]
    keep = np.flatnonzero(t - t[0] <= args.duration)[::max(1, args.every)]
    rclpy.init()
    node = rclpy.create_node('replay_log')
    publisher = node.create_publisher(JointState, args.topic, 100)
    deadline = time.monotonic() + args.wait
    while publisher.get_subscription_count() < 1:
        if time.monotonic() > deadline:
            raise SystemExit(f'no subscriber on {args.topic} in {args.wait} s')
        time.sleep(0.02)
    time.sleep(args.settle)
    msg = JointState(name=names)
    start_wall, start_mono = time.time(), time.monotonic()
    for k in keep:
        offset = t[k] - t[0]
        pause = start_mono + offset - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        ns = int(round((start_wall + offset) * 1e9))
        msg.header.stamp.sec, msg.header.stamp.nanosec = ns // 10**9, ns % 10**9
        msg.position, msg.velocity, msg.effort = q[k].tolist(), qd[k].tolist(), tau[k].tolist()
        publisher.publish(msg)
    print(f'sent {len(keep)} first {start_wall:.6f} last {start_wall + t[keep[-1]] - t[0]:.6f}',
          flush=True)
    time.sleep(0.5)       # let the last messages leave
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
