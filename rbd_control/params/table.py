"""A declarative parameter table: every parameter of a node defined once.

In the spirit of generate_parameter_library (ros2_controllers' JTC writes its parameters in
joint_trajectory_controller_parameters.yaml): each Parameter holds name, type, default,
description, whether it is read-only (start-up) or runtime, and its validation. From one
table the ROS adapter derives declarations and ParameterDescriptors
(rbd_control/ros/parameter_binding.py), the set-callback validates with `ParameterTable.validate`,
ControllerConfig takes its defaults and checks from it and is read from it (a field named like a
parameter: `backing`, `read`, `refusal`), and `row` / `markdown` give the documentation's
parameter reference (doc/reference/parameters.md, built from the tables).

A per-joint parameter is a template such as 'gains.<joint>.p' (JTC: gains.__map_joints.p):
one entry stands for one parameter per controlled joint. Looking a name up costs one dict
lookup plus one test per template, whatever the number of joints.

No rclpy here: the core, tests and the documentation generator import this module.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable, Optional, Sequence

__all__ = ["JOINT", "Parameter", "ParameterTable", "finite_number", "markdown", "not_empty",
           "positive"]

JOINT = "<joint>"      # the placeholder of per-joint templates
TYPES = ("bool", "integer", "double", "string", "bool_array", "integer_array", "double_array",
         "string_array")


def finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def positive(high: float) -> dict:
    """Bounds (0, high] for a Parameter: Parameter(..., **positive(10.0))."""
    return dict(low=0.0, high=high, low_open=True)


def not_empty(name: str):
    """A `check` refusing an empty value."""
    return lambda value: None if value else f"{name} must not be empty"


@dataclass(frozen=True)
class Parameter:
    """One parameter (or one per joint when `name` holds JOINT).

    default None: declared without a value (e.g. a gain the core derives from the model).
    low / high: numeric bounds; low_open / high_open make them exclusive.
    choices: the allowed values of a string.
    check: value -> reason (str) or None, for anything else; `constraint` says it in words.
    parse: value -> the value as the core takes it (e.g. 'joint=value' entries -> a dict),
    where `core_value`'s rule (arrays as tuples) does not fit.
    """

    name: str
    type: str
    default: Any
    description: str
    read_only: bool = True
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False
    choices: Sequence[str] = ()
    check: Optional[Callable[[Any], Optional[str]]] = None
    constraint: str = ""
    # the value as the core takes it, when not as core_value's default rule says
    parse: Optional[Callable[[Any], Any]] = None

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name}: unknown type {self.type!r}")

    @property
    def per_joint(self) -> bool:
        return JOINT in self.name

    def for_joint(self, joint: str) -> str:
        return self.name.replace(JOINT, joint)

    def constraints_text(self) -> str:
        """The validation in words (ParameterDescriptor.additional_constraints, the docs)."""
        parts = []
        if self.choices:
            parts.append("one of: " + ", ".join(self.choices))
        if self.low is not None or self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            low = "-inf" if self.low is None else f"{self.low:g}"
            high = "inf" if self.high is None else f"{self.high:g}"
            parts.append(f"in {left}{low}, {high}{right}")
        if self.constraint:
            parts.append(self.constraint)
        return "; ".join(parts)

    def validate(self, value, name: Optional[str] = None) -> Optional[str]:
        """Why `value` is not acceptable, or None; `name` is the concrete name of a per-joint
        parameter. Types are enforced by the middleware (rclpy refuses a value of another
        type); this checks what types cannot say."""
        name = name or self.name
        if self.choices and value not in self.choices:
            return f"unknown {name} '{value}'; expected one of {', '.join(self.choices)}"
        if self.type in ("double", "integer") and (self.low is not None or self.high is not None):
            if not finite_number(value) or not self._in_range(value):
                return f"{name} must be a finite number {self.constraints_text()}, got {value!r}"
        return self.check(value) if self.check is not None else None

    def core_value(self, value):
        """`value` as the core takes it (ControllerConfig and its groups): `parse(value)` when
        the entry has a parse, an array as a tuple (None when unset or empty), the rest as
        it is."""
        if self.parse is not None:
            return self.parse(value)
        if self.type.endswith("_array"):
            return tuple(value or ()) or None
        return value

    def _in_range(self, value) -> bool:
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return not (self.high is not None
                    and (value > self.high or (self.high_open and value == self.high)))


class ParameterTable:
    """The parameters of one node, looked up by name or by per-joint template."""

    def __init__(self, parameters: Sequence[Parameter]):
        self.parameters = tuple(parameters)
        self._fixed = {p.name: p for p in self.parameters if not p.per_joint}
        # template -> (prefix, suffix) around the joint name
        self._templates = [(p, *p.name.split(JOINT)) for p in self.parameters if p.per_joint]
        if len(self._fixed) + len(self._templates) != len(self.parameters):
            raise ValueError("a parameter is defined twice")

    def __iter__(self):
        return iter(self.parameters)

    @property
    def fixed(self) -> tuple:
        """The parameters that do not depend on the joints."""
        return tuple(self._fixed.values())

    @property
    def per_joint(self) -> tuple:
        return tuple(p for p, _, _ in self._templates)

    def __getitem__(self, name: str) -> Parameter:
        return self._fixed[name]

    def default(self, name: str):
        return self._fixed[name].default

    def core_default(self, name: str):
        """The default as the core takes it (Parameter.core_value): a config field's default."""
        parameter = self._fixed[name]
        return parameter.core_value(parameter.default)

    def backing(self, config, group: str = ""):
        """(field name, Parameter) for each field of the dataclass `config` (a class or an
        instance) that is a parameter of this table: the parameter named like the field or,
        in a group, `<group>.<field>` (the contact.* parameters and ContactConfig)."""
        prefix = f"{group}." if group else ""
        return [(f.name, self._fixed[prefix + f.name]) for f in fields(config)
                if prefix + f.name in self._fixed]

    def read(self, value: Callable[[str], Any], config, group: str = "") -> dict:
        """{field: value} of the dataclass `config`'s fields that are parameters (`backing`),
        each as the core takes it; value(name) gives a parameter's current value."""
        return {name: parameter.core_value(value(parameter.name))
                for name, parameter in self.backing(config, group)}

    def refusal(self, config, group: str = "", skip=()) -> Optional[str]:
        """Why the dataclass instance `config` holds a value its parameter refuses (the
        first such field, by the parameter's checks), or None; `skip`: fields checked
        elsewhere."""
        for name, parameter in self.backing(config, group):
            if name not in skip:
                reason = parameter.validate(getattr(config, name))
                if reason:
                    return reason
        return None

    def lookup(self, name: str):
        """(Parameter, joint or None) for a concrete name; None for a name not in the table."""
        parameter = self._fixed.get(name)
        if parameter is not None:
            return parameter, None
        for template, prefix, suffix in self._templates:
            if name.startswith(prefix) and name.endswith(suffix) \
                    and len(name) > len(prefix) + len(suffix):
                return template, name[len(prefix):len(name) - len(suffix)]
        return None

    def validate(self, name: str, value, joints=None) -> Optional[str]:
        """Why `value` is not acceptable for parameter `name`, or None. A per-joint name must
        name one of `joints` (a set, or None to accept any joint)."""
        found = self.lookup(name)
        if found is None:
            return None
        parameter, joint = found
        if joint is not None and joints is not None and joint not in joints:
            return f"{name} is for '{joint}', which is not a controlled joint"
        return parameter.validate(value, name)


