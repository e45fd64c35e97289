"""rbd_controller: --help, or the compile notice, then the node (ros/controller/node.py)."""
from rbd_control.cli import announce_compile, answered_help


def main() -> int:
    if answered_help("rbd_controller"):
        return 0
    announce_compile("rbd_controller")
    from rbd_control.ros.controller.node import main as run
    return run()
