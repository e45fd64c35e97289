"""The arm in Gazebo Harmonic, driven through gz_ros2_control.

    ros2 launch rbd_control gazebo.launch.py [headless:=true] [robot_state_publisher:=true]
                                             [description_file:=robot.urdf.xacro] [name:=value ...]

Starts Gazebo (ros_gz_sim) with an empty world, bridges /clock, spawns the robot from
/robot_description, then - once the spawn has finished - loads joint_state_broadcaster
and effort_controller (effort_controllers/JointGroupEffortController, configured in
config/gz_controllers.yaml, which the URDF's <gazebo> plugin block names).
Everything runs on sim time: without the /clock bridge nodes report "No clock received"
and trajectories stamped with wall time are rejected as ending in the past.

arm.launch.py sim:=gazebo includes this file with robot_state_publisher:=false because
it runs its own robot_state_publisher and rbd_controller.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction,
                            RegisterEventHandler)
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from rbd_control.description.files import description_for_launch

PACKAGE = 'rbd_control'
DEFAULT_DESCRIPTION = 'urdf/rbd_arm.urdf'
ENTITY_NAME = 'arm'
CONTROLLERS = ('joint_state_broadcaster', 'effort_controller')
ARGUMENTS = ('headless', 'robot_state_publisher', 'description_file')


def share_path(relative):
    return os.path.join(get_package_share_directory(PACKAGE), relative)


def robot_description(context):
    path = LaunchConfiguration('description_file').perform(context) or \
        share_path(DEFAULT_DESCRIPTION)
    # $(find rbd_control): the default arm names the gz_ros2_control YAML that way
    return description_for_launch(path, context.launch_configurations, ARGUMENTS,
                                  {PACKAGE: get_package_share_directory(PACKAGE)})


def gazebo(headless):
    world_args = '-r -v 3 empty.sdf'
    if headless:
        world_args = '-r -v 3 -s --headless-rendering empty.sdf'
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(
            get_package_share_directory('ros_gz_sim'), 'launch', 'gz_sim.launch.py')),
        launch_arguments={'gz_args': world_args, 'on_exit_shutdown': 'true'}.items(),
    )


def spawner(controller):
    return Node(
        package='controller_manager',
        executable='spawner',
        arguments=[controller, '--controller-manager', '/controller_manager'],
        parameters=[{'use_sim_time': True}],
        output='screen',
    )


def launch_setup(context):
    headless = LaunchConfiguration('headless').perform(context) == 'true'
    with_rsp = LaunchConfiguration('robot_state_publisher').perform(context) == 'true'

    clock_bridge = Node(
        package='ros_gz_bridge',
        executable='parameter_bridge',
        arguments=['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock'],
        parameters=[{'use_sim_time': True}],
        output='screen',
    )
    spawn = Node(
        package='ros_gz_sim',
        executable='create',
        arguments=['-topic', 'robot_description', '-name', ENTITY_NAME],
        parameters=[{'use_sim_time': True}],
        output='screen',
    )
    # The controller_manager exists only once the robot (and its plugin) is in the world.
    load_controllers = RegisterEventHandler(OnProcessExit(
        target_action=spawn,
        on_exit=[spawner(name) for name in CONTROLLERS],
    ))
    actions = [gazebo(headless), clock_bridge, spawn, load_controllers]
    if with_rsp:
        actions.insert(0, Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            parameters=[{
                'robot_description': ParameterValue(robot_description(context), value_type=str),
                'use_sim_time': True,
            }],
            output='screen',
        ))
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('headless', default_value='false',
                              description='run the Gazebo server only (no GUI)'),
        DeclareLaunchArgument('robot_state_publisher', default_value='true',
                              description='start robot_state_publisher here'),
        DeclareLaunchArgument('description_file', default_value='',
                              description='.urdf or .xacro file (other name:=value are its '
                                          'xacro arguments); empty: the default arm'),
        OpaqueFunction(function=launch_setup),
    ])
