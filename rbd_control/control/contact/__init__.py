"""Contact awareness for the controller core: estimate the external joint torque, the wrench at
a frame, detect contacts and collisions, react. No rclpy.

    observer.py    MomentumObserver: the generalized momentum residual r ~ tau_ext
                   (Haddadin, De Luca, Albu-Schaeffer, IEEE T-RO 33(6) 2017)
    wrench.py      WrenchEstimator: F = (J J^T + lambda^2 1)^-1 J r at a chosen link
    detection.py   CollisionThresholds, CollisionDetector: libfranka-like lower (contact) and
                   upper (collision, latched) levels, separate while accelerating
    config.py      ContactConfig: what a user sets (defaults from the parameter table)
    monitor.py     ContactMonitor: the three above plus the reaction, as the Controller uses it

Equations, gains, thresholds and their trade-offs: control/README.md, "Contact awareness".
"""
from rbd_control.control.contact.config import REACTIONS, ContactConfig
from rbd_control.control.contact.detection import (CollisionDetector, CollisionThresholds,
                                                   ContactState)
from rbd_control.control.contact.errors import ContactConfigError, ContactResetError
from rbd_control.control.contact.monitor import ContactMonitor
from rbd_control.control.contact.observer import MomentumObserver
from rbd_control.control.contact.wrench import WrenchEstimator

__all__ = ["REACTIONS", "ContactConfig", "CollisionDetector", "CollisionThresholds",
           "ContactState", "ContactConfigError", "ContactResetError", "ContactMonitor",
           "MomentumObserver", "WrenchEstimator"]
