"""A non-editable install must put what `ros2 launch` and ament look up into share/:
checked on the wheel pip builds from this tree (the same files `pip install .` places)."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = 'rbd_control-0.1.0.data/data/'


def build_wheel(out_dir):
    # setuptools builds in the source tree (build/, *.egg-info): use a copy of it.
    source = Path(out_dir) / 'source'
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        '.git', 'build', '*.egg-info', '__pycache__', '.hypothesis', '.pytest_cache',
        '.venv', 'demo_output'))
    subprocess.run(
        [sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-q', '-w', str(out_dir), str(source)],
        check=True, capture_output=True, text=True, timeout=300)
    wheels = list(Path(out_dir).glob('rbd_control-*.whl'))
    assert len(wheels) == 1
    return zipfile.ZipFile(wheels[0])


def test_wheel_installs_share_files_ament_marker_and_console_scripts(tmp_path):
    wheel = build_wheel(tmp_path)
    names = set(wheel.namelist())
    expected_share = {
        'share/ament_index/resource_index/packages/rbd_control',
        'share/rbd_control/package.xml',
        'share/rbd_control/launch/arm.launch.py',
        'share/rbd_control/launch/gazebo.launch.py',
        'share/rbd_control/config/arm_controller.yaml',
        'share/rbd_control/config/gz_controllers.yaml',
        'share/rbd_control/urdf/rbd_arm.urdf',
    }
    assert {DATA + path for path in expected_share} <= names
    # the default arm is also package data, read through importlib.resources
    assert 'rbd_control/description/rbd_arm.urdf' in names
    assert 'rbd_control/ros/controller_node.py' in names

    metadata = wheel.read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    requires = [line.split(':', 1)[1].strip() for line in metadata.splitlines()
                if line.startswith('Requires-Dist:')]
    base = {r.split(';')[0].strip() for r in requires if 'extra ==' not in r}
    assert base == {'numpy', 'scipy', 'numba', 'urdf-parser-py', 'xacro'}
    assert not any('ros' in r.lower() or 'rclpy' in r for r in requires), \
        'ROS packages come from the distribution or requirements/ros.txt, not install_requires'
    assert any(r.startswith('mujoco') and 'sim' in r for r in requires)
    assert any(r.startswith('matplotlib') and 'demo' in r for r in requires)

    entry_points = wheel.read(
        next(n for n in names if n.endswith('.dist-info/entry_points.txt'))).decode()
    for script in ('rbd_controller', 'rbd_mujoco_sim', 'rbd_bringup'):
        assert f'{script} = ' in entry_points
