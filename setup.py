"""rbd_control as an ament_python package: `pip install .` or `colcon build`.

Both install the same share/rbd_control tree (package.xml, launch/, config/, urdf/), the
ament index marker and the executables in lib/rbd_control, where `ros2 run` and `ros2
launch` look (get_package_prefix + lib/<package>), so `ros2 launch rbd_control
arm.launch.py` finds them. colcon puts the console scripts there itself (setup.cfg's
install_scripts); pip ignores that and puts them in <prefix>/bin only, so a wheel also
carries resource/lib/*: one-line shell wrappers in lib/rbd_control that exec the console
script of the same name in <prefix>/bin (whose shebang pip wrote for its interpreter).
Only into a wheel: under colcon's `setup.py install` they would overwrite the real scripts.
test/ros/test_packaging.py checks both installs through ament_index_python.
The ROS 2 Python packages (rclpy, messages) are not install_requires: under ROS they
come from the distribution (package.xml), in a plain venv from requirements/ros.txt.
"""
import sys
from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'rbd_control'


def share(subdir, pattern):
    return (f'share/{PACKAGE}/{subdir}', sorted(glob(pattern)))


setup(
    name=PACKAGE,
    version='0.1.0',
    description='Model-based torque control (RNEA/CRBA feedforward + PD, computed torque, '
                'gravity compensation) for any URDF arm, with a ROS 2 node.',
    license='Apache-2.0',
    python_requires='>=3.10',
    packages=find_packages(include=[PACKAGE, f'{PACKAGE}.*']),
    # The default arm is also read through importlib.resources (rbd_control.description).
    package_data={f'{PACKAGE}.description': ['*.urdf']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        share('launch', 'launch/*.launch.py'),
        share('config', 'config/*.yaml'),
        # the robot profiles (rbd_bringup --profile, arm.launch.py profile:=)
        share('config/profiles', 'config/profiles/*.yaml'),
        share('urdf', f'{PACKAGE}/description/*.urdf'),
    ] + ([(f'lib/{PACKAGE}', sorted(glob('resource/lib/*')))]
         if 'bdist_wheel' in sys.argv else []),
    # xacro expands .xacro descriptions (rbd_control.description.files): PyPI `xacro` is
    # the ROS package's own Python code, ros-<distro>-xacro under ROS (package.xml).
    install_requires=['numpy', 'scipy', 'numba', 'urdf-parser-py', 'xacro'],
    extras_require={
        'sim': ['mujoco'],
        'dart': ['dartpy'],   # the DART plant (rbd_mujoco_sim's engine: dart), Gazebo's engine
        'demo': ['matplotlib'],
        'identify': ['matplotlib', 'rosbags'],
    },
    zip_safe=False,
    entry_points={
        'console_scripts': [
            # through rbd_control.cli: --help without starting, a notice before compiling
            'rbd_controller = rbd_control.cli.controller:main',
            'rbd_mujoco_sim = rbd_control.cli.simulator:main',
            'rbd_bringup = rbd_control.bringup.launcher:main',
            'rbd_identify = rbd_control.identification.cli:main',
            # /robot_description without robot_state_publisher (arm.launch.py)
            'rbd_description_publisher = rbd_control.ros.description_publisher:main',
        ],
    },
)
