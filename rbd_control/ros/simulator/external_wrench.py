"""rbd_mujoco_sim's ~/external_wrench topic: push a link of the simulated robot.

    in   ~/external_wrench   geometry_msgs/WrenchStamped. header.frame_id names the link to
                             push; force (N) and torque (N m) are in world axes, the force
                             acting at the link's origin. It stays applied until the next
                             message for that link; an all-zero wrench removes it. A new
                             robot model starts without external wrenches.

The physics is Simulator.set_external_wrench (MuJoCo xfrc_applied); this is the adapter.
"""
from __future__ import annotations

import contextlib

from geometry_msgs.msg import WrenchStamped


class ExternalWrenchTopic:
    def __init__(self, node, simulator, lock=None) -> None:
        self._node = node
        self._simulator = simulator    # () -> Simulator or None
        self._lock = lock or contextlib.nullcontext()   # the node's, around the simulator
        node.create_subscription(WrenchStamped, "~/external_wrench", self._on_wrench, 10)

    def _on_wrench(self, msg: WrenchStamped) -> None:
        sim = self._simulator()
        if sim is None:
            self._node.get_logger().warning("external wrench ignored: no robot model yet")
            return
        f, t = msg.wrench.force, msg.wrench.torque
        try:
            with self._lock:
                sim.set_external_wrench(msg.header.frame_id, (f.x, f.y, f.z), (t.x, t.y, t.z))
        except (KeyError, ValueError) as error:
            self._node.get_logger().warning(f"external wrench refused: {error}")
            return
        self._node.get_logger().info(
            f"external wrench on {msg.header.frame_id!r}: force {f.x:g} {f.y:g} {f.z:g} N, "
            f"torque {t.x:g} {t.y:g} {t.z:g} N m")
