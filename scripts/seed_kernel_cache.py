"""Copy one copy's numba kernel cache into another copy of rbd_control, so that the second
never compiles what the first did.

    python scripts/seed_kernel_cache.py FROM_PACKAGE_DIR TO_PACKAGE_DIR

numba finds a cached kernel by its source file's name, the function's name and line, and
accepts it when the source's SHA-256 matches the one stored in the index
(numba.core.caching._SourceFileBackedLocatorMixin.get_source_stamp): a pip-installed copy of
the same sources loads the checkout's kernels. Only the caches of source files whose bytes
are identical in both copies are copied; any other is left to compile.

Used by scripts/setup_env.sh (the checkout compiles once, the installed copy is seeded) and by
test/ros/test_packaging.py (the colcon install tree).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path


def seed(source: Path, target: Path) -> int:
    """Copy source's __pycache__/*.nbi, *.nbc beside target's identical sources; the count."""
    copied = 0
    for cached in source.rglob("__pycache__/*.nb[ic]"):
        module = cached.name.split(".", 1)[0] + ".py"
        relative = cached.parent.parent.relative_to(source)
        origin, twin = source / relative / module, target / relative / module
        if not twin.is_file() or origin.read_bytes() != twin.read_bytes():
            continue
        destination = target / relative / "__pycache__" / cached.name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cached, destination)
        copied += 1
    return copied


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    count = seed(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
    print(f"seed_kernel_cache: {count} cached kernel files copied")
