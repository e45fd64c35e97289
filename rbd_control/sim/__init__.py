"""MuJoCo plant for rbd_control: model builder and physics stepping, importable without rclpy.

The ROS adapter lives in rbd_control.sim.ros_node and is imported only by the console script.
The DART plant (rbd_control.sim.dart_plant.DartSimulator, the same interface: sim/plant.py) is
not imported here: it needs the optional dartpy (pip install rbd_control[dart]).
"""
from rbd_control.sim.mujoco_model import (
    URDF_GRAVITY,
    JointIndex,
    Payload,
    Plant,
    build_mujoco_model,
    build_mujoco_plant,
    joint_index,
)
from rbd_control.sim.simulator import JointStateSample, Simulator

__all__ = [
    "URDF_GRAVITY",
    "JointIndex",
    "JointStateSample",
    "Payload",
    "Plant",
    "Simulator",
    "build_mujoco_model",
    "build_mujoco_plant",
    "joint_index",
]