COLUMNS = ("parameter", "type", "default", "changeable", "meaning")


def row(p: Parameter) -> tuple:
    """One parameter as the documentation shows it, in COLUMNS order, as plain text; the
    default is None when unset (Markdown and the Sphinx page format it each their way)."""
    default = None if p.default is None else repr(p.default)
    when = "start-up" if p.read_only else "runtime"
    meaning = p.description + (f" ({p.constraints_text()})" if p.constraints_text() else "")
    return p.name, p.type, default, when, meaning


def markdown(table: ParameterTable, title: str) -> str:
    """A parameter list in Markdown: one row per table entry."""
    lines = [f"#### {title}", "", "| " + " | ".join(COLUMNS) + " |", "|---|---|---|---|---|"]
    for p in table:
        name, kind, default, when, meaning = row(p)
        default = "unset" if default is None else f"`{default}`"
        meaning = meaning.replace("<", "&lt;").replace("|", "\\|")
        lines.append(f"| `{name}` | {kind} | {default} | {when} | {meaning} |")
    return "\n".join(lines) + "\n"


def finite_numbers_of_length(name, lengths):
    """A check: a list of finite numbers whose length is one of `lengths`."""
    def check(value):
        values = list(value or [])
        if len(values) not in lengths:
            return f"{name} needs {' or '.join(map(str, lengths))} values, got {len(values)}"
        if not all(finite_number(v) for v in values):
            return f"{name} values must be finite numbers"
        return None
    return check
