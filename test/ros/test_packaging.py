"""A non-editable install must put what `ros2 launch` and ament look up into share/:
checked on the wheel pip builds from this tree (the same files `pip install .` places),
and on the install tree of a real `colcon build`, whose controller is then started."""
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import yaml

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
        'share/rbd_control/config/profiles/franka_panda.yaml',
        'share/rbd_control/config/profiles/none.yaml',
        'share/rbd_control/urdf/rbd_arm.urdf',
    }
    assert {DATA + path for path in expected_share} <= names
    # the default arm is also package data, read through importlib.resources
    assert 'rbd_control/description/rbd_arm.urdf' in names
    assert 'rbd_control/ros/controller/node.py' in names

    metadata = wheel.read(next(n for n in names if n.endswith('.dist-info/METADATA'))).decode()
    requires = [line.split(':', 1)[1].strip() for line in metadata.splitlines()
                if line.startswith('Requires-Dist:')]
    base = {r.split(';')[0].strip() for r in requires if 'extra ==' not in r}
    assert base == {'numpy', 'scipy', 'numba', 'urdf-parser-py', 'xacro'}
    # (rosbags, the pure-Python bag reader of the `identify` extra, is no ROS package)
    assert not any(('ros' in r.lower() and not r.startswith('rosbags')) or 'rclpy' in r
                   for r in requires), \
        'ROS packages come from the distribution or requirements/ros.txt, not install_requires'
    assert any(r.startswith('mujoco') and 'sim' in r for r in requires)
    assert any(r.startswith('matplotlib') and 'demo' in r for r in requires)

    entry_points = wheel.read(
        next(n for n in names if n.endswith('.dist-info/entry_points.txt'))).decode()
    for script in ('rbd_controller', 'rbd_mujoco_sim', 'rbd_bringup'):
        assert f'{script} = ' in entry_points
        # and where ros2 run / ros2 launch look, executable (pip keeps the zip's mode bits)
        wrapper = wheel.getinfo(f'{DATA}lib/rbd_control/{script}')
        assert (wrapper.external_attr >> 16) & 0o111, f'lib/rbd_control/{script} is not executable'


def test_pip_install_is_found_by_ros2_launch_through_the_ament_index(tmp_path, ros_env):
    """`pip install` of the wheel into a fresh prefix; then what launch_ros does for
    Node(package='rbd_control', executable=...): get_package_prefix + lib/<package>/<name>,
    which must exist and run (--help: no kernels are loaded)."""
    wheel = build_wheel(tmp_path).filename
    prefix = tmp_path / 'prefix'
    subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-deps', '-q',
                    '--ignore-installed', '--prefix', str(prefix), wheel],
                   check=True, capture_output=True, text=True, timeout=300)
    site = prefix / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}' / 'site-packages'
    env = dict(ros_env, PYTHONPATH=str(site),
               AMENT_PREFIX_PATH=f"{prefix}:{ros_env['AMENT_PREFIX_PATH']}")
    found = subprocess.run(
        [sys.executable, '-c', 'import os, ament_index_python.packages as a; '
         'print(os.path.join(a.get_package_prefix("rbd_control"), "lib", "rbd_control"))'],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(found) == prefix / 'lib' / 'rbd_control'
    for name, expected in (('rbd_controller', 'constraints.<joint>.goal'),
                           ('rbd_mujoco_sim', 'lockstep'), ('rbd_bringup', '--plant-description')):
        executable = Path(found) / name
        assert executable.is_file() and os.access(executable, os.X_OK), executable
        shown = subprocess.run([str(executable), '--help'], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and expected in shown.stdout, shown.stdout + shown.stderr
        # the installed copy ran, not the checkout
        assert str(REPO) not in shown.stderr
    # --help loaded no kernel: numba compiled nothing into the fresh install (it would take
    # minutes before the help appeared)
    assert not list(site.rglob('*.nbi')), 'numba compiled kernels for --help'


# ---------------------------------------------------------------------- colcon

COLCON_TIMEOUT = 600
# The install tree is a fresh copy of the sources: without a cache its first start compiles
# the numba kernels (~40 s of one core, minutes on a busy machine; seed_kernel_cache).
FIRST_START_TIMEOUT = 600
INSTALLED_FILES = [
    'share/ament_index/resource_index/packages/rbd_control',
    'share/rbd_control/package.xml',
    'share/rbd_control/launch/arm.launch.py',
    'share/rbd_control/launch/gazebo.launch.py',
    'share/rbd_control/config/arm_controller.yaml',
    'share/rbd_control/config/profiles/ur_e_series.yaml',
    'share/rbd_control/urdf/rbd_arm.urdf',
]
EXECUTABLES = ['rbd_controller', 'rbd_mujoco_sim', 'rbd_bringup']


def colcon_build(workspace):
    """`colcon build` of a copy of this repository, merged install (install/lib/<pkg>/...)."""
    source = workspace / 'src' / 'rbd_control'
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        '.git', 'build', 'install', 'log', '*.egg-info', '__pycache__', '.hypothesis',
        '.pytest_cache', '.venv', 'demo_output'))
    colcon = Path(sys.executable).with_name('colcon')
    assert colcon.exists(), \
        f'colcon is not installed beside {sys.executable} (requirements/build.txt)'
    # control_msgs is installed in the environment already (scripts/build_interfaces.sh):
    # build only this package.
    result = subprocess.run(
        [str(colcon), 'build', '--merge-install', '--packages-select', 'rbd_control',
         '--event-handlers', 'console_direct+'],
        cwd=workspace, capture_output=True, text=True, timeout=COLCON_TIMEOUT)
    assert result.returncode == 0, f'colcon build failed:\n{result.stdout}\n{result.stderr}'
    return workspace / 'install'


