"""rbd_controller's parameter callbacks: a set is validated (the table's checks, the mode's
needs, a new description or gravity only once its model is built and in use, a Cartesian
stiffness only once the running law took it), then applied
(mode, gains, the Cartesian stiffness, friction and payload, contact settings); and the gains
the core derived from the model are shown as the gains.<joint>.* parameters' values.

Handed by the node (node.py): the ControllerContext (controller, lock, source, joints,
value, control_time), the ModelCorrections, and `use_model(candidate, source, gravity)`, which
puts a parsed model in use.
"""
from rclpy.parameter import Parameter
from rcl_interfaces.msg import SetParametersResult

from rbd_control.control.config import contact_from_parameters
from rbd_control.control.errors import ConfigError
from rbd_control.control.laws.loop_design import describe_softened
from rbd_control.control.model.source import ModelRefused
from rbd_control.params.controller import CONTROLLER_PARAMETERS, GAIN_FIELDS, gain_field, gain_name
from rbd_control.ros.controller.cartesian import mode_refusal
from rbd_control.ros.parameter_binding import ConfigurationError, declare_per_joint, reasons

__all__ = ['PARAMETER_SOURCE', 'ParameterCallbacks']

TABLE = CONTROLLER_PARAMETERS
PARAMETER_SOURCE = 'the robot_description parameter'


