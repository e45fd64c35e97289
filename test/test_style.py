"""The code passes the style check that an ament_python package carries (ament_flake8): flake8
with setup.cfg's [flake8] section (99 columns, pycodestyle and pyflakes) over the package, its
tests, the benchmarks, the documentation's scripts, the launch files and setup.py.

    python -m flake8 rbd_control test bench doc launch scripts setup.py

(here one line per finding, without the source lines setup.cfg asks for at a terminal). A few
seconds; it starts no node."""
import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECKED = ('rbd_control', 'test', 'bench', 'doc', 'launch', 'scripts', 'setup.py')


def test_flake8_finds_nothing():
    assert importlib.util.find_spec('flake8') is not None, \
        'flake8 is not installed: pip install -r requirements/test.txt'
    done = subprocess.run([sys.executable, '-m', 'flake8', '--no-show-source', *CHECKED], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and not done.stdout.strip(), (
        f'flake8 (setup.cfg [flake8]) found:\n{done.stdout[-12000:]}{done.stderr[-2000:]}')