def seed_kernel_cache(site):
    """The checkout's numba cache (scripts/setup_env.sh compiled it) copied into the install
    tree by scripts/seed_kernel_cache.py, as the set-up seeds the pip-installed copy: the
    installed controller starts without compiling (the test is about the install tree, and a
    cold compile took 2-3 of its 4 minutes under load)."""
    subprocess.run([sys.executable, str(REPO / 'scripts' / 'seed_kernel_cache.py'),
                    str(REPO / 'rbd_control'), str(site / 'rbd_control')], check=True)


def installed_environment(ros_env, install):
    """ros_env with the install tree in front, as `source install/setup.bash` would give."""
    site = install / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}' / 'site-packages'
    env = dict(ros_env)
    env['PYTHONPATH'] = str(site)                 # not the checkout: the installed copy
    env['AMENT_PREFIX_PATH'] = f"{install}:{ros_env['AMENT_PREFIX_PATH']}"
    return env, site


def test_colcon_build_install_tree_and_its_controller_answers_a_joint_state(
        tmp_path, ros_env, ros_node):
    from ros_helpers import RELIABLE_DEEP, finite, joint_state
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    install = colcon_build(tmp_path)
    for path in INSTALLED_FILES:
        assert (install / path).is_file(), f'{path} missing from the colcon install tree'
    for name in EXECUTABLES:
        script = install / 'lib' / 'rbd_control' / name
        assert script.is_file() and os.access(script, os.X_OK), f'{script} is not an executable'

    env, site = installed_environment(ros_env, install)

    def announced():
        """What the installed nodes print before importing the kernels (cli.announce_compile)."""
        return subprocess.run(
            [sys.executable, '-c', 'from rbd_control.cli import announce_compile; '
             'announce_compile("probe")'], env=env, cwd=tmp_path, capture_output=True, text=True,
            check=True).stderr
    # a fresh install says its first start compiles; once seeded, it loads them
    assert 'first start of this install: compiling the dynamics kernels' in announced()
    seed_kernel_cache(site)
    assert announced() == ''
    seeded = {path: path.read_bytes() for path in site.rglob('__pycache__/*.nbi')}
    assert seeded, 'no numba cache in the checkout to seed from'
    where = subprocess.run(
        [sys.executable, '-c', 'import rbd_control, ament_index_python as a; '
         'print(rbd_control.__file__); print(a.get_package_share_directory("rbd_control"))'],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert where == [str(site / 'rbd_control' / '__init__.py'),
                     str(install / 'share' / 'rbd_control')]

    for name, expected in (('rbd_controller', 'constraints.<joint>.goal'),
                           ('rbd_mujoco_sim', 'lockstep')):
        shown = subprocess.run([str(install / 'lib/rbd_control' / name), '--help'], env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and expected in shown.stdout, shown.stdout + shown.stderr

    urdf = (install / 'share/rbd_control/urdf/rbd_arm.urdf').read_text()
    params = tmp_path / 'params.yaml'
    params.write_text(yaml.safe_dump({'rbd_controller': {'ros__parameters': {
        'robot_description': urdf, 'state_timeout': 5.0}}}))
    log_path = tmp_path / 'rbd_controller.log'
    with open(log_path, 'w') as log:
        process = subprocess.Popen(
            [str(install / 'lib/rbd_control/rbd_controller'), '--ros-args', '--params-file',
             str(params)], env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        states = ros_node.node.create_publisher(JointState, 'joint_states', 10)
        commands = ros_node.collect(Float64MultiArray, '/effort_controller/commands',
                                    RELIABLE_DEEP)
        from rbd_control.dynamics import load_urdf
        names = list(load_urdf(urdf).joint_names)
        probe = joint_state(names, [0.1] * len(names), [0.0] * len(names))
        end = time.monotonic() + FIRST_START_TIMEOUT
        while not commands:
            assert process.poll() is None, f'rbd_controller exited:\n{log_path.read_text()}'
            assert time.monotonic() < end, \
                f'no answer in {FIRST_START_TIMEOUT} s:\n{log_path.read_text()}'
            states.publish(probe)
            ros_node.spin_for(0.2)
        assert len(commands[0].data) == len(names) and finite(commands[0].data)
        assert any(abs(v) > 1e-3 for v in commands[0].data), 'no gravity torque in the answer'
        # the seeded cache was used: nothing announced, and no index rewritten (numba rewrites
        # a kernel's index when it compiles it, e.g. on a source stamp that does not match)
        assert 'compiling the dynamics kernels' not in log_path.read_text(), log_path.read_text()
        rewritten = [p.name for p, data in seeded.items() if p.read_bytes() != data]
        assert not rewritten, f'numba compiled again: {rewritten}'
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
