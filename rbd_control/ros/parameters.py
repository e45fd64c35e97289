"""Parameters of the rbd_controller node: names, descriptors and validation.

Validation is plain Python (value in, reason out) so the node's set-parameters
callback only has to map each rejected parameter to its reason.
"""
import math

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor

from rbd_control.control import MODES  # one list of modes for core, node and launch

SAFE_ACTIONS = ('hold', 'zero')
GAIN_FIELDS = ('p', 'd', 'i', 'i_clamp')
DEFAULT_COMMAND_TOPIC = '/effort_controller/commands'
# A gain above this is a typo, not a tuning choice; a bounded range also shows in rqt.
MAX_GAIN = 1.0e6


def _range(low, high):
    return [FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)]


def describe(description, *, read_only=False, constraints='', floating_range=None):
    return ParameterDescriptor(
        description=description,
        read_only=read_only,
        additional_constraints=constraints,
        floating_point_range=floating_range or [],
    )


def static_descriptors():
    """Descriptors for the parameters that do not depend on the joints."""
    return {
        'robot_description': describe(
            'URDF XML. Empty: take the robot_description topic (transient_local).'),
        'mode': describe(
            'Control law.', constraints='one of: ' + ', '.join(MODES)),
        'joints': describe(
            'Controlled joints, in the order of the command array. Empty: every moving '
            'joint of the URDF.', read_only=True),
        'state_timeout': describe(
            'Seconds without a valid joint state before the safe action.',
            read_only=True, floating_range=_range(0.001, 10.0)),
        'effort_scale': describe(
            'Fraction of the URDF <limit effort> the command may reach, in (0, 1].',
            read_only=True, floating_range=_range(0.0, 1.0)),
        'gravity': describe(
            'Gravity vector [x, y, z] in the root frame, m/s^2. Empty: the model default '
            '[0, 0, -9.81].', constraints='empty or 3 finite numbers'),
        'command_topic': describe(
            'Float64MultiArray effort topic (JointGroupEffortController input).',
            read_only=True),
        'safe_action': describe(
            'What to command when joint states stop.', read_only=True,
            constraints='one of: ' + ', '.join(SAFE_ACTIONS)),
        'damping': describe(
            'gravity_compensation only: damping torque -damping * qd, N m s/rad, every joint.',
            read_only=True, floating_range=_range(0.0, MAX_GAIN)),
        'allow_partial_joints_goal': describe(
            'Accept trajectories that name only some of the joints.', read_only=True),
        'publish_tuning': describe(
            'Publish ~/desired, ~/actual, ~/error, ~/feedforward, ~/feedback.',
            read_only=True),
    }


def gain_descriptor(joint, field):
    meaning = {
        'p': 'proportional gain',
        'd': 'derivative gain',
        'i': 'integral gain',
        'i_clamp': 'bound on the integral term (effort units)',
    }[field]
    return describe(f'{meaning} of joint {joint}', floating_range=_range(0.0, MAX_GAIN))


def gain_parameter_name(joint, field):
    return f'gains.{joint}.{field}'


def parse_gain_parameter_name(name):
    """'gains.<joint>.<field>' -> (joint, field); None for any other name."""
    if not name.startswith('gains.'):
        return None
    joint, _, field = name[len('gains.'):].rpartition('.')
    if not joint or field not in GAIN_FIELDS:
        return None
    return joint, field


def _finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate(name, value, joints):
    """Why `value` is not acceptable for parameter `name`, or None when it is.

    `joints` is the current joint list (gain parameters must name one of them).
    """
    if name == 'mode':
        return None if value in MODES else f"unknown mode '{value}'; expected one of {', '.join(MODES)}"
    if name == 'safe_action':
        return None if value in SAFE_ACTIONS else (
            f"unknown safe_action '{value}'; expected one of {', '.join(SAFE_ACTIONS)}")
    if name == 'gravity':
        values = list(value or [])
        if len(values) not in (0, 3):
            return f'gravity needs 3 values [x, y, z] (or none), got {len(values)}'
        if not all(_finite_number(v) for v in values):
            return 'gravity values must be finite numbers'
        return None
    if name == 'joints':
        names = list(value or [])
        if len(set(names)) != len(names):
            return 'joints lists a joint twice'
        if any(not n for n in names):
            return 'joints contains an empty name'
        return None
    if name == 'state_timeout':
        return None if _finite_number(value) and value > 0 else 'state_timeout must be > 0 seconds'
    if name == 'effort_scale':
        return None if _finite_number(value) and 0 < value <= 1 else 'effort_scale must be in (0, 1]'
    if name == 'damping':
        return None if _finite_number(value) and value >= 0 else 'damping must be a finite number >= 0'
    if name == 'command_topic':
        return None if value else 'command_topic must not be empty'
    gain = parse_gain_parameter_name(name)
    if gain is not None:
        joint, _ = gain
        if joints and joint not in joints:
            return f"gains for '{joint}', which is not in joints {list(joints)}"
        if not _finite_number(value) or value < 0:
            return f'{name} must be a finite number >= 0, got {value}'
        return None
    return None
