"""What the robot has that its URDF does not: joint friction and a payload (rbd_identify finds
both), from the friction.* and payload.* parameters and the ~/payload topic.

~/payload: geometry_msgs/InertiaStamped; header.frame_id names the link, inertia.m the mass
(0 removes the payload), inertia.com the centre of mass and ixx..izz the inertia about it, in
the link frame. The last of the topic and the payload.* parameters wins; a new model gets the
parameters' payload (payload.link empty: none). A refused value is logged and changes nothing.
"""
import numpy as np
from geometry_msgs.msg import InertiaStamped

from rbd_control.control.errors import ConfigError
from rbd_control.params.controller import friction_name

PREFIXES = ('friction.', 'payload.')


def inertia_matrix(values):
    """[ixx, iyy, izz] or [ixx, ixy, ixz, iyy, iyz, izz] -> 3x3 (None when empty)."""
    values = list(values or [])
    if not values:
        return None
    if len(values) == 3:
        return np.diag(values)
    xx, xy, xz, yy, yz, zz = values
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


class ModelCorrections:
    """The friction.* and payload.* parameters and ~/payload of one ControllerNode; the
    ControllerContext gives the parameter values, the lock and the throttled log lines."""

    def __init__(self, node, context, payload_changed):
        self._context = context
        self._value = context.value            # parameter name -> value (None when unset)
        self._payload_changed = payload_changed   # after ~/payload: show the new gains
        node.create_subscription(InertiaStamped, '~/payload', self._on_payload, 10)
        self.controller = None

    @staticmethod
    def concerns(names) -> bool:
        return any(name.startswith(PREFIXES) for name in names)

    def apply(self, controller, names=None):
        """Give `controller` the friction and/or payload the parameters hold: both after a new
        model (names None), else the groups the changed parameter `names` belong to."""
        self.controller = controller
        value = self._value
        if names is None or any(n.startswith('friction.') for n in names):
            friction = {joint: {field: value(friction_name(joint, field)) or 0.0
                                for field in ('viscous', 'coulomb')}
                        for joint in controller.model.joint_names}
            self._try('friction', lambda: controller.set_friction(friction,
                                                                  value('friction.epsilon')))
        if names is None or any(n.startswith('payload.') for n in names):
            self._try('payload', lambda: controller.set_payload(*self._payload(value)))

    @staticmethod
    def _payload(value):
        """(link, mass, com, inertia) of the payload.* parameters (value: name -> value)."""
        return (value('payload.link') or None, value('payload.mass'),
                list(value('payload.com') or [0.0, 0.0, 0.0]),
                inertia_matrix(value('payload.inertia')))

    def refusal(self, controller, by_name):
        """Why setting the payload.* parameters in `by_name` (the others as they are) would
        give a payload the controller refuses, or None: a set succeeds only when its payload
        is the one in use."""
        if controller is None or not any(n.startswith('payload.') for n in by_name):
            return None
        try:
            controller.check_payload(*self._payload(
                lambda name: by_name[name] if name in by_name else self._value(name)))
        except ConfigError as error:
            return str(error)
        return None

    def _on_payload(self, msg):
        if self.controller is None:
            self._context.warnings.warn('payload_no_model',
                                        '~/payload ignored: no robot model yet')
            return
        i = msg.inertia
        inertia = inertia_matrix([i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz])
        with self._context.lock:   # the state thread must not see a half-changed model or gains
            carried = self._try('~/payload', lambda: self.controller.set_payload(
                msg.header.frame_id, i.m, [i.com.x, i.com.y, i.com.z], inertia))
            if carried:
                self._payload_changed()
        if carried:
            self._context.logger.info(
                f'payload {i.m:.4g} kg on {msg.header.frame_id!r} from ~/payload')

    def _try(self, what, action) -> bool:
        """Refusals are logged once per period with a count (a stream of bad ~/payload
        messages must not become a stream of log lines)."""
        try:
            action()
            return True
        except ConfigError as error:
            self._context.errors.warn(f'{what}_refused', f'{what} refused: {error}')
            return False
