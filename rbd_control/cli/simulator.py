"""rbd_mujoco_sim: --help, or the node (rbd_control.sim.ros_node)."""
from rbd_control.cli import answered_help


def main() -> int:
    if answered_help("rbd_mujoco_sim"):
        return 0
    from rbd_control.sim.ros_node import main as run
    return run()
