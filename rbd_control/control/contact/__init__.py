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
from .config import REACTIONS, ContactConfig
from .detection import CollisionDetector, CollisionThresholds, ContactState
from .errors import ContactConfigError, ContactResetError
from .monitor import ContactMonitor
from .observer import MomentumObserver
from .wrench import WrenchEstimator

__all__ = ["REACTIONS", "ContactConfig", "CollisionDetector", "CollisionThresholds",
           "ContactState", "ContactConfigError", "ContactResetError", "ContactMonitor",
           "MomentumObserver", "WrenchEstimator"]
