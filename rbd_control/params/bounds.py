"""Bounds on every number that reaches a plan, a gain or a limit, in one place.

Each is far beyond what a real robot needs, and far enough from float overflow that the
products the controller forms (gain x error, H x acceleration, polynomial coefficients
h / T^5) stay finite. A value beyond its bound is refused with a message naming it, so a NaN can
never be the first symptom of absurd input.
"""
import math

# measured states and trajectory points
MAX_PLAUSIBLE_POSITION = 1e4        # rad or m; continuous joints may wind up many turns
MAX_PLAUSIBLE_VELOCITY = 1e3        # rad/s or m/s; fast arms reach ~10
MAX_PLAUSIBLE_ACCELERATION = 1e5    # rad/s^2 or m/s^2; fast arms reach ~100
MAX_PLAUSIBLE_EFFORT = 1e6          # N m or N; the largest industrial joints are ~1e4 N m

# trajectory timing
MAX_TIME_FROM_START = 1e6           # s (11.6 days) for the last point of one trajectory
MAX_START_AHEAD = 1e6               # s a start_time may lie in the future
MIN_POINT_SPACING = 1e-6            # s between points, 1/1000 of a 1 kHz control period

# gains (torque space): far beyond any useful gain (a 1 kHz sampled loop goes unstable long
# before), yet gain x the largest plausible error stays ~1e15, far from float overflow
MAX_KP = 1e10                       # N m/rad
MAX_KD = 1e10                       # N m s/rad (also gravity-compensation damping)
MAX_KI = 1e10                       # N m/(rad s)
MAX_I_CLAMP = 1e12                  # N m; anything above the effort limit means "no clamp"
MAX_EFFORT_LIMIT = MAX_PLAUSIBLE_EFFORT

# payloads (~/payload, payload.*): a crane hook's load, hung from a 10 m boom
MAX_PAYLOAD_MASS = 1e4              # kg
MAX_PAYLOAD_OFFSET = 10.0           # m from the link origin to the payload's centre of mass
MAX_PAYLOAD_INERTIA = 1e4           # kg m^2, each entry of the inertia about the COM

# configuration
MAX_BANDWIDTH_HZ = 1e3              # the default-gain bandwidth; a 1 kHz loop cannot exceed it
MAX_DAMPING_RATIO = 1e2
MAX_STATE_TIMEOUT = 1e3             # s


def finite(value) -> bool:
    """True when value converts to a finite float (a time, a position from a config)."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
