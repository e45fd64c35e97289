"""The Controller's contact awareness: the observer and detector run on every state, and a
collision's reaction (hold, float, reflex) overrides the law (control/contact/monitor.py).

A part of the Controller class (controller.py), kept apart because the state machine only asks
it two things per state (the reaction in force, and to record the torque applied); it reads the
controller's fields (config, model, _contact, _plan_model, _mapper, _map, _q, mode, _cartesian)
and adds only `_contact` (and sets `abort_reason` to the collision that latched).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from rbd_control.control.contact.monitor import ContactMonitor
from rbd_control.control.errors import ConfigError, StateError, TrajectoryError

__all__ = ["ContactReactions"]


class ContactReactions:
    @property
    def contact(self) -> Optional[ContactMonitor]:
        """The observer, wrench estimate and detector (None unless config.contact is set):
        .tau_ext (command order), .wrench ([fx..tz] at .wrench_estimator.link, world axes),
        .detector (flags), .collided, .reason."""
        return self._contact

    def reset_collision(self, now: float):
        """Clear a latched collision (libfranka's automaticErrorRecovery) and hold the measured
        pose. ContactResetError while the residual still shows contact; ConfigError when
        contact awareness is off."""
        if self._contact is None:
            raise ConfigError("contact awareness is off (ControllerConfig.contact is None)")
        self._contact.reset()
        self.abort_reason = ""
        if self._q is not None:
            self._hold_measured(now)

    def set_contact(self, config):
        """Change the contact settings (a ContactConfig; None: off) from the next state on.
        With the same wrench link, r, the flags and a latched collision are kept; otherwise
        the observer starts afresh. Raises ConfigError (ContactConfigError) with the reason."""
        if config is not None:
            config.check()
        old, new = self._contact, replace(self.config, contact=config)
        link = None if config is None else self._wrench_link(new, self.model.link_names)
        self.config = new                          # nothing changed if that raised
        if old is not None and config is not None and link == old.wrench_estimator.link:
            old.reconfigure(config)
        else:
            self._contact = self._contact_monitor(self._plan_model)
            if self._contact is not None and self.model is not self._plan_model.model:
                self._contact.set_model(self.model)   # the payload carried

    @staticmethod
    def _wrench_link(config, links):
        link = config.contact.wrench_link or config.ee_link or links[-1]
        if link not in links:
            raise ConfigError(f"contact.wrench_link {link!r} is not a link of the model")
        return link

    def _contact_monitor(self, plan) -> Optional[ContactMonitor]:
        config = self.config.contact
        if config is None:
            return None
        link = self._wrench_link(self.config, plan.model.link_names)
        return ContactMonitor(config, plan.model, plan.joints, self.config.state_timeout, link)

    def _observe_contact(self, now, names, q, qd, effort):
        """The observer and detector on this state; the reaction in force (FLOAT, REFLEX or
        None). A collision that latches now aborts the motion and holds the pose."""
        contact = self._contact
        measured = None
        if contact.config.use_measured_effort:
            if effort is None or len(effort) == 0:
                raise StateError("contact.use_measured_effort: the joint state has no efforts")
            try:
                measured = self._mapper.map(names, effort, effort)[0]
            except StateError as exc:
                raise StateError(f"efforts: {exc}") from None
        if contact.observe(now, q, qd, measured, self._plan_model.friction):
            self.abort_reason = contact.reason     # the collision that latched
            self._hold_for_contact(now, q)
        reaction = contact.override(now)
        if reaction == "reflex_over":
            self._hold_for_contact(now, q)
            return None
        return reaction

    def _hold_for_contact(self, now, q):
        self._hold_measured(now, q)                # aborts the trajectory (a new generation)
        if self.mode == "cartesian_impedance":
            self._cartesian.activate(self.model, q, now)   # hold the pose reached

    def _reflex(self, q, qd):
        """tau = g + K_R r (the observer's g and r of this state)."""
        take, n = self._map.take, len(self._map)
        q_c = take(q)
        return self._finish(take(self._contact.reflex_torque()), np.zeros(n), q_c.copy(),
                            np.zeros(n), np.zeros(n), np.zeros(n), q_c, qd, integrate=False,
                            holding=True)

    def _check_no_collision(self):
        contact = self._contact
        if contact is not None and contact.collided and contact.config.reaction != "none":
            raise TrajectoryError(f"{contact.reason}; reset it first (reset_collision)")
