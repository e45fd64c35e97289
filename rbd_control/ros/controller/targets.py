"""Streamed targets into the controller (cartesian.py, joint_targets.py): one way to hand a
message to the core, under the node's lock, with every refusal logged by reason."""
from rbd_control.control import TrajectoryError


def apply_target(context, what, apply):
    """apply(controller, now) under the node's lock (the state loop uses the controller on
    its own thread). Refusals are logged once per period with a count (the context's
    ThrottledWarnings): a stream of bad targets must not become a stream of log lines."""
    with context.lock:
        controller = context.controller
        if controller is None:
            context.warnings.warn(f'{what}_no_model', f'{what} refused: no robot model yet')
            return
        try:
            apply(controller, context.control_time())
        except TrajectoryError as error:
            context.warnings.warn(f'{what}_refused', f'{what} refused: {error}')
        except Exception as error:   # a bad message must never take the node down
            context.errors.warn(f'{what}_failed',
                                f'{what} refused: {type(error).__name__}: {error}')
