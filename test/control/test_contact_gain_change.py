"""contact.observer_gain changed at run time under a steady external torque (no ROS): the
residual r = K_O (p - s) is continuous across the change and converges on the true torque,
so a contact below the collision level never latches one, and a real contact never clears.
Before, the observer kept its baseline s and r jumped by K_new / K_old at the next state."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.contact import ContactConfig
from rbd_control.dynamics import gravity

DT = 0.002
JOINT = "shoulder_lift"
TAU_EXT = 6.0        # N m: above the default contact level (5), below the collision level (10)


def steady_contact(controller, model, q, t, states):
    """`states` states at rest under TAU_EXT on JOINT; the measured effort is what holds the
    arm then: g(q) - tau_ext. Returns the next time and r on JOINT after each state."""
    effort = gravity(model, q).copy()
    effort[model.joint_names.index(JOINT)] -= TAU_EXT
    column = model.joint_names.index(JOINT)
    seen = []
    for _ in range(states):
        controller.update(t, model.joint_names, q, np.zeros(model.nq), effort=effort)
        seen.append(float(controller.contact.observer.r[column]))
        t += DT
    return t, np.array(seen)


@pytest.mark.parametrize("before, after", [(200.0, 1000.0), (1000.0, 200.0)])
def test_a_gain_change_keeps_the_residual_continuous(arm_model, before, after):
    q = np.array([DEFAULT_ARM_HOME.get(name, 0.3) for name in arm_model.joint_names])
    contact = ContactConfig(observer_gain=before, use_measured_effort=True, reaction="hold")
    controller = Controller(arm_model, ControllerConfig(mode="gravity_compensation",
                                                        contact=contact))
    t, settled = steady_contact(controller, arm_model, q, 0.0, 500)
    assert settled[-1] == pytest.approx(TAU_EXT, abs=1e-3)
    controller.set_contact(ContactConfig(observer_gain=after, use_measured_effort=True,
                                         reaction="hold"))
    assert controller.contact.observer.gain == after
    t, following = steady_contact(controller, arm_model, q, t, 500)
    # continuous: no jump at the switch (before the fix: 6 -> 30 or 6 -> 1.2 N m)
    assert np.max(np.abs(following - TAU_EXT)) < 1e-3, following[:3]
    assert following[-1] == pytest.approx(TAU_EXT, abs=1e-6)
    assert not controller.contact.collided, controller.contact.reason
    assert controller.abort_reason == ""
