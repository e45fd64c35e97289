"""PipedLog (bringup/piped_log.py): a child's output through a pipe into a log file, read back
by the tests and by rbd_bringup's users. No ROS: plain child processes."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rbd_control.bringup.piped_log import PipedLog

# prints a line, then waits for a line on stdin before printing the next and ending
TALKER = ("import sys\n"
          "print('before the answer', flush=True)\n"
          "sys.stdin.readline()\n"
          "print('after', flush=True)\n")


def test_sync_puts_every_line_written_so_far_in_the_file(tmp_path):
    log = PipedLog(tmp_path / "child.log")
    process = log.popen([sys.executable, "-c", TALKER], stdin=subprocess.PIPE)
    deadline = time.monotonic() + 20.0
    while True:
        log.sync()
        if "before the answer" in log.path.read_text():
            break
        assert time.monotonic() < deadline, "the child's first line never reached the file"
        time.sleep(0.01)
    process.stdin.write(b"go\n")
    process.stdin.close()
    assert process.wait(timeout=20) == 0
    log.sync()   # the child has ended: its last line is in the file without waiting
    assert log.path.read_text().splitlines() == ["before the answer", "after"]
    log.close()


@pytest.mark.skipif(not os.path.exists("/dev/full"),
                    reason="needs /dev/full (Linux) to fill a disk")
def test_a_full_disk_drops_the_output_and_never_blocks_the_child():
    log = PipedLog(Path("/dev/full"))   # every write fails with ENOSPC
    # 3 MB: three times the pipe's buffer, so a child whose pipe were not drained would block
    process = log.popen([sys.executable, "-c",
                         "for _ in range(300): print('x' * 10000, flush=True)"])
    assert process.wait(timeout=30) == 0
    log.sync()
    log.close()   # does not raise though the file's last buffer could not be written
    assert log.dropped_bytes > 2_000_000
