"""Shadow mode on a real robot's log: 12.5 s of a real Franka Panda (../shared/data/panda_gaz2019,
or $RBD_SHARED_DATA) replayed as /joint_states with efforts (bench/replay_log.py, the log's own
uneven stamps, real time) into rbd_controller in mode shadow, twice:

  1. example-robot-data's panda.urdf as published, joints:=[panda_joint1 .. 7] (its gripper's
     two finger joints are not in the log: not commanded, the controller holds them at the
     URDF zero, fixed_positions' default);
  2. the model rbd_identify fits on the same log (--fixed for the fingers; identified.urdf
     with its friction.yaml).

Prints per joint the RMS and peak of ~/shadow_effort - the logged torque over every state the
node answered, the node's own ~/model_error window at the end, and how many messages reached
the command topic (must be 0).

    python bench/shadow_panda.py [--every 1] [--output /tmp/shadow_panda]

Not a test: it takes ~1 min (the fit ~20 s, two 12.5 s replays); nothing here asserts. The
identified model is fitted on the first 80 % of this log (rbd_identify's --holdout 0.2), so
its figures are partly on data it saw; the held-back figures are in rbd_identify's report.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'test'))
from shared_data import panda_log, panda_urdf  # noqa: E402  (where the data lives)

CONTROLLER = 'rbd_control.ros.controller.node'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--every', type=int, default=1, help='replay every Nth sample')
    parser.add_argument('--output', type=Path, default=None)
    return parser.parse_args()


def identify(log, out):
    subprocess.run([sys.executable, '-m', 'rbd_control.identification.cli', '--recording',
                    str(log), '--urdf', str(panda_urdf()), '--output', str(out)],
                   check=True, stdout=subprocess.DEVNULL, cwd=REPO)
    friction = yaml.safe_load((out / 'friction.yaml').read_text())
    return (out / 'identified.urdf').read_text(), friction['/**/rbd_controller']['ros__parameters']


def shadow_run(log, urdf, extra, work, every):
    """(per-joint errors of every answered state, the last ~/model_error, command count)."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticStatus
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    with np.load(log) as data:
        t, tau, names = data['t'] - data['t'][0], data['tau'], [str(j) for j in data['joints']]
    params = {'robot_description': urdf, 'mode': 'shadow', 'shadow.window': 20.0,
              'joints': names, **extra}
    params_file = work / 'params.yaml'
    params_file.write_text(yaml.safe_dump({'rbd_controller': {'ros__parameters': params}}))
    log_file = open(work / f'rbd_controller_{len(list(work.glob("*.log")))}.log', 'w')
    node_proc = subprocess.Popen([sys.executable, '-m', CONTROLLER, '--ros-args',
                                  '--params-file', str(params_file)], cwd=REPO,
                                 stdout=log_file, stderr=subprocess.STDOUT)
    rclpy.init()
    probe = rclpy.create_node('shadow_panda_probe')
    shadow, reports, commands = [], [], []
    probe.create_subscription(JointState, '/rbd_controller/shadow_effort', shadow.append, 5000)
    probe.create_subscription(DiagnosticStatus, '/rbd_controller/model_error', reports.append, 10)
    probe.create_subscription(Float64MultiArray, '/effort_controller/commands', commands.append,
                              100)
    deadline = time.monotonic() + 120.0     # its model in use: ~/model_error reports
    while not reports and time.monotonic() < deadline:
        rclpy.spin_once(probe, timeout_sec=0.05)
    replay = subprocess.Popen([sys.executable, str(REPO / 'bench' / 'replay_log.py'), str(log),
                               '--every', str(every)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    while replay.poll() is None:
        rclpy.spin_once(probe, timeout_sec=0.01)
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        rclpy.spin_once(probe, timeout_sec=0.01)
    first = float(replay.stdout.read().split()[3])
    probe.destroy_node()
    rclpy.shutdown()
    node_proc.terminate()
    node_proc.wait(10)
    errors = []
    for msg in shadow:
        offset = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec - first
        k = int(np.argmin(np.abs(t - offset)))
        order = [list(msg.name).index(j) for j in names]
        errors.append(np.asarray(msg.effort)[order] - tau[k])
    log_file.close()
    return np.array(errors).reshape(-1, len(names)), reports[-1], len(commands)


def main():
    args = parse_args()
    log, why = panda_log()
    if log is None:
        raise SystemExit(why)
    work = args.output or Path(tempfile.mkdtemp(prefix='shadow_panda_'))
    work.mkdir(parents=True, exist_ok=True)
    identified, friction = identify(log, work / 'identified')
    with np.load(log) as data:
        names, tau = [str(j) for j in data['joints']], data['tau']
    size = np.sqrt(np.mean(np.square(tau), axis=0))
    runs = {}
    for label, urdf, extra in (('published panda.urdf', panda_urdf().read_text(), {}),
                               ('identified (rbd_identify)', identified, friction)):
        errors, report, commands = shadow_run(log, urdf, extra, work, args.every)
        runs[label] = errors
        print(f'{label}: {len(errors)} states answered of {len(tau) // args.every}, '
              f'{commands} messages on the command topic')
        if report is not None:
            print(f'  ~/model_error at the end: {report.message}')
    print(f"\n{'joint':<14}{'torque RMS':>12}" + ''.join(
        f'{label + " RMS":>32}{"peak":>8}' for label in runs))
    for j, joint in enumerate(names):
        print(f'{joint:<14}{size[j]:>12.3f}' + ''.join(
            f'{np.sqrt(np.mean(e[:, j] ** 2)):>32.3f}{np.max(np.abs(e[:, j])):>8.2f}'
            for e in runs.values()))


if __name__ == '__main__':
    main()
