"""Identification on a robot nobody tuned for, ROS-free: the UR5 of example-robot-data with
masses and centres of mass off by up to 25 % (demo/plant.py's perturbation), viscous friction
on every joint, a 1.5 kg payload on tool0, tracked through a 40 s excitation in MuJoCo at
1 kHz (lockstep); validation on another 10 s trajectory. Prints per joint the validation
relative RMS, the confidence figure rbd_identify reports (worst of 5 blocks) and the torque
RMS.

    python bench/identify_unseen_robot.py

Not a test: it takes ~15 s; nothing here asserts.
"""
import glob
import re
import sys
import time
from pathlib import Path

import numpy as np

from rbd_control.control import JointTrajectory
from rbd_control.demo.plant import perturbed_urdf, TRUE_PAYLOAD
from rbd_control.dynamics import load_urdf
from rbd_control.identification import excitation_trajectory, fit
from rbd_control.identification.filtering import filtered_states
from rbd_control.identification.result import relative_rms, worst_block_relative_rms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'test' / 'identification'))
from ident_support import record_tracking  # noqa: E402  (the identification tests' plant loop)

path = glob.glob(str(Path(sys.prefix) / 'lib' / 'python3*' / 'site-packages' / 'cmeel.prefix'
                     / 'share' / 'example-robot-data' / 'robots' / 'ur_description' / 'urdf'
                     / 'ur5_robot.urdf'))[0]
xml = Path(path).read_text()
nominal = load_urdf(xml)
plant = perturbed_urdf(xml)
VISCOUS = [2.0, 2.5, 1.2, 0.4, 0.3, 0.15]
for joint, b in zip(nominal.joint_names, VISCOUS):
    if re.search(rf'<joint name="{joint}".*?<dynamics [^>]*/>', plant, flags=re.S):
        plant = re.sub(rf'(<joint name="{joint}".*?)<dynamics [^>]*/>',
                       rf'\1<dynamics damping="{b}" friction="0"/>', plant, count=1, flags=re.S)
    else:
        plant = re.sub(rf'(<joint name="{joint}"[^>]*>)',
                       rf'\1<dynamics damping="{b}" friction="0"/>', plant, count=1)
start = time.time()
exc = excitation_trajectory(nominal, 40.0, iterations=40)
val = excitation_trajectory(nominal, 10.0, seed=3, iterations=20)


def run(tr, d):
    trajectory = JointTrajectory.from_arrays(nominal.joint_names, *tr.waypoints())
    return record_tracking(plant, nominal, trajectory, d,
                           payloads=[TRUE_PAYLOAD], q0=tr.sample(0.0)[0][0])


rec, vrec = run(exc, exc.duration), run(val, val.duration)
print('recorded', time.time() - start)
res = fit(nominal, rec['t'], rec['q'], rec['tau'], rec['qd'], friction=True)
t, q, qd, qdd, tau = filtered_states(vrec['t'], vrec['q'], vrec['tau'], vrec['qd'])
pred = res.predict(q, qd, qdd)
print('validation rel RMS', np.round(relative_rms(tau, pred), 4))
print('confidence (worst of 5)', np.round(worst_block_relative_rms(tau, pred), 4))
print('torque RMS', np.round(np.sqrt(np.mean(tau**2, axis=0)), 3))
print('viscous', np.round(res.friction.viscous, 3), 'coulomb', np.round(res.friction.coulomb, 3))
print('total', time.time() - start)
