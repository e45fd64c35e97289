"""ModelSource: the robot model's lifecycle, without ROS.

Where the controller's model comes from and when it changes:
  - the description comes from the robot_description parameter or topic; a non-empty
    parameter wins, and the topic is ignored while it is set;
  - an unchanged description is not reloaded (a restarted robot_state_publisher would
    otherwise drop the trajectory in progress);
  - a gravity override [x, y, z] replaces the URDF's;
  - joints: with none configured the controller follows whatever robot the description
    describes; with explicit joints, a robot lacking any of them is refused;
  - a refused description never replaces the last good model, and says why;
  - strict: physically dubious data (Model.warnings) refuses a description instead.

Two steps, so that parsing can move off the control thread: `parse` is a pure function of
the description that returns a Candidate (parsed, checked, and built by the consumer's
`build`, e.g. the controller's ModelPlan) or raises ModelRefused with the reason;
`install` is the cheap swap that makes a candidate the current model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from rbd_control.dynamics import load_urdf

from rbd_control.control.model.prepass import PREPASS_BYTES

__all__ = ["Candidate", "ModelRefused", "ModelSource"]


class ModelRefused(ValueError):
    """A description (or a gravity override) cannot be used; the message says why."""


@dataclass(frozen=True)
class Candidate:
    """A checked model, ready to install."""

    xml: str
    source: str             # e.g. 'the robot_description topic', for the log
    urdf_model: object      # as parsed (URDF gravity), to apply another override later
    model: object           # with the gravity override applied
    built: object           # what `build` made of `model`


class ModelSource:
    """The description source, de-duplication, gravity override, joint adoption and the last
    good model. `build(model)` makes what the consumer needs and raises to refuse."""

    def __init__(self, joints: Sequence[str] = (), gravity: Sequence[float] = (),
                 build: Optional[Callable[[object], object]] = None, strict: bool = False,
                 prepass=None):
        self.joints = tuple(joints or ())          # explicit joints; empty: follow the robot
        self.strict = bool(strict)                 # load_urdf(strict=): refuse what warns
        self.gravity = tuple(gravity or ())
        self.parameter = ""                        # the robot_description parameter
        self.current: Optional[Candidate] = None   # the last good model
        self._build = build or (lambda model: None)
        # reads descriptions above PREPASS_BYTES in another process (model/prepass.py)
        self._prepass = prepass

    # --- parse: pure ------------------------------------------------------------------

    def parse(self, xml: str, source: str, gravity: Optional[Sequence[float]] = None) -> Candidate:
        """A Candidate for `xml`, or ModelRefused with the reason. Changes nothing."""
        try:
            text = xml
            if self._prepass is not None and len(xml) > PREPASS_BYTES:
                text = self._prepass.reduce(xml)
            urdf_model = load_urdf(text, strict=self.strict)
        except Exception as error:  # urdf_parser_py raises more than ModelError on bad XML
            raise ModelRefused(f"{type(error).__name__}: {error}") from None
        missing = [j for j in self.joints if j not in urdf_model.joint_names]
        if missing:
            raise ModelRefused(
                f"joints {missing} are not moving joints of robot {urdf_model.name!r}")
        return self._candidate(xml, source, urdf_model, gravity)

    def regravitate(self, gravity: Sequence[float]) -> Optional[Candidate]:
        """The current model under another gravity override (None without a model)."""
        if self.current is None:
            return None
        current = self.current
        return self._candidate(current.xml, current.source, current.urdf_model, gravity)

    def _candidate(self, xml, source, urdf_model, gravity) -> Candidate:
        gravity = self.gravity if gravity is None else tuple(gravity)
        model = (urdf_model.with_gravity(np.asarray(gravity, dtype=float)) if gravity
                 else urdf_model)
        try:
            built = self._build(model)
        except Exception as error:
            raise ModelRefused(f"cannot use robot {urdf_model.name!r}: {error}") from None
        return Candidate(xml, source, urdf_model, model, built)

    # --- decisions --------------------------------------------------------------------

    def unchanged(self, xml: str) -> bool:
        """True when `xml` is the description already in use."""
        return self.current is not None and xml == self.current.xml

    def topic_ignored(self) -> bool:
        """The parameter wins over the topic while it is set."""
        return bool(self.parameter)

    # --- install: a cheap swap --------------------------------------------------------

    def install(self, candidate: Candidate,
                gravity: Optional[Sequence[float]] = None) -> Candidate:
        """Make `candidate` the current model (and `gravity` the override, when given)."""
        if gravity is not None:
            self.gravity = tuple(gravity)
        self.current = candidate
        return candidate

    def close(self):
        """Stop the description reader process, if one was started."""
        if self._prepass is not None:
            self._prepass.close()

    @property
    def model(self):
        """The model in use (gravity override applied), or None."""
        return None if self.current is None else self.current.model
