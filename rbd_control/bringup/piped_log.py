"""A child process's output through a pipe into a log file, as ros2 launch reads its nodes'
output: rbd_bringup's children (processes.NodeProcess) and the tests' (test/ros/conftest.py).
No rclpy here."""
from __future__ import annotations

import fcntl
import os
import select
import subprocess
import threading
from pathlib import Path


class PipedLog:
    """A child process's output (stdout and stderr through one pipe) copied into a log file by
    a thread of this process, as ros2 launch reads its nodes' output through pipes. The child
    writes into the pipe's buffer, never onto the disk itself: a node whose stderr was the file
    waited in write() while the disk flushed other work (a 0.4 s gap in its commands, with
    rclpy's logging call holding the GIL), and a control loop must not wait on a disk.

        log = PipedLog(path)
        process = log.popen(argv, env=...)   # subprocess.Popen, its output into the pipe
        log.sync()    # what the child has written so far is in the file (before reading it)
        ...
        log.close()   # after the process has ended

    The thread and sync() both drain the pipe (non-blocking reads) under one lock, so after
    sync() every line the child wrote before it is in the file: a reader that saw the child's
    answer (a topic, an action result) also sees what it logged before answering.
    """

    PIPE_BYTES = 1 << 20   # F_SETPIPE_SZ: 1 MB of log lines may wait for the copying thread

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "wb")
        self._thread: threading.Thread | None = None
        self._pipe = None          # the read end, None once closed
        self._lock = threading.Lock()
        self.dropped_bytes = 0     # output the file could not take (a full disk)

    def popen(self, argv, **kwargs) -> subprocess.Popen:
        """subprocess.Popen(argv, **kwargs) with stdout and stderr into the pipe, copied from
        now on."""
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   **kwargs)
        self._pipe = pipe = process.stdout
        if hasattr(fcntl, "F_SETPIPE_SZ"):   # Linux: a bigger buffer
            try:
                fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, self.PIPE_BYTES)
            except OSError:   # above the system's limit: the default
                pass
        os.set_blocking(pipe.fileno(), False)   # our end only: the child's writes still block
        self._thread = threading.Thread(target=self._copy, args=(pipe.fileno(),), daemon=True,
                                        name=f"log {self.path.name}")
        self._thread.start()
        return process

    def _copy(self, fd: int) -> None:
        """Until end of file (the child and whatever inherited its output have ended)."""
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while self._pipe is not None:
            poller.poll(1000)   # woken by data or the hang-up; the timeout notices close()
            self._drain()

    def _drain(self) -> None:
        """Copy what the pipe holds now into the file; at end of file close the pipe."""
        with self._lock:
            if self._pipe is None:
                return
            try:
                while chunk := os.read(self._pipe.fileno(), 1 << 16):
                    self._write(chunk)
            except BlockingIOError:   # nothing more for now
                self._flush()         # readers of the file see each line as it comes
                return
            except (OSError, ValueError):   # the pipe closed by close()
                pass
            self._pipe.close()        # end of file: nothing more comes
            self._pipe = None
            self._flush()

    def _write(self, chunk: bytes) -> None:
        """Into the file. A write that fails (a full disk, the file closed) drops the chunk
        and counts it in dropped_bytes: the pipe is still drained, so the child never waits."""
        try:
            self._file.write(chunk)
        except (OSError, ValueError):
            self.dropped_bytes += len(chunk)

    def _flush(self) -> None:
        try:
            self._file.flush()
        except (OSError, ValueError):   # a full disk: what was buffered is lost, nothing waits
            pass

    def sync(self) -> None:
        """Everything the child has written so far, in the file."""
        self._drain()

    def close(self, timeout: float = 2.0) -> None:
        """Wait for the copy to reach the end of the output (at most `timeout`: a grandchild
        that inherited the pipe may outlive the child), then close the file."""
        if self._thread is not None:
            self._thread.join(timeout)
        with self._lock:
            if self._pipe is not None:
                self._pipe.close()
                self._pipe = None
            self._flush()
            try:
                self._file.close()
            except OSError:   # its buffer could not be written (a full disk): already dropped
                pass
