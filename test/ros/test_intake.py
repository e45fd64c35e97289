"""How old a joint state is when answered (rbd_control/ros/intake.py); no nodes needed."""
import pytest

from rbd_control.ros.intake import MAX_PLAUSIBLE_AGE, state_age

WALL = 1.795e9          # a wall-clock time, s


@pytest.mark.parametrize('now, stamp, wall_now, published, expected', [
    (WALL, WALL - 0.020, WALL, WALL - 0.001, 0.020),    # late stamp on the node's clock
    (3.000, 3.000, WALL, WALL - 0.015, 0.015),           # sim time: /clock as late as the state
    (WALL, 2.5, WALL, WALL - 0.002, 0.002),              # sim-time stamp on a wall-time node
    (WALL, 0.0, WALL, WALL - 0.004, 0.004),              # unstamped
    (WALL, WALL + 0.001, WALL, 0.0, 0.0),                # /clock behind the state: 0, not negative
    (WALL, 2.5, WALL, 0.0, None),                        # neither clock usable
    (WALL, 0.0, WALL, 0.0, None),                        # nothing known
    (WALL, WALL - 2 * MAX_PLAUSIBLE_AGE, WALL, WALL - 0.003, 0.003),
])
def test_state_age_takes_the_larger_usable_age(now, stamp, wall_now, published, expected):
    age = state_age(now, stamp, wall_now, published)
    assert age == (None if expected is None else pytest.approx(expected, abs=1e-6))
