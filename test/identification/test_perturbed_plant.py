"""rbd_control/demo/plant.py's perturbed arm, and the simulator's stiff_friction that makes its
joint friction Coulomb friction (the demo's rbd_mujoco_sim runs it with stiff_friction: true)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_control.demo.plant import HOLD_POSE, TRUE_FRICTION, perturbed_urdf
from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import gravity, load_urdf
from rbd_control.sim.simulator import Simulator


def test_perturbed_plant_is_the_arm_with_other_masses_and_friction():
    nominal, plant = load_urdf(default_arm_urdf()), load_urdf(perturbed_urdf(default_arm_urdf()))
    assert plant.joint_names == nominal.joint_names
    ratio = plant.inertial_parameters()[::10] / nominal.inertial_parameters()[::10]
    assert np.all((ratio >= 0.75) & (ratio <= 1.25)) and np.ptp(ratio) > 0.1, ratio
    np.testing.assert_allclose(plant.damping, [b for b, _ in TRUE_FRICTION.values()])
    np.testing.assert_allclose(plant.friction, [c for _, c in TRUE_FRICTION.values()])


@pytest.mark.parametrize("stiff", [True, False])
def test_stiff_friction_holds_a_joint_pushed_below_its_coulomb_friction(stiff):
    # gravity compensated exactly, wrist_3 pushed with 0.9 f_c: Coulomb friction holds it (the
    # stiffened constraint still creeps below ~0.03 rad/s: 0.015 rad in this second)
    xml = perturbed_urdf(default_arm_urdf())
    model = load_urdf(xml)
    sim = Simulator(xml, initial_positions=dict(zip(model.joint_names, HOLD_POSE)),
                    stiff_friction=stiff)
    push = np.zeros(model.nq)
    push[-1] = 0.9 * TRUE_FRICTION["wrist_3"][1]
    sim.set_command(gravity(model, np.array(HOLD_POSE)) + push)
    for _ in range(1000):
        sim.step()
    moved = abs(sim.state().position[-1] - HOLD_POSE[-1])
    if stiff:
        assert moved < 0.03
    else:   # MuJoCo's default soft frictionloss lets it slide (0.85 rad in this second)
        assert moved > 0.3
