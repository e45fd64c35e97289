"""The hold after a collision brakes before it holds (control/contact/monitor.py, BRAKED_SPEED):
the demo's contact phase ROS-free (contact.simulate) with the loop of the shipped
config/arm_controller.yaml (the controller's default expected_state_period and expected_delay,
as `python -m rbd_control.demo --realtime` runs it). Holding the pose measured at the latch
pulled back the wrist the impact had spun to 4.7 rad/s: stopped 365 ms after the detection,
swinging back at up to 0.7 rad/s on the way. Run with -s to see the row.
"""
from __future__ import annotations

import numpy as np

from rbd_control.demo import contact


def test_the_hold_stops_the_arm_without_pulling_it_back(arm_urdf, arm_model):
    result = contact.simulate(arm_urdf, arm_model, {})
    after = result.velocity_time >= result.detected
    speeds = np.max(np.abs(result.velocity[after]), axis=1)
    rising = float(np.max(np.diff(speeds)))      # the largest step up of the fastest joint
    print(f"\n{contact.summary(result)}\nlargest rise of the fastest joint's speed after the "
          f"detection {rising:.4f} rad/s per state")
    assert result.stop_time <= contact.MAX_STOP_S
    assert result.creep <= 0.02
    assert rising < 0.02                         # braking: it only slows down
