"""MuJoCo plant for rbd_control: model builder and physics stepping, importable without rclpy.

The ROS adapter lives in rbd_control.ros.simulator.node and is imported only by the console script.
"""
from rbd_control.sim.mujoco_model import (URDF_GRAVITY, JointIndex, Payload, Plant,
                                          build_mujoco_model, build_mujoco_plant, joint_index)
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
