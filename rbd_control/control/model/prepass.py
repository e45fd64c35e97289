"""Large robot descriptions read in another process, so the caller's threads keep running.

Parsing XML is one long C call that holds Python's GIL: a 30 MB description (inline meshes, a
huge comment) stops every thread of the process for ~2 s, the control loop and its watchdog
included, and feeding the parser in chunks does not help (a single large token is rescanned
per chunk). So a description above PREPASS_BYTES goes to a helper process
(`python -c "... from rbd_control.control.model.prepass import serve; serve()"`, the import
once the first request comes; not `-m`, which would run this module a second time beside the
copy its package imports, with a RuntimeWarning), which loads it with load_urdf (every
refusal with its usual reason) and sends back only its dynamics elements: a few kB, which the
caller then loads in milliseconds.

The text crosses the pipe in 1 MB frames, each encoded on its own, so no single step holds
the GIL for long; waiting for the answer releases it. The helper is started by `start()` (or
on first use) and reused; if it dies or takes longer than TIMEOUT_S, the description is
refused with that reason and a new helper is started on the next use.

The helper lives in a session of its own: a terminal's Ctrl-C (or launch's SIGINT to the
group) reaches the node, not the helper, which would otherwise print a KeyboardInterrupt
traceback from its blocking read. It ends when its requests pipe closes: the node closes it
on shutdown, and the kernel does when the node dies in any way (SIGKILL included); in the
middle of a parse, the kernel ends it at once (prctl PR_SET_PDEATHSIG, Linux): it is killed
when the thread that started it ends, which in a node is the worker that lives as long as
the node (ros/lifetime.py says more of that caveat).

No rclpy here (ModelSource uses it).
"""
from __future__ import annotations

import select
import struct
import subprocess
import sys
import threading

from rbd_control.dynamics import ModelError

__all__ = ["PREPASS_BYTES", "DescriptionPrepass"]

PREPASS_BYTES = 1 << 20   # below this, parsing in-process takes a few ms at most
FRAME_CHARS = 1 << 20
TIMEOUT_S = 120.0
_LENGTH = struct.Struct("<Q")
# The helper waits for its first request before it imports anything of ours (numba, the
# dynamics: ~0.7 s of CPU), so a node's start does not pay for it beside its own imports; most
# nodes never get a description large enough to need it. It yields the CPU to the control
# loop that waits for it.
_SERVE = """import ctypes, os, signal, sys
try:   # PR_SET_PDEATHSIG (Linux): end with the thread that started it
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except (OSError, AttributeError):
    pass
if sys.stdin.buffer.peek(1):
    os.nice(10)
    from rbd_control.control.model.prepass import serve
    serve()"""


def _write_frames(stream, text):
    for start in range(0, len(text), FRAME_CHARS):
        chunk = text[start:start + FRAME_CHARS].encode("utf-8")
        stream.write(_LENGTH.pack(len(chunk)) + chunk)
    stream.write(_LENGTH.pack(0))
    stream.flush()


def _read_frames(stream):
    chunks = []
    while True:
        header = stream.read(_LENGTH.size)
        if len(header) < _LENGTH.size:
            raise EOFError("the pipe closed")
        (size,) = _LENGTH.unpack(header)
        if size == 0:
            return b"".join(chunks).decode("utf-8")
        chunks.append(stream.read(size))


def _reduce(text):
    """load_urdf's checks (the reasons the caller would get) and the elements it reads."""
    from rbd_control.dynamics.urdf import load_urdf
    from rbd_control.dynamics.urdf_xml import dynamics_elements
    load_urdf(text)
    return dynamics_elements(text)


def serve():
    """The helper's loop: a description in, b'+' and its dynamics elements or b'-' and the
    reason out."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr   # a stray print must not corrupt the answers
    while True:
        try:
            text = _read_frames(requests)
        except (EOFError, OSError):    # the node has gone
            return
        try:
            status, answer = b"+", _reduce(text)
        except ModelError as error:
            status, answer = b"-", str(error)
        except Exception as error:  # urdf_parser_py raises more than ModelError on bad XML
            status, answer = b"-", f"{type(error).__name__}: {error}"
        try:
            answers.write(status)
            _write_frames(answers, answer)
        except OSError:                 # BrokenPipeError: the node went while we parsed
            return


class DescriptionPrepass:
    """reduce(text) -> the same robot's dynamics elements, or ModelError with the reason."""

    def __init__(self):
        self._lock = threading.Lock()
        self._process = None

    def start(self):
        """Start the helper process now rather than on first use (it imports what it parses
        with on its first request)."""
        with self._lock:
            self._ensure_started()

    def reduce(self, text: str) -> str:
        with self._lock:
            self._ensure_started()
            try:
                _write_frames(self._process.stdin, text)
                ready, _, _ = select.select([self._process.stdout], [], [], TIMEOUT_S)
                if not ready:
                    raise ModelError(f"reading the description took more than {TIMEOUT_S:g} s")
                status = self._process.stdout.read(1)
                answer = _read_frames(self._process.stdout)
            except (EOFError, OSError, ModelError) as error:
                self._stop()
                raise ModelError(f"the description reader failed: {error}") from None
        if status != b"+":
            raise ModelError(answer)
        return answer

    def close(self):
        with self._lock:
            self._stop()

    def _ensure_started(self):
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _SERVE],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)

    def _stop(self):
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=5.0)
        self._process = None


if __name__ == "__main__":
    serve()
