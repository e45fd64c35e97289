"""Large inputs beside the control loop: size bounds, a worker thread, a keepalive.

The control loop (joint_states -> effort, and the watchdog's safe command) runs on the
executor thread. Nothing that arrives may stop it for long:

- Size bounds, checked before any expensive work. Trajectories and robot_description messages
  are taken serialized (raw subscriptions), so an oversized one is refused by its byte count
  before it is deserialised; a joint state is refused by its name count before it is mapped.
- OffThread: one worker thread does the per-point / per-link work (deserialise, convert,
  validate and plan a trajectory; parse and build a model). The result comes back to the
  executor thread through a guard condition and is installed there by a cheap swap
  (Controller.install_trajectory, the node's model install), so the controller is only ever
  touched on the executor thread. Of each kind, only the newest job not yet started is kept:
  a flood of goals costs one validation at a time, and the last one wins (as JTC's newest goal).
- Keepalive: a thread that runs the node's watchdog when the executor thread has not done so
  for two watchdog periods (a parameter set parsing a 30 MB description blocks the executor),
  so the safe command keeps being published.
The worker and the keepalive give up the GIL at least every sys.getswitchinterval() (5 ms)
while they run Python code. The cyclic garbage collector is paused while the worker runs a job:
a 10,000-point trajectory allocates ~100,000 objects, which triggers full collections that
hold the GIL for 100-150 ms each (measured); the messages hold no reference cycles, so their
memory is freed by reference counting anyway.
"""
from __future__ import annotations

import codecs
import collections
import gc
import threading
import time
from typing import Callable

__all__ = ["MAX_STATE_JOINTS", "MAX_TRAJECTORY_BYTES", "MAX_DESCRIPTION_BYTES", "too_big",
           "string_from_cdr", "OffThread", "Keepalive"]

# Measured (bench/hostile_input.py, rclpy Jazzy, on a loaded 2-core machine):
#   JointState deserialisation ~0.09 ms per 1000 names, mapping a new name list ~0.13 ms per
#   1000; so 10,000 names fit one 1 kHz period only for a name list already seen, and the
#   largest state is about 3 control periods the first time.
#   JointTrajectory deserialisation ~20 us per 6-joint point (10,000 points: 0.2-0.3 s),
#   validation and planning ~10 us per point: done off the executor thread.
#   robot_description: deserialising 30 MB ~60 ms, parsing it is the larger part: off thread.
MAX_STATE_JOINTS = 10_000
MAX_TRAJECTORY_BYTES = 4 * 2**20     # ~30,000 points x 6 joints with positions + velocities
MAX_DESCRIPTION_BYTES = 32 * 2**20


def too_big(what: str, size: int, bound: int, unit: str = "bytes"):
    """The refusal reason when size exceeds bound, else None."""
    if size <= bound:
        return None
    return f"{what} refused: {size} {unit} exceeds the bound of {bound} {unit}"


DECODE_CHUNK = 1 << 20


def string_from_cdr(data: bytes) -> str:
    """std_msgs/String from its serialized form, decoded 1 MB at a time so that no single step
    holds the GIL for long (rclpy's deserialize_message decodes 30 MB in one call, ~0.1 s).
    CDR: a 4-byte encapsulation header (0, 1 = little endian / 0, 0 = big endian, 2 option
    bytes), a uint32 length counting the terminating NUL, the UTF-8 bytes, the NUL. Anything
    else goes through deserialize_message."""
    if len(data) >= 9 and data[0] == 0 and data[1] in (0, 1):
        size = int.from_bytes(data[4:8], "little" if data[1] == 1 else "big")
        if 1 <= size <= len(data) - 8 and data[8 + size - 1] == 0:
            payload = memoryview(data)[8:8 + size - 1]
            decoder = codecs.getincrementaldecoder("utf-8")()
            parts = [decoder.decode(payload[k:k + DECODE_CHUNK])
                     for k in range(0, len(payload), DECODE_CHUNK)]
            parts.append(decoder.decode(b"", final=True))
            return "".join(parts)
    from rclpy.serialization import deserialize_message
    from std_msgs.msg import String
    return deserialize_message(data, String).data


class OffThread:
    """One daemon worker thread; `submit(kind, work, deliver)` runs work() there and then
    deliver(result) on the executor thread (result is the exception work() raised, if any),
    as an executor task: every rclpy executor takes tasks from other threads, the
    EventsExecutor takes no guard conditions."""

    def __init__(self, node):
        self._node = node
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: dict = {}
        self._results = collections.deque()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="rbd_off_thread", daemon=True)
        self._thread.start()

    def submit(self, kind: str, work: Callable[[], object],
               deliver: Callable[[object], None]):
        """Queue a job; returns the deliver of the job of the same kind it replaced (not yet
        started: it will never run), None if none."""
        with self._lock:
            replaced = self._pending.pop(kind, None)  # re-inserted last: kinds run oldest first
            self._pending[kind] = (work, deliver)
        self._wake.set()
        return None if replaced is None else replaced[1]

    def stop(self):
        with self._lock:
            self._stopping = True
        self._wake.set()
        self._thread.join(timeout=5.0)

    def _run(self):
        while True:
            self._wake.wait()
            with self._lock:
                if self._stopping:
                    return
                if not self._pending:
                    self._wake.clear()
                    continue
                kind = next(iter(self._pending))
                work, deliver = self._pending.pop(kind)
            collecting = gc.isenabled()
            gc.disable()
            try:
                result = work()
            except Exception as error:  # handed to deliver, which reports it
                result = error
            finally:
                if collecting:
                    gc.enable()
            self._results.append((deliver, result))
            self._hand_over()

    def _hand_over(self):
        """The executor runs _deliver (one the node has joined: it has, once jobs come)."""
        executor = self._node.executor
        while executor is None and not self._stopping:
            time.sleep(0.01)
            executor = self._node.executor
        if executor is not None:
            executor.create_task(self._deliver)

    def _deliver(self):
        while self._results:
            deliver, result = self._results.popleft()
            deliver(result)


class Keepalive:
    """Calls `watchdog()` from its own thread whenever `beat()` (the executor's last watchdog
    run, time.monotonic()) is older than two periods. Started by `start()`, once everything
    the watchdog reads exists; an exception in one run is handed to `failed(error)` and the
    thread goes on (a keepalive that dies leaves the node without one, silently)."""

    def __init__(self, period: float, watchdog: Callable[[], None], beat: Callable[[], float],
                 failed: Callable[[Exception], None]):
        self._period = period
        self._watchdog = watchdog
        self._beat = beat
        self._failed = failed
        self._stop = threading.Event()
        self.runs = 0          # how often the executor was stuck and this thread stood in
        self._thread = threading.Thread(target=self._run, name="rbd_keepalive", daemon=True)

    def start(self):
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self):
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(timeout=5.0)

    def _run(self):
        while not self._stop.wait(self._period):
            if time.monotonic() - self._beat() > 2.0 * self._period:
                self.runs += 1
                try:
                    self._watchdog()
                except Exception as error:
                    self._failed(error)
