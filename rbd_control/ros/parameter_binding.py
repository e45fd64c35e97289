"""A ParameterTable (rbd_control/params/table.py) as ROS 2 parameters.

Derives a node's declarations and ParameterDescriptors (ranges, read_only,
additional_constraints) from its table, checks the start-up values, and validates sets.
Both rbd_controller and rbd_mujoco_sim use it, each with its own table.
"""
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.parameter import Parameter as RosParameter

ROS_TYPES = {
    'bool': RosParameter.Type.BOOL,
    'integer': RosParameter.Type.INTEGER,
    'double': RosParameter.Type.DOUBLE,
    'string': RosParameter.Type.STRING,
    'bool_array': RosParameter.Type.BOOL_ARRAY,
    'integer_array': RosParameter.Type.INTEGER_ARRAY,
    'double_array': RosParameter.Type.DOUBLE_ARRAY,
    'string_array': RosParameter.Type.STRING_ARRAY,
}
UNBOUNDED = 1.0e300


class ConfigurationError(RuntimeError):
    """A start-up parameter is unusable; the node cannot start."""


def descriptor(parameter, name=None):
    """The ParameterDescriptor of one table entry (`name`: a per-joint entry's concrete name)."""
    ros_type = ROS_TYPES[parameter.type]
    result = ParameterDescriptor(
        name=name or parameter.name, type=ros_type.value, description=parameter.description,
        read_only=parameter.read_only, additional_constraints=parameter.constraints_text())
    if parameter.low is not None or parameter.high is not None:
        low = -UNBOUNDED if parameter.low is None else parameter.low
        high = UNBOUNDED if parameter.high is None else parameter.high
        if parameter.type == 'double':
            result.floating_point_range = [
                FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)]
        elif parameter.type == 'integer':
            result.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
    return result


def _declare(node, parameter, name):
    default = parameter.default
    value = ROS_TYPES[parameter.type] if default is None else default
    node.declare_parameter(name, value, descriptor(parameter, name))


def declare(node, table):
    """Declare every fixed parameter of `table`, then check the start-up values (they come
    from YAML/launch before any set-callback exists). Raises ConfigurationError."""
    for parameter in table.fixed:
        _declare(node, parameter, parameter.name)
    for parameter in table.fixed:
        current = value(node, parameter.name)
        reason = None if current is None else parameter.validate(current)
        if reason:
            raise ConfigurationError(f'parameter {parameter.name}: {reason}')


def declare_per_joint(node, table, joints):
    """Declare the per-joint parameters of `joints` not declared yet (a gain declared
    without a value stays unset). Returns the names declared. Raises ConfigurationError
    for a bad value from YAML/launch."""
    declared = []
    for joint in joints:
        for parameter in table.per_joint:
            name = parameter.for_joint(joint)
            if node.has_parameter(name):
                continue
            _declare(node, parameter, name)
            declared.append(name)
            current = value(node, name)
            reason = None if current is None else parameter.validate(current, name)
            if reason:
                raise ConfigurationError(reason)
    return declared


def value(node, name):
    """A parameter's value; None while it is declared without one (or not declared)."""
    parameter = node.get_parameter_or(name)
    return None if parameter is None else parameter.value


def reasons(table, parameters, joints, special=None):
    """'name: reason' for every parameter of a set that the table refuses. `joints`: a set
    of the joints per-joint parameters may name; `special`: {name: check} for parameters
    whose check needs the node (e.g. robot_description builds the model)."""
    special = special or {}
    found = []
    for parameter in parameters:
        if parameter.value is None:
            continue    # declared without a value (a gain the core will fill)
        check = special.get(parameter.name)
        reason = check(parameter.value) if check else table.validate(
            parameter.name, parameter.value, joints)
        if reason:
            found.append(f'{parameter.name}: {reason}')
    return found
