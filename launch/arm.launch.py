"""Bring up an arm under rbd_controller.

    ros2 launch rbd_control arm.launch.py [mode:=computed_torque] [sim:=none|mujoco|dart|gazebo]
                                          [description_file:=/path/to/robot.urdf.xacro]
                                          [robot_state_publisher:=true|false]
                                          [profile:=franka_panda|ur_e_series|so101|none]
                                          [namespace:=left]
                                          [name:=value ...]

description_file is a .urdf, or a .xacro expanded by xacro (its Python API, through
rbd_control.description.files) with every name:=value given to `ros2 launch` that is not
one of this file's arguments - as `xacro FILE name:=value` would.

robot_state_publisher publishes the URDF on robot_description (transient_local);
rbd_controller reads it from there, listens to joint_states and publishes
effort_controller/commands (all relative: /robot_description ... in the root namespace).
robot_state_publisher:=false publishes it with rbd_control's own rbd_description_publisher
instead (the same message, no TF), for an install without robot_state_publisher.

namespace:=NAME (default: none) starts every node in /NAME, so that this file launched twice
with two namespaces runs two arms side by side (doc/howto/two_arms.md): their topics, action,
parameters and, with a simulator, /clock (remapped to /NAME/clock on every node: two
simulators must not drive one clock) are their own; robot_state_publisher prefixes the TF
frames with NAME/ (/tf stays one global tree). /diagnostics stays global, each status named
with its namespace. NAME is checked as a ROS namespace before any node starts
(rbd_control.bringup.namespaces, as rbd_bringup --namespace). With sim:=gazebo it is refused:
gz_ros2_control takes its namespace from the URDF's plugin block, which this file does not
write.

sim:=none     hardware (or anything else) provides /joint_states and consumes the
              commands through ros2_control's effort_controller.
sim:=mujoco   rbd_mujoco_sim plays both roles and publishes /clock; rbd_controller is given,
              before its config, what rbd_bringup gives it for that plant (the effort it
              applied for the contact observer, the loop it runs in real time:
              rbd_control.bringup.processes.simulated_plant_parameters).
sim:=dart     the same node with DART as its physics engine (engine: dart; pip install
              rbd_control[dart]): Gazebo's default engine without Gazebo.
sim:=gazebo   Gazebo Harmonic + gz_ros2_control (gazebo.launch.py) play both roles.
With a simulator every node runs on sim time.

profile:=NAME gives rbd_controller (and the simulator) config/profiles/<name>.yaml, the robot's
own gravity, loop, soft-limit margins and torque rate from its vendor's figures, after
arm_controller.yaml; none (the default) gives nothing. Its values are checked against the
nodes' parameter tables before any node starts (rbd_control.bringup.profiles, as
rbd_bringup --profile checks them).
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from rbd_control.bringup.namespaces import absolute_namespace, clock_remapping
from rbd_control.bringup.processes import simulated_plant_parameters
from rbd_control.bringup.profiles import (profile_file, profile_files_for, profile_names,
                                          profile_refusal)
from rbd_control.description.files import description_for_launch
from rbd_control.params.controller import MODES  # the node's modes, defined once

PACKAGE = 'rbd_control'
DEFAULT_DESCRIPTION = 'urdf/rbd_arm.urdf'
CONTROLLER_CONFIG = 'config/arm_controller.yaml'
GAZEBO_LAUNCH = 'launch/gazebo.launch.py'
SIMULATORS = ('none', 'mujoco', 'dart', 'gazebo')
ARGUMENTS = ('mode', 'sim', 'description_file', 'robot_state_publisher', 'profile',
             'namespace')
BOOLEANS = ('true', 'false')


def share_path(relative):
    return os.path.join(get_package_share_directory(PACKAGE), relative)


def robot_description(context):
    path = LaunchConfiguration('description_file').perform(context) or \
        share_path(DEFAULT_DESCRIPTION)
    # $(find rbd_control): the default arm names the gz_ros2_control YAML that way
    return description_for_launch(path, context.launch_configurations, ARGUMENTS,
                                  {PACKAGE: get_package_share_directory(PACKAGE)})


def choose(context, name, allowed):
    value = LaunchConfiguration(name).perform(context)
    if value not in allowed:
        raise ValueError(f'{name}:={value} is not one of {", ".join(allowed)}')
    return value


def launch_setup(context):
    mode = choose(context, 'mode', MODES)
    sim = choose(context, 'sim', SIMULATORS)
    profile = choose(context, 'profile', profile_names())
    refused = profile_refusal(profile_file(profile))
    if refused:
        raise ValueError(f'profile:={profile}: {refused}')
    namespace = absolute_namespace(LaunchConfiguration('namespace').perform(context))
    if namespace and sim == 'gazebo':
        raise ValueError(f'namespace:={namespace} with sim:=gazebo: gz_ros2_control takes its '
                         'namespace from the URDF\'s plugin block, which this file does not write')
    use_sim_time = sim != 'none'
    # every node in the namespace (None: the root); on sim time its /clock there too
    # (namespaces.py: two simulators must not drive one /clock)
    in_namespace = {'namespace': namespace or None,
                    'remappings': clock_remapping(namespace) if use_sim_time else []}
    description = ParameterValue(robot_description(context), value_type=str)
    if choose(context, 'robot_state_publisher', BOOLEANS) == 'true':
        publisher = Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            parameters=[{'robot_description': description, 'use_sim_time': use_sim_time,
                         # /tf is global: each arm's frames under its namespace's name
                         'frame_prefix': f'{namespace[1:]}/' if namespace else ''}],
            **in_namespace,
            output='screen',
        )
    else:
        publisher = Node(
            package=PACKAGE,
            executable='rbd_description_publisher',
            parameters=[{'robot_description': description}],
            **in_namespace,
            output='screen',
        )

    actions = [
        publisher,
        Node(
            package=PACKAGE,
            executable='rbd_controller',
            parameters=[
                # our simulator as the plant: the effort it applied and the loop it runs, as
                # rbd_bringup gives them, before every file
                *([simulated_plant_parameters(lockstep=False)] if sim in ('mujoco', 'dart')
                  else []),
                share_path(CONTROLLER_CONFIG),
                # the profile after the config: its robot's values win
                *map(str, profile_files_for(profile, 'rbd_controller')),
                {'mode': mode, 'use_sim_time': use_sim_time},
            ],
            **in_namespace,
            output='screen',
        ),
    ]
    if sim in ('mujoco', 'dart'):
        actions.append(Node(
            package=PACKAGE,
            executable='rbd_mujoco_sim',
            parameters=[*map(str, profile_files_for(profile, 'rbd_mujoco_sim')),
                        {'publish_clock': True, 'use_sim_time': False, 'engine': sim}],
            **in_namespace,
            output='screen',
        ))
    elif sim == 'gazebo':
        actions.append(IncludeLaunchDescription(
            PythonLaunchDescriptionSource(share_path(GAZEBO_LAUNCH)),
            # this file already publishes the description
            launch_arguments={'robot_state_publisher': 'false'}.items(),
        ))
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('mode', default_value='feedforward_pd',
                              description='control law: ' + ' | '.join(MODES)),
        DeclareLaunchArgument('sim', default_value='none',
                              description='simulator: ' + ' | '.join(SIMULATORS)),
        DeclareLaunchArgument('robot_state_publisher', default_value='true',
                              description='true: robot_state_publisher publishes '
                                          '/robot_description (and TF); false: '
                                          'rbd_description_publisher (no TF)'),
        DeclareLaunchArgument('profile', default_value='none',
                              description='robot profile (config/profiles/<name>.yaml): ' +
                                          ' | '.join(profile_names())),
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of every node (e.g. left), its /clock '
                                          'remapped there with a simulator; empty: the root'),
        DeclareLaunchArgument('description_file', default_value='',
                              description='.urdf or .xacro file (other name:=value are its '
                                          'xacro arguments); empty: the default arm'),
        OpaqueFunction(function=launch_setup),
    ])