class ParameterCallbacks:

    def __init__(self, node, context, corrections, use_model):
        self.node = node                # declares the per-joint parameters, shows the gains
        self._context = context
        self._corrections = corrections
        self._use_model = use_model
        self._filled = set()            # gain parameters showing a model-derived default
        self._filling = False           # the node itself is setting those
        self._softened = ()             # what the loop design softened, as last reported

    def validate(self, parameters):
        """Refuse a set with the reasons, or accept it; a new description or gravity is
        accepted only once its model is built, and is then already in use."""
        context = self._context
        found = reasons(TABLE, parameters, context.joints,
                        {'robot_description': lambda xml: None})
        by_name = {p.name: p.value for p in parameters}
        found += filter(None, [mode_refusal(by_name, context.value('ee_link'))])
        if not found:
            found += filter(None, [self._corrections.refusal(context.controller, by_name)])
        candidate = None
        if not found and ('robot_description' in by_name or 'gravity' in by_name):
            try:
                candidate = self._model_candidate(by_name)
            except ModelRefused as error:
                name = 'robot_description' if 'robot_description' in by_name else 'gravity'
                found.append(f'{name}: {error}')
        if not found and 'cartesian_stiffness' in by_name:
            found += filter(None, [self._stiffness_refusal(by_name['cartesian_stiffness'])])
        if found:
            return SetParametersResult(successful=False, reason='; '.join(found))
        if 'robot_description' in by_name:
            context.source.parameter = by_name['robot_description']
        if candidate is not None:
            source = PARAMETER_SOURCE if 'robot_description' in by_name else 'a gravity change'
            with context.lock:
                self._use_model(candidate, source, by_name.get('gravity'))
        elif 'gravity' in by_name:
            context.source.gravity = tuple(by_name['gravity'] or ())
        return SetParametersResult(successful=True)

    def _stiffness_refusal(self, stiffness):
        """Why the running law refuses this cartesian_stiffness (above what the declared loop
        holds at the measured pose: CartesianImpedance.set_stiffness), or None. It is set here,
        so that the refusal is the set's; apply sets it again."""
        controller = self._context.controller
        if controller is None:
            return None
        try:
            with self._context.lock:
                controller.set_cartesian_stiffness(list(stiffness))
        except ConfigError as error:
            return str(error)
        return None

    def _model_candidate(self, by_name):
        """The model a description and/or gravity set asks for; None when nothing changes."""
        source = self._context.source
        gravity = by_name.get('gravity')
        xml = by_name.get('robot_description')
        if xml and not source.unchanged(xml):
            return source.parse(xml, PARAMETER_SOURCE, gravity)
        return None if gravity is None else source.regravitate(gravity)

    def apply(self, parameters):
        try:
            with self._context.lock:
                self._apply_accepted(parameters)
        except Exception as error:   # validated already; never let the service thread die
            self._context.logger.error(
                f'could not apply {[p.name for p in parameters]}: {type(error).__name__}: {error}')

    def _apply_accepted(self, parameters):
        context = self._context
        controller = context.controller
        gains = {core: {} for core in GAIN_FIELDS.values()}
        for parameter in parameters:
            if parameter.name == 'mode' and controller is not None:
                controller.set_mode(parameter.value, context.control_time())
            elif parameter.name in ('robot_description', 'gravity') and controller is not None:
                self.show_gains()
            elif parameter.name == 'cartesian_stiffness' and controller is not None:
                controller.set_cartesian_stiffness(list(parameter.value))
                self._report_softened(controller)
            elif not self._filling and parameter.value is not None:
                gain = gain_field(parameter.name)
                if gain is not None:
                    self._filled.discard(parameter.name)
                    joint, core = gain
                    gains[core][joint] = parameter.value
        if controller is None:
            return
        if any(gains.values()):
            controller.set_gains(**{core: v or None for core, v in gains.items()})
        names = [p.name for p in parameters]
        if any(n.startswith('contact.') for n in names):
            controller.set_contact(contact_from_parameters(context.value))
        if self._corrections.concerns(names):
            self._corrections.apply(controller, names)
            if any(name.startswith('payload.') for name in names):
                self.show_derived_gains()     # a payload moves the default gains

    def _report_softened(self, controller):
        """Requested -> applied, once per change (Controller.softened: the Cartesian task and
        nullspace stiffness the loop design bounds): a warning while cartesian_impedance runs,
        where it acts, else information."""
        softened = controller.softened
        if softened == self._softened:
            return
        logger = self._context.logger
        # Two call sites: rclpy refuses one call site logging at two severities.
        if softened and controller.mode == 'cartesian_impedance':
            logger.warning(describe_softened(softened))
        elif softened:
            logger.info(describe_softened(softened))
        elif self._softened:
            logger.info('the loop design softens nothing that was asked')
        self._softened = softened

    def gain_values(self, joints, names=None):
        """{kp: {joint: value}, ...} of the gain parameters of `joints` that have a value
        (only those in `names`, when given)."""
        out = {}
        for field, core in GAIN_FIELDS.items():
            values = {j: self._context.value(gain_name(j, field)) for j in joints
                      if names is None or gain_name(j, field) in names}
            out[core] = {j: v for j, v in values.items() if v is not None} or None
        return out

    def given_gain_values(self, joints):
        """gain_values of the parameters a user gave (not those showing a derived default)."""
        names = {gain_name(j, field) for j in joints for field in GAIN_FIELDS} - self._filled
        return self.gain_values(joints, names)

    def show_gains(self):
        """Declare the gains of new joints (applying values YAML/launch gave them), give the
        controller the friction and payload, and show the model-derived defaults the core
        chose (payload included) as parameter values."""
        controller = self._context.controller
        joints = controller.joint_names
        try:
            declared = declare_per_joint(self.node, TABLE, joints)
        except ConfigurationError as error:
            self._context.logger.error(f'gain parameter refused: {error}')
            return
        # (a value shown during the declarations is the core's, not given)
        given = self.gain_values(joints, set(declared) - self._filled)
        if any(given.values()):
            controller.set_gains(**given)
        self._corrections.apply(controller)
        self.show_derived_gains()

    def show_derived_gains(self):
        """Show the gains the core derived (no value given, or one shown before) as the
        gains.<joint>.* parameters' values, in one set; and say what the loop design softens
        of what was asked, whenever that changes (a model, a payload)."""
        controller = self._context.controller
        self._report_softened(controller)
        fill = []
        for field, core in GAIN_FIELDS.items():
            for joint, gain in zip(controller.joint_names, getattr(controller.gains, core)):
                name = gain_name(joint, field)
                if name in self._filled or self._context.value(name) is None:
                    fill.append(Parameter(name, Parameter.Type.DOUBLE, float(gain)))
        self._filled.update(p.name for p in fill)
        self._filling = True
        try:
            self.node.set_parameters(fill)
        finally:
            self._filling = False
