"""Message builders and service calls shared by the ROS tests (no fixtures here)."""
import math

import numpy as np
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

# deep enough for a 1 kHz stream while this process is starved of CPU for seconds
RELIABLE_DEEP = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def joint_state(names, positions, velocities=None, stamp=None):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(v) for v in positions]
    if velocities is not None:
        msg.velocity = [float(v) for v in velocities]
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def shuffled_state(rng, joints, q, qd, extra=('gripper_left', 'conveyor_belt')):
    """A JointState of `joints` (values q, qd) plus unrelated joints, in a random order."""
    names = list(joints) + list(extra)
    positions = list(q) + list(rng.uniform(-1, 1, len(extra)))
    velocities = list(qd) + list(rng.uniform(-1, 1, len(extra)))
    order = rng.permutation(len(names))
    return joint_state([names[i] for i in order], [positions[i] for i in order],
                       [velocities[i] for i in order])


def _call(test_node, service_type, service_name, request, timeout=10.0):
    client = test_node.node.create_client(service_type, service_name)
    test_node.wait_for(lambda: client.service_is_ready(), timeout, f'service {service_name}')
    future = client.call_async(request)
    test_node.wait_for(future.done, timeout, f'reply of {service_name}')
    test_node.node.destroy_client(client)
    return future.result()


def set_parameters(test_node, node_name, values):
    """Set parameters of another node one by one; returns {name: SetParametersResult}.
    A value may be an rclpy Parameter where its type cannot be told from the value
    (an empty list)."""
    parameters = [(value if isinstance(value, Parameter) else Parameter(name, value=value))
                  .to_parameter_msg() for name, value in values.items()]
    response = _call(test_node, SetParameters, f'/{node_name}/set_parameters',
                     SetParameters.Request(parameters=parameters))
    return dict(zip(values, response.results))


def get_parameters(test_node, node_name, names):
    response = _call(test_node, GetParameters, f'/{node_name}/get_parameters',
                     GetParameters.Request(names=list(names)))
    return {name: Parameter.from_parameter_msg(
        _as_parameter_msg(name, value)).value for name, value in zip(names, response.values)}


def _as_parameter_msg(name, value):
    from rcl_interfaces.msg import Parameter as ParameterMsg
    return ParameterMsg(name=name, value=value)


def finite(values):
    return all(math.isfinite(v) for v in values)


def max_abs_difference(a, b):
    return float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))
