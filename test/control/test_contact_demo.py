"""The demo's contact phase (rbd_control/demo/contact.py) without ROS.

- its box is where only this phase goes: the probe on tool0 keeps BOX_CLEARANCE from it over
  the demo trajectory, on the way from the home pose to the Cartesian phase's work pose and at
  the work pose, and the phase's pan swing runs into it;
- the phase in lock step (contact.simulate: the Simulator with the box, the Controller in
  computed_torque with contact.reaction hold and the demo's lock-step loop): the collision is
  detected within 10 ms of the true |tau_ext| (MuJoCo's qfrc_constraint) passing the collision
  level, and the arm stops within MAX_STOP_S of the detection. Run with -s to see the row.
"""
from __future__ import annotations

import numpy as np

from rbd_control.bringup.processes import LOCKSTEP_LOOP
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, demo_waypoints
from rbd_control.control import Controller, ControllerConfig, JointTrajectory
from rbd_control.demo import contact
from rbd_control.dynamics import frame_pose


def clearance(model, q, box):
    """Distance from the probe sphere on tool0 to the box, m (< 0: touching)."""
    p = frame_pose(model, q, contact.EE_LINK)[:3, 3]
    outside = np.maximum(np.abs(p - box[:3]) - box[3:], 0.0)
    return float(np.linalg.norm(outside)) - contact.PROBE_RADIUS


def desired_path(model, q0, points, step=0.002):
    """The positions the controller's trajectory plan asks for from rest at q0, every `step` s."""
    names = model.joint_names
    controller = Controller(model, ControllerConfig(mode="computed_torque"))
    q = np.array(q0, dtype=float)
    controller.update(0.0, names, q, np.zeros(len(names)))
    controller.set_trajectory(JointTrajectory.from_arrays(
        names, *(np.array(column) for column in zip(*points))), 0.0)
    path = []
    for t in np.arange(step, points[-1][0] + step, step):
        q = controller.update(t, names, q, np.zeros(len(names))).desired_q.copy()
        path.append(q)
    return path


def test_the_box_is_clear_of_the_other_phases_and_in_the_way_of_this_one(arm_model):
    box = np.array(contact.obstacle_box(arm_model))
    names = arm_model.joint_names
    home = np.array([DEFAULT_ARM_HOME[j] for j in names])
    work = contact.work_q(arm_model)
    tracking = min(clearance(arm_model, q, box)
                   for q in desired_path(arm_model, home, demo_waypoints(DEFAULT_ARM_HOME, names)))
    to_work = min(clearance(arm_model, home + s * (work - home), box)
                  for s in np.linspace(0.0, 1.0, 101))
    swing = min(clearance(arm_model, q, box)
                for q in desired_path(arm_model, work, contact.trajectory_points(names, work)))
    print(f"\nprobe clearance from the box: demo trajectory {tracking:.3f} m, home to work pose "
          f"{to_work:.3f} m (at the work pose {clearance(arm_model, work, box):.3f} m); the "
          f"contact phase's swing reaches {swing:.3f} m")
    assert min(tracking, to_work) > contact.BOX_CLEARANCE
    assert swing < -0.5 * contact.PROBE_RADIUS


def test_the_phase_detects_the_box_and_stops_the_arm(arm_urdf, arm_model):
    result = contact.simulate(arm_urdf, arm_model, LOCKSTEP_LOOP)
    print("\n" + contact.summary(result))
    assert contact.problems(result) == []
    assert result.delay <= 0.010 + 1e-9
