"""feedforward_pd's inertia scheduling (control/laws/inertia_schedule.py): at every pose the
default gains are the discrete-time rule's on D(q) <= H(q) with lambda_max(H(q)^-1 D(q)) = 1,
so the fastest mode is the designed unit loop and the slow ones come up; joints whose gains a
user gave keep them."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from rbd_control.control import Controller, ControllerConfig
from rbd_control.control.laws.loop_design import reference_poses
from rbd_control.control.laws.inertia_schedule import InertiaSchedule
from rbd_control.dynamics import crba, load_urdf

_spec = importlib.util.spec_from_file_location(
    "delay_margin", pathlib.Path(__file__).resolve().parents[2] / "bench" / "delay_margin.py")
sweep = sys.modules.setdefault("delay_margin", importlib.util.module_from_spec(_spec))
if not hasattr(sweep, "load_arm"):
    _spec.loader.exec_module(sweep)


@pytest.fixture
def names(arm_model):
    return list(arm_model.joint_names)


def loop_eigenvalues(model, q, kp, omega_squared):
    """Eigenvalues of H(q)^-1 D with D = kp / w^2 (the gains' inertia)."""
    D = np.diag(kp / omega_squared)
    return np.sort(np.linalg.eigvals(np.linalg.solve(crba(model, q), D)).real)


@pytest.mark.parametrize("robot", ["default_arm", "ur5", "panda"])
def test_at_every_pose_the_fastest_mode_is_the_designed_loop(robot):
    model = load_urdf(sweep.load_arm(robot).urdf)
    controller = Controller(model, ControllerConfig(mode="feedforward_pd"))
    omega_squared = controller.gains.kp[0] / controller.gains.reference_inertia[0]
    slowest = []
    for q in reference_poses(model)[::8]:
        kp, _ = controller.gains_at(q)
        lam = loop_eigenvalues(model, q, kp, omega_squared)
        assert lam[-1] == pytest.approx(1.0, rel=1e-6)       # D(q) <= H(q), touching
        fixed = loop_eigenvalues(model, q, controller.gains.kp, omega_squared)
        assert lam[0] >= fixed[0] * (1 - 1e-9)               # slow modes never slower
        slowest.append(lam[0] / fixed[0])
    print(f"{robot}: slowest mode sped up {np.median(slowest):.1f}x (median over poses)")
    assert np.median(slowest) > 2.0


def test_given_gains_are_not_scheduled(arm_model, names):
    controller = Controller(arm_model, ControllerConfig(mode="feedforward_pd",
                                                        kp={"elbow": 300.0}))
    q = reference_poses(arm_model)[3]
    kp, kd = controller.gains_at(q)
    elbow = names.index("elbow")
    assert kp[elbow] == 300.0 and kd[elbow] == controller.gains.kd[elbow]
    assert not np.allclose(np.delete(kp, elbow), np.delete(controller.gains.kp, elbow))
    controller.set_gains(kd={"wrist_1": 0.5})
    kp, kd = controller.gains_at(q)
    wrist_1 = names.index("wrist_1")
    assert kd[wrist_1] == 0.5 and kp[wrist_1] == controller.gains.kp[wrist_1]


def test_off_the_gains_are_constant(arm_model):
    controller = Controller(arm_model, ControllerConfig(mode="feedforward_pd",
                                                        inertia_scheduling=False))
    kp, kd = controller.gains_at(reference_poses(arm_model)[5])
    np.testing.assert_array_equal(kp, controller.gains.kp)
    np.testing.assert_array_equal(kd, controller.gains.kd)


def test_the_command_uses_the_gains_at_the_measured_pose(arm_model, names):
    controller = Controller(arm_model, ControllerConfig(mode="feedforward_pd", state_timeout=10.0))
    q0 = reference_poses(arm_model)[7]
    controller.update(0.0, names, q0, np.zeros(6))           # holds q0
    q = q0 + 0.01
    command = controller.update(0.001, names, q, np.zeros(6))
    kp, _ = controller.gains_at(q)
    np.testing.assert_allclose(command.feedback, kp * (q0 - q), rtol=1e-12)


def test_scale_is_one_where_nothing_is_scheduled(arm_model):
    schedule = InertiaSchedule(arm_model, np.ones(arm_model.nq), np.zeros(arm_model.nq, bool))
    assert not schedule.active
    np.testing.assert_array_equal(schedule.scale(arm_model, np.zeros(arm_model.nq)), 1.0)
