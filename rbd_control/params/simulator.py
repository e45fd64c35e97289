"""The rbd_mujoco_sim node's parameters, defined once (see params/table.py).

All are read-only: each shapes the model or the wiring; restart the node to change one.
"""
from rbd_control.params.controller import DEFAULT_COMMAND_TOPIC
from rbd_control.params.table import (Parameter, ParameterTable, finite_number,
                                      finite_numbers_of_length, not_empty, positive)

__all__ = ["ENGINES", "SIM_PARAMETERS"]

ENGINES = ("mujoco", "dart")   # sim/simulator.py, sim/dart_plant.py


def _finite_numbers(values):
    return None if all(finite_number(v) for v in values or []) else \
        "initial_positions must be finite numbers"


def _check_box(values):
    values = list(values or [])
    if values and (len(values) != 6 or not all(finite_number(v) for v in values)
                   or min(values[3:]) <= 0):
        return ("obstacle.box needs [x, y, z, half_x, half_y, half_z] with positive halves, "
                f"got {values}")
    return None


SIM_PARAMETERS = ParameterTable([
    Parameter("engine", "string", "mujoco",
              "Physics engine: mujoco, or dart (Gazebo's default engine; pip install "
              "rbd_control[dart]).", choices=ENGINES),
    Parameter("robot_description", "string", "",
              "URDF XML; empty: use the /robot_description topic."),
    Parameter("plant_description", "string", "",
              "URDF XML of the simulated robot when it is not the controller's description (a "
              "robot whose URDF is off); set: robot_description and the topic are ignored."),
    Parameter("joints", "string_array", None,
              "Command order of the effort topic; empty: all joints."),
    Parameter("initial_positions", "double_array", None,
              "Start pose, one value per entry of `joints`; empty: the zero pose.",
              check=_finite_numbers, constraint="finite numbers"),
    Parameter("timestep", "double", 0.001, "Physics step, seconds.", **positive(1.0)),
    Parameter("lockstep", "bool", False, "One physics step per command instead of real time."),
    Parameter("lockstep_kick_period", "double", 0.5,
              "Re-publish an unanswered state after this wall time, seconds.", **positive(60.0)),
    Parameter("lockstep_resync_window", "double", 0.1,
              "Lockstep: absorb duplicate answers this long, seconds.", **positive(60.0)),
    Parameter("real_time_factor", "double", 1.0, "Real time: sim seconds per wall second.",
              **positive(1000.0)),
    Parameter("wait_for_first_command", "bool", True,
              "Real time: hold physics until a command arrives."),
    Parameter("joint_damping", "bool", True, "Apply URDF <dynamics damping friction>."),
    Parameter("stiff_friction", "bool", True,
              "URDF <dynamics friction> at full strength from ~0.03 rad/s (Coulomb), not "
              "MuJoCo's soft frictionloss (simulator.py), which gives a light joint a fraction of "
              "it: the controller adds the URDF's friction to its feedforward "
              "(use_urdf_friction), so the plant must have it too."),
    Parameter("payload.link", "string", "",
              "Link carrying a payload the plant's URDF does not have. Empty: no payload."),
    Parameter("payload.mass", "double", 0.0, "Payload mass, kg.", low=0.0, high=1.0e4),
    Parameter("payload.com", "double_array", None,
              "Payload centre of mass [x, y, z] in the link frame, m. Empty: the link origin.",
              check=finite_numbers_of_length("payload.com", (0, 3)),
              constraint="empty or 3 finite numbers"),
    Parameter("payload.inertia", "double_array", None,
              "Payload principal inertia about its centre of mass [ixx, iyy, izz], kg m^2. "
              "Empty: 1e-4 each.", check=finite_numbers_of_length("payload.inertia", (0, 3)),
              constraint="empty or 3 finite numbers"),
    Parameter("obstacle.box", "double_array", None,
              "A box fixed in the world [x, y, z, half_x, half_y, half_z], m, that a sphere on "
              "obstacle.probe_link can hit (contact tests, mujoco_model.Obstacle). Empty: none.",
              check=_check_box, constraint="empty, or 3 finite numbers and 3 positive ones"),
    Parameter("obstacle.probe_link", "string", "",
              "Link carrying the massless probe sphere that touches obstacle.box "
              "(at its origin)."),
    Parameter("obstacle.probe_radius", "double", 0.03, "Probe sphere radius, m.",
              **positive(1.0)),
    Parameter("hand.link", "string", "",
              "The link a simulated hand holds (a teleoperation leader moved by hand; "
              "sim/hand.py): its target pose comes on ~/hand_target (PoseStamped, world). "
              "Empty: no hand."),
    Parameter("hand.stiffness", "double", 400.0, "The hand's spring to its target, N/m.",
              low=0.0, high=1.0e5),
    Parameter("hand.damping", "double", 40.0, "The hand's damping on the link's velocity, "
              "N s/m.", low=0.0, high=1.0e4),
    Parameter("hand.grip", "double", 5.0, "The hand's grip on the target orientation, N m/rad.",
              low=0.0, high=1.0e4),
    Parameter("hand.grip_damping", "double", 0.5, "The grip's damping on the link's angular "
              "velocity, N m s/rad.", low=0.0, high=1.0e3),
    Parameter("clamp_effort", "bool", True, "Saturate commands at URDF <limit effort>."),
    Parameter("plant_compensates_gravity", "bool", False,
              "The plant adds the gravity torque of its pose to every command, as a Franka or a "
              "KUKA FRI in torque mode does: run rbd_controller with "
              "robot_compensates_gravity:=true against it."),
    Parameter("publish_clock", "bool", True,
              "Publish /clock (sim time; absolute, rbd_bringup --namespace remaps it)."),
    Parameter("publish_latency", "bool", False, "Publish ~/command_latency."),
    Parameter("command_topic", "string", DEFAULT_COMMAND_TOPIC,
              "Effort command topic; relative: in the node's namespace.",
              check=not_empty("command_topic"), constraint="not empty"),
    Parameter("state_topic", "string", "joint_states",
              "Joint state topic; relative: in the node's namespace.",
              check=not_empty("state_topic"), constraint="not empty"),
])
