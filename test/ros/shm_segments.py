"""Fast DDS shared-memory segments of test processes (/dev/shm/fastrtps_*): which a process
uses, and deleting those a SIGKILLed participant left behind. A module of its own, not
conftest, so that tests import it by a name no other test directory uses."""
import os
from pathlib import Path

SHM = Path('/dev/shm')

# Fast DDS shared-memory files used by processes this session had to SIGKILL.
KILLED_PROCESS_SEGMENTS = set()


def _shm_paths(pid):
    """Files under /dev/shm that process `pid` has mapped or open."""
    paths = set()
    proc = Path('/proc') / str(pid)
    for line in (proc / 'maps').read_text().splitlines():
        if '/dev/shm/' in line:
            paths.add(line[line.index('/dev/shm/'):].split(' ')[0])
    for fd in (proc / 'fd').iterdir():
        target = os.readlink(fd)
        if target.startswith('/dev/shm/'):
            paths.add(target)
    return paths


def shm_segments_of(pid):
    """The Fast DDS segments (/dev/shm/fastrtps_*) a live process uses."""
    try:
        return {p for p in _shm_paths(pid) if Path(p).name.startswith('fastrtps_')}
    except OSError:
        return set()


def paths_in_use():
    in_use = set()
    for proc in Path('/proc').iterdir():
        if proc.name.isdigit():
            try:
                in_use |= _shm_paths(proc.name)
            except (OSError, ValueError):
                continue        # the process ended meanwhile, or is not ours to read
    return in_use


def remove_orphan_shm_segments(segments):
    """Delete those of `segments` that no live process uses, with their lock files
    (<name>_el, sem.<name>_mutex). Returns the names deleted."""
    in_use = paths_in_use()
    removed = []
    for segment in sorted(segments):
        path = Path(segment)
        if segment in in_use or not path.exists():
            continue
        for companion in (path, SHM / f'{path.name}_el', SHM / f'sem.{path.name}_mutex'):
            try:
                companion.unlink()
                removed.append(companion.name)
            except OSError:
                pass
    return removed
