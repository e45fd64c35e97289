"""rbd_mujoco_sim's ~/hand_target topic: a hand holds a link of the simulated robot (a
teleoperation leader moved by hand, rbd_control/demo/teleop.py).

    in   ~/hand_target   geometry_msgs/PoseStamped, world frame: where the hand holds
                         hand.link (position and orientation); it holds it there until the
                         next message. The hand's gains are the hand.* parameters.

The physics is Simulator.set_hand (sim/hand.py: a spring-damper and a grip evaluated at
every physics step); this is the adapter. The DART plant has no hand: refused, said once.
"""
from __future__ import annotations

import contextlib

from geometry_msgs.msg import PoseStamped

from rbd_control.sim.hand import HandGains


class HandTarget:
    def __init__(self, node, simulator, parameter, lock=None) -> None:
        self._node = node
        self._simulator = simulator    # () -> the plant or None
        self._lock = lock or contextlib.nullcontext()   # the node's, around the simulator
        self._link = parameter("hand.link")
        self._gains = HandGains(*(float(parameter(f"hand.{name}")) for name in
                                  ("stiffness", "damping", "grip", "grip_damping")))
        self._said = set()
        node.create_subscription(PoseStamped, "~/hand_target", self._on_target, 10)

    def _once(self, key, text):
        if key not in self._said:
            self._said.add(key)
            self._node.get_logger().warning(text)

    def _on_target(self, msg: PoseStamped) -> None:
        if not self._link:
            self._once("no_link", "hand target ignored: hand.link is not set")
            return
        sim = self._simulator()
        if sim is None:
            self._once("no_model", "hand target ignored: no robot model yet")
            return
        if not hasattr(sim, "set_hand"):
            self._once("engine", "hand target ignored: the hand is simulated by the MuJoCo "
                                 "plant only (engine: mujoco)")
            return
        p, o = msg.pose.position, msg.pose.orientation
        try:
            with self._lock:
                sim.set_hand(self._link, (p.x, p.y, p.z), (o.x, o.y, o.z, o.w), self._gains)
        except (KeyError, ValueError) as error:
            self._node.get_logger().warning(f"hand target refused: {error}",
                                            throttle_duration_sec=1.0)
