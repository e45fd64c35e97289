"""The rbd_controller node's contact.* parameters (control/contact/), one group of the
controller's table (params/controller.py splices them in), with the check of their levels.
"""
from rbd_control.params.table import Parameter, finite_number, positive

__all__ = ["CONTACT_PARAMETERS", "CONTACT_REACTIONS", "CONTACT_LEVELS",
           "contact_levels_reason"]

# what the controller does on a collision (control/contact/monitor.py)
CONTACT_REACTIONS = ("none", "hold", "float", "reflex")
# the four levels of a contact threshold set, in libfranka's setCollisionBehavior order
CONTACT_LEVELS = ("contact while accelerating", "collision while accelerating",
                  "contact at constant velocity", "collision at constant velocity")


def contact_levels_reason(name, levels, allow_vectors=False):
    """None, or why `levels` is not 4 contact/collision levels: each finite and >= 0 (0: off;
    with allow_vectors also a list of such, one per joint), contact in (0, collision] wherever
    the collision level is on."""
    try:
        levels = list(levels if levels is not None else [])
    except TypeError:
        return f"{name} needs 4 levels {CONTACT_LEVELS}, got {levels!r}"
    if len(levels) != 4:
        return f"{name} needs 4 levels {CONTACT_LEVELS}, got {len(levels)}"
    flat = []
    for label, level in zip(CONTACT_LEVELS, levels):
        values = list(level) if allow_vectors and isinstance(level, (list, tuple)) else [level]
        if not values or not all(finite_number(v) and v >= 0.0 for v in values):
            return f"{name}: the {label} level must be finite and >= 0, got {level!r}"
        flat.append(values)
    for contact, collision, phase in ((0, 1, "while accelerating"),
                                      (2, 3, "at constant velocity")):
        lower_values, upper_values = flat[contact], flat[collision]
        if len(lower_values) == 1:
            lower_values = lower_values * len(upper_values)
        for lower, upper in zip(lower_values, upper_values):
            if upper > 0.0 and not 0.0 < lower <= upper:
                return (f"{name}: the contact level {lower} must be in (0, {upper}] (the "
                        f"collision level) {phase}: a collision is a contact above the upper "
                        f"level")
    return None


def _levels(name):
    return lambda value: contact_levels_reason(name, value)


CONTACT_PARAMETERS = [
    Parameter("contact.enabled", "bool", False,
              "Run the external-torque observer, the wrench estimate and collision detection "
              "on every state, in every mode (control/contact/)."),
    Parameter("contact.observer_gain", "double", 200.0,
              "K_O of the momentum observer, 1/s: the residual follows the external torque "
              "with time constant 1/K_O (5 ms at 200). Higher: faster detection, more of the "
              "velocity noise in the residual.", **positive(1000.0), read_only=False),
    Parameter("contact.torque_thresholds", "double_array", [10.0, 20.0, 5.0, 10.0],
              "|tau_ext| levels of every joint, N m: [contact, collision] while the desired "
              "motion accelerates, then [contact, collision] at constant velocity (libfranka's "
              "order). Contact flags clear with the contact; a collision latches until "
              "~/reset_collision. 0: level off. Margins: the exact model's free-motion residual "
              "peaks at 0.23 N m in lock step (fast goals at 95 % of the velocity limits); in "
              "real time the command reaches the plant late and the residual carries that "
              "(fast goals, 40 runs: medians 1.5-3 N m, up to 42.5 N m with a command 6 "
              "states late; bench/contact_realtime.py) unless the observer gets the torque "
              "in force: contact.use_measured_effort (no flag in 40 runs, at most 4.1 N m, "
              "0.9 below the lowest level) or contact.command_delay.",
              check=_levels("contact.torque_thresholds"),
              constraint="4 levels >= 0, contact in (0, collision]", read_only=False),
    Parameter("contact.force_thresholds", "double_array", [0.0, 0.0, 0.0, 0.0],
              "|F| levels of each force axis of the estimated wrench, N, same order as "
              "contact.torque_thresholds. 0: level off (the default: joint torques are the "
              "reliable signal).", check=_levels("contact.force_thresholds"),
              constraint="4 levels >= 0, contact in (0, collision]", read_only=False),
    Parameter("contact.moment_thresholds", "double_array", [0.0, 0.0, 0.0, 0.0],
              "|M| levels of each moment axis of the estimated wrench, N m, same order. 0: off.",
              check=_levels("contact.moment_thresholds"),
              constraint="4 levels >= 0, contact in (0, collision]", read_only=False),
    Parameter("contact.acceleration_threshold", "double", 0.5,
              "rad/s^2 (m/s^2): while the desired joint acceleration (2-norm) exceeds this, "
              "the 'accelerating' levels apply.", low=0.0, high=1.0e6, read_only=False),
    Parameter("contact.reaction", "string", "hold",
              "On a collision: none (report only), hold (abort the motion, hold the pose), "
              "float (abort, gravity compensation until reset), reflex (abort, tau = g + "
              "K_R r for contact.reflex_duration, then hold).", choices=CONTACT_REACTIONS,
              read_only=False),
    Parameter("contact.reflex_gain", "double", 1.0,
              "K_R of the reflex reaction (dimensionless: times the residual, N m).",
              low=0.0, high=10.0, read_only=False),
    Parameter("contact.reflex_duration", "double", 0.1,
              "Seconds of reflex before holding.", low=0.0, high=5.0, read_only=False),
    Parameter("contact.wrench_link", "string", "",
              "Link whose origin the external wrench is estimated at (world axes). Empty: "
              "ee_link, else the URDF's last link."),
    Parameter("contact.wrench_damping", "double", 0.05,
              "lambda of the damped least squares F = (J J^T + lambda^2 1)^-1 J r.",
              **positive(10.0), read_only=False),
    Parameter("contact.command_delay", "double", 0.0,
              "s from a state to its command acting on the joints, as the observer takes it: "
              "the torque over a step is the commands sent, each in force from its state's "
              "time plus this. 0: from the state on (lock step). A plant that applies a command "
              "a step or more late (a real-time simulator, a driver writing at its next cycle) "
              "otherwise leaves the delayed change of the command in the residual: about "
              "delay x dtau/dt (2.6 N m per ms on the default arm's fast goals).",
              low=0.0, high=0.05, read_only=False),
    Parameter("contact.use_measured_effort", "bool", False,
              "Take the torque of the observer from joint_states.effort (a robot that "
              "measures it, rbd_mujoco_sim: the effort it applied) instead of the clamped "
              "command the controller sent; a state without one effort per name is then "
              "refused. In real time the torque in force, however late the command came: the "
              "residual of fast free motion 4.1 N m at most where the command gave 42.5.",
              read_only=False),
]
