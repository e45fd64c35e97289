"""Starting and stopping rclpy in a process: one place for init, spin and clean-up.

The executor that runs a node's callbacks is chosen with `--executor KIND` before any
--ros-args (bench/latency.py compares them against a trivial echo node):
    state_thread     (the default) single_threaded, and a node's `state_loop` (a StateLoop of
                     state_loop.py, if it has one) takes its state subscription on a thread of
                     its own, from a wait set holding only that subscription.
    single_threaded  rclpy.executors.SingleThreadedExecutor (rclpy's default) for every
                     callback: rebuilds its wait set in Python on every wake-up.
    events           rclpy.experimental.EventsExecutor (rclpy >= 7.1, Jazzy): event queue and
                     dispatch in C++, no wait-set rebuild; no guard conditions, no callback
                     taking a MessageInfo (StateLoop.without_info).
"""
import contextlib
import os
import signal
import sys
import threading

import rclpy
from rclpy.exceptions import InvalidParameterValueException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from rbd_control.ros.lifetime import ENDING_SIGNALS, ros_started, start_process
from rbd_control.ros.parameter_binding import ConfigurationError


EXECUTORS = ('state_thread', 'single_threaded', 'events')
SPIN_CHECK_S = 0.1   # how long a Ctrl-C may wait for the executor's loop to look
DEFAULT_EXECUTOR = 'state_thread'


_SIGNALLED = threading.Event()   # a SIGINT or SIGTERM asked this process to end


class _Interrupt:
    """Ctrl-C or SIGTERM without KeyboardInterrupt and without a second signal's death.

    For ros_session, rclpy.init installs rclpy's own handler over this one: it shuts the
    context down (spin then ends) and chains to this one, which only records it; spin_node
    turns rclpy's off, so that a node can publish its last command before the context ends,
    and its spin loop ends on `seen`. Python's default handler would
    raise KeyboardInterrupt wherever the main thread is, including inside rclpy's C++
    message conversion (a RuntimeError, "Unable to convert call argument '0' to Python
    object", out of executor.spin: exit status 1). rclpy.shutdown uninstalls rclpy's handler,
    and Python restores SIG_DFL for its own handlers when the interpreter ends: a second
    signal then (a terminal signals the whole process group, launch signals the node again)
    ended the process with status -2. So `finish` makes the process deaf to both once a
    signal has asked it to end (SIG_IGN survives interpreter shutdown); a shutdown that
    hangs is still ended by SIGKILL, which launch sends after SIGTERM's timeout."""

    def __init__(self):
        self.seen = False
        self._previous = {}

    def install(self):
        """Before rclpy.init, so that rclpy's handler chains to this one (it replaces the
        handlers of lifetime.start_process, which end the process before ROS is up)."""
        ros_started()
        for signum in ENDING_SIGNALS:
            self._previous[signum] = signal.signal(signum, self)
        return self

    def __call__(self, signum, frame):
        self.seen = True
        _SIGNALLED.set()

    def finish(self):
        """After rclpy.shutdown: ignore SIGINT and SIGTERM if one came, else as before."""
        for signum, previous in self._previous.items():
            signal.signal(signum, signal.SIG_IGN if self.seen else previous)


