"""The Model is immutable, and with_gravity gives a working copy with another gravity."""
import numpy as np
import pytest

from rbd_control.description import default_arm_urdf
from rbd_control.dynamics import InputError, crba, forward_dynamics, gravity, load_urdf, rnea


@pytest.fixture(scope="module")
def arm():
    return load_urdf(default_arm_urdf())


def test_with_gravity_scales_G_and_leaves_the_original_alone(arm):
    q = np.linspace(-0.5, 0.5, arm.nq)
    moon = arm.with_gravity([0.0, 0.0, -1.62])
    np.testing.assert_allclose(gravity(moon, q), gravity(arm, q) * 1.62 / 9.81, rtol=1e-12)
    np.testing.assert_array_equal(arm.gravity, [0.0, 0.0, -9.81])
    # every kernel works on the copy (it must not receive read-only arrays)
    H = crba(moon, q)
    tau = rnea(moon, q, q, q)
    np.testing.assert_allclose(forward_dynamics(moon, q, q, tau), q, atol=1e-10)
    np.testing.assert_allclose(H, crba(arm, q), rtol=1e-14)


def test_with_gravity_refuses_a_bad_vector(arm):
    with pytest.raises(InputError, match="gravity"):
        arm.with_gravity([0.0, float("nan"), 1.0])


def test_public_arrays_are_read_only(arm):
    for name in ("effort_limit", "position_limits", "gravity", "bodies", "topology"):
        with pytest.raises(ValueError):
            getattr(arm, name)[0] = 0.0
    with pytest.raises(TypeError):
        arm.link_body["new_link"] = 0
