"""The simulator's stepping off the executor thread, so parameter, description and wrench
requests are answered at once while the physics runs at full rate.

    Pacer       real time: calls tick() every `period` wall seconds on a thread of its own
                (SimulatorNode._tick_real_time works out how many steps are due)

Lockstep (lockstep.py) steps on each command, on the command subscription's own thread
(state_loop.StateLoop, as the controller's joint states). Both hold the node's lock around
the simulator, which the executor's callbacks (a new description, a disturbance, a wrench,
the kick) hold too.
Before this, a 1 kHz rclpy timer stepped the physics on the executor: under load the
executor's wait set was never idle, and `ros2 param get` took 16 s.
"""
from __future__ import annotations

import threading
import time
from typing import Callable


class Pacer:
    """tick() every `period` seconds, from start() to stop(); a late tick is not made up
    (tick itself decides how far the physics has to go)."""

    def __init__(self, period: float, tick: Callable[[], None],
                 on_error: Callable[[Exception], None], alive: Callable[[], bool]):
        self._period = period
        self._tick = tick
        self._on_error = on_error
        self._alive = alive          # false once the node's context is shut down (a signal)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rbd_sim_pacer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            due += self._period
            delay = due - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)
            else:
                due = time.monotonic()   # behind: the next tick one period from now
            try:
                self._tick()
            except Exception as error:   # the node going down, or a bug: report, go on
                if self._stop.is_set() or not self._alive():
                    return
                self._on_error(error)
                self._stop.wait(0.1)     # a lasting fault must not spin a core