def spin_node(program, make_node, args=None, on_created=None):
    """Run one node until Ctrl-C or shutdown; exit status 1 when a start-up parameter is
    unusable (ConfigurationError, printed with `program`), else 0."""
    start_process()    # the console scripts did it already; `python -m` nodes do it here
    kind, args = executor_option(sys.argv if args is None else args)
    interrupt = _Interrupt().install()
    # rclpy's own handler off: it would shut the context down at the signal, before the node
    # could publish its last command (below); the spin loop looks at `interrupt` instead
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = make_node()
    except (ConfigurationError, InvalidParameterValueException) as error:
        print(f'{program}: {error}', file=sys.stderr)
        rclpy.try_shutdown()
        interrupt.finish()
        return 1
    except Exception:
        # a signal while the node was being built: rclpy's handler shut the context down
        # under it ("Failed to create publisher: rcl node's context is invalid"): the end
        # that was asked for, not an error
        if not interrupt.seen:
            raise
        rclpy.try_shutdown()
        interrupt.finish()
        return exit_if_signalled(0)
    if on_created is not None:
        on_created(node)
    if interrupt.seen:      # while it was being built: no executor on a shut-down context
        node.destroy_node()
        rclpy.try_shutdown()
        interrupt.finish()
        return exit_if_signalled(0)
    loop = getattr(node, 'state_loop', None)      # a state_loop.StateLoop
    clock = getattr(node, 'clock_loop', None)     # another, on sim time (intake.clock_loop)
    if loop is not None and kind == 'state_thread':
        loop.start()
        if clock is not None:
            clock.start()
    elif loop is not None and kind == 'events':
        loop.without_info()
    try:
        with _cleanup(node, kind, interrupt) as executor:
            try:
                # spin_once with a timeout, not spin(), whatever the executor: rclpy 7.1.6's
                # EventsExecutor.spin() starved the node's other threads, and a
                # SingleThreadedExecutor asleep in rcl_wait sometimes slept through the SIGINT
                # (1 in ~20 runs on a busy 2-core machine: the process went on waiting until
                # SIGKILL). Every SPIN_CHECK_S the loop looks at the context and the signal.
                while rclpy.ok(context=node.context) and not interrupt.seen:
                    executor.spin_once(timeout_sec=SPIN_CHECK_S)
                if interrupt.seen:
                    _last_words(node)
            except (KeyboardInterrupt, ExternalShutdownException):
                pass
            except Exception:
                # rclpy's signal handler shuts the context down while the executor may be in
                # the middle of a wait set or a take: it then raises RCLError ("context is not
                # valid") instead of ExternalShutdownException. After Ctrl-C, a clean exit.
                if not interrupt.seen and rclpy.ok(context=node.context):
                    raise
    except Exception:
        # a signal between the checks above and the spin: the executor's own set-up on the
        # shut-down context ("no attribute '_sigint_gc'") or the clean-up's
        if not interrupt.seen:
            raise
    return exit_if_signalled(0)


def _last_words(node):
    """A signal ended the spin, the context still valid: the node's last command
    (`last_command`, ControllerNode's: its safe action, so that a drive that keeps the last
    command it got is not left with a tracking torque), if it has one. Nothing here may stop
    the shutdown."""
    last = getattr(node, 'last_command', None)
    if last is None:
        return
    try:
        last()
    except Exception as error:
        print(f'{node.get_name()}: no last command: {type(error).__name__}: {error}',
              file=sys.stderr)


def exit_if_signalled(status):
    """`status`, or, when SIGINT or SIGTERM asked this process to end and ROS is shut down,
    the end of the process now with that status: the standard streams flushed, then os._exit.
    The interpreter's own teardown of numpy, numba, MuJoCo and rclpy's modules took 1-3 s on
    a loaded 2-core machine, beyond what launch and a user at a terminal wait for, and none of
    it matters once the node has shut down."""
    if not _SIGNALLED.is_set():
        return status
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


@contextlib.contextmanager
def ros_session(name, args=None, namespace=''):
    """rclpy initialised (with `args`; None: sys.argv) and one node `name` (in `namespace`,
    where its relative topics resolve) in a single-threaded executor, for a script that drives
    nodes from its own loop: yields (node, executor), cleans up on exit. SIGINT and SIGTERM
    end its spin (rclpy raises ExternalShutdownException) once; later ones are ignored while
    the script cleans up."""
    interrupt = _Interrupt().install()
    rclpy.init(args=args)
    try:
        with _cleanup(rclpy.create_node(name, namespace=namespace),
                      interrupt=interrupt) as executor:
            yield executor.get_nodes()[0], executor
    except Exception:
        # a signal's shutdown under the script's own calls (a publisher created on the
        # shut-down context): the end that was asked for, after the clean-up above
        if not interrupt.seen:
            raise
        exit_if_signalled(0)


def executor_option(argv, default=DEFAULT_EXECUTOR):
    """(executor kind, argv without the option) from `--executor KIND` before --ros-args."""
    argv = list(argv)
    end = argv.index('--ros-args') if '--ros-args' in argv else len(argv)
    if '--executor' not in argv[:end]:
        return default, argv
    at = argv.index('--executor')
    if at + 1 >= end or argv[at + 1] not in EXECUTORS:
        raise SystemExit(f'--executor needs one of {EXECUTORS}')
    return argv[at + 1], argv[:at] + argv[at + 2:]


def make_executor(kind=DEFAULT_EXECUTOR):
    if kind == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    return SingleThreadedExecutor()


@contextlib.contextmanager
def _cleanup(node, kind=DEFAULT_EXECUTOR, interrupt=None):
    try:
        executor = make_executor(kind)
        executor.add_node(node)
    except Exception:
        node.destroy_node()
        rclpy.try_shutdown()
        if interrupt is not None:
            interrupt.finish()
        raise
    try:
        yield executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        if interrupt is not None:
            interrupt.finish()
