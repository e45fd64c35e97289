"""rbd_control: model-based torque control for URDF robot arms."""
__version__ = "0.1.0"
