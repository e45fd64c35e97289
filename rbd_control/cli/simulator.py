"""rbd_mujoco_sim: --help, or the compile notice, then the node (SimulatorNode,
rbd_control.ros.simulator.node)."""
from rbd_control.ros.lifetime import start_process  # first: see its module doc
from rbd_control.cli import announce_compile, answered_help  # noqa: I100


def main() -> int:
    start_process()   # before the heavy imports: a signal now ends it cleanly (ros/lifetime.py)
    if answered_help("rbd_mujoco_sim"):
        return 0
    announce_compile("rbd_mujoco_sim")   # the model builder imports the dynamics
    from rbd_control.ros.simulator.node import main as run
    return run()
