"""Starting and stopping rclpy in a process: one place for init, spin and clean-up."""
import contextlib
import sys

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from rbd_control.ros.parameters import ConfigurationError


def spin_node(program, make_node, args=None, on_created=None):
    """Run one node until Ctrl-C or shutdown; exit status 1 when a start-up parameter is
    unusable (ConfigurationError, printed with `program`), else 0."""
    rclpy.init(args=args)
    try:
        node = make_node()
    except ConfigurationError as error:
        print(f'{program}: {error}', file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    if on_created is not None:
        on_created(node)
    with _cleanup(node) as executor:
        try:
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
    return 0


@contextlib.contextmanager
def ros_session(name, args=None):
    """rclpy initialised (with `args`; None: sys.argv) and one node `name` in a
    single-threaded executor, for a script that drives nodes from its own loop:
    yields (node, executor), cleans up on exit."""
    rclpy.init(args=args)
    with _cleanup(rclpy.create_node(name)) as executor:
        yield executor.get_nodes()[0], executor


@contextlib.contextmanager
def _cleanup(node):
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        yield executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
