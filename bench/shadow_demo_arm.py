"""Shadow mode on the demo's perturbed arm (rbd_control/demo/plant.py: masses and centres of
mass off, Coulomb and viscous friction the URDF does not have): a 10 s validation trajectory
tracked on the MuJoCo plant (ROS-free, lockstep, 1 kHz; the applied efforts are what its
joints carry) is replayed into rbd_controller in mode shadow (bench/replay_log.py), first with
the nominal URDF, then with the model identified on a 20 s excitation of the same plant.
Prints per joint the RMS and peak of ~/shadow_effort - the recorded effort, and the command
topic's message count (must be 0).

    python bench/shadow_demo_arm.py

Not a test: it takes ~1.5 min; nothing here asserts.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from rbd_control.control import JointTrajectory
from rbd_control.demo.plant import perturbed_urdf
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import load_urdf
from rbd_control.identification import excitation_trajectory, fit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'test' / 'identification'))
sys.path.insert(0, str(REPO / 'bench'))
from ident_support import record_tracking  # noqa: E402  (the identification tests' plant loop)
from shadow_panda import shadow_run  # noqa: E402  (one replay through the node)


def recorded(nominal, plant, trajectory):
    waypoints = JointTrajectory.from_arrays(nominal.joint_names, *trajectory.waypoints())
    return record_tracking(plant, nominal, waypoints, trajectory.duration,
                           q0=trajectory.sample(0.0)[0][0])


def main():
    work = Path(tempfile.mkdtemp(prefix='shadow_demo_arm_'))
    xml = default_arm_urdf()
    nominal, plant = load_urdf(xml), perturbed_urdf(xml)
    excitation = recorded(nominal, plant, excitation_trajectory(nominal, 20.0, iterations=20))
    result = fit(nominal, excitation['t'], excitation['q'], excitation['tau'],
                 excitation['qd'])
    friction = yaml.safe_load(result.friction_yaml())['/**/rbd_controller']['ros__parameters']
    validation = recorded(nominal, plant,
                          excitation_trajectory(nominal, 10.0, seed=3, iterations=20))
    log = work / 'validation.npz'
    np.savez(log, joints=np.array(nominal.joint_names), **validation)
    size = np.sqrt(np.mean(np.square(validation['tau']), axis=0))
    runs = {}
    for label, urdf, extra in (('nominal URDF', xml, {}),
                               ('identified', result.to_urdf(xml), friction)):
        errors, report, commands = shadow_run(log, urdf, extra, work, 1)
        runs[label] = errors
        print(f'{label}: {len(errors)} states answered of {len(validation["t"])}, '
              f'{commands} messages on the command topic; ~/model_error: {report.message}')
    print(f"\n{'joint':<14}{'torque RMS':>12}" + ''.join(
        f'{label + " RMS":>20}{"peak":>8}' for label in runs))
    for j, joint in enumerate(nominal.joint_names):
        print(f'{joint:<14}{size[j]:>12.3f}' + ''.join(
            f'{np.sqrt(np.mean(e[:, j] ** 2)):>20.3f}{np.max(np.abs(e[:, j])):>8.2f}'
            for e in runs.values()))


if __name__ == '__main__':
    main()
