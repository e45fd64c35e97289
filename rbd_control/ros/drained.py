"""Subscriptions a watcher drains between spins, instead of the executor taking each message.

rclpy's executor wakes up once per message and rebuilds its wait set in Python every time:
a process that watches the 1 kHz topics of a lockstep loop (/joint_states and the effort
commands) spent about a third of a core on that (36 % measured, 10 % drained), CPU the
simulator and the controller then lacked on a 2-core machine (the loop ran 590-665 steps/s
instead of ~745). These subscriptions live on a node of their own that no executor spins;
drain() takes every queued message at once and hands each to its callback. The owner calls
drain() after each spin, and gives each subscription a depth that holds what arrives
in between.
"""
from __future__ import annotations


class DrainedSubscriptions:
    _count = 0   # nodes made so far in this process: each one's name is new

    def __init__(self, node) -> None:
        import rclpy

        DrainedSubscriptions._count += 1
        # in the owner's namespace: a relative topic resolves as it would on the owner
        self._node = rclpy.create_node(f"{node.get_name()}_drained_{DrainedSubscriptions._count}",
                                       namespace=node.get_namespace(), context=node.context)
        self._takers = []   # (subscription, message type, callback, with its MessageInfo)

    def subscribe(self, msg_type, topic: str, on_message, qos, *, with_info=False):
        """A subscription whose messages go to on_message(msg) when drain() runs;
        on_message(msg, info) with_info (rclpy's MessageInfo: source_timestamp, ...)."""
        subscription = self._node.create_subscription(msg_type, topic, lambda msg: None, qos)
        self._takers.append((subscription, msg_type, on_message, with_info))
        return subscription

    def unsubscribe(self, subscription) -> None:
        self._takers = [taker for taker in self._takers if taker[0] is not subscription]
        self._node.destroy_subscription(subscription)

    def unsubscribe_all(self) -> None:
        for subscription, *_ in list(self._takers):
            self.unsubscribe(subscription)

    def drain(self) -> None:
        """Take every message queued since the last call, in order per subscription."""
        for subscription, msg_type, on_message, with_info in self._takers:
            handle = subscription.handle
            while True:
                with handle:
                    taken = handle.take_message(msg_type, False)
                if taken is None:
                    break
                if with_info:
                    on_message(*taken)
                else:
                    on_message(taken[0])

    def close(self) -> None:
        self._node.destroy_node()
        self._takers = []
