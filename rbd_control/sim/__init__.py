"""The ROS-free plants of rbd_control: MuJoCo (model builder, Simulator) and DART, no rclpy.

The ROS adapter lives in rbd_control.ros.simulator.node and is imported only by the console script.
The DART plant (rbd_control.sim.dart_plant.DartSimulator, the same interface: sim/plant.py) is
not imported here: it needs the optional dartpy (pip install rbd_control[dart]).
"""
from rbd_control.sim.mujoco_model import (JointIndex, Plant, build_mujoco_model,
                                          build_mujoco_plant, joint_index)
from rbd_control.sim.plant import URDF_GRAVITY, JointStateSample, Payload, PlantOptions
from rbd_control.sim.simulator import Simulator

__all__ = [
    "URDF_GRAVITY",
    "JointIndex",
    "JointStateSample",
    "Payload",
    "Plant",
    "PlantOptions",
    "Simulator",
    "build_mujoco_model",
    "build_mujoco_plant",
    "joint_index",
]
