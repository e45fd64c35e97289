"""rbd_bringup --teleop: a leader arm moved by a hand and a follower that tracks it, two copies
of the default arm, each a whole bringup run of its own (processes.Bringup: its simulator,
in real time or --lockstep, and its controller) in the namespaces /leader and /follower.

    leader    gravity_compensation: weightless, so the simulated hand (rbd_mujoco_sim's
              hand.link, sim/hand.py) moves it along the scene's path (teleop_scene.py: an
              ellipse, one lap in LAP_S, on the leader's sim time)
    follower  joint_impedance, contact on (reaction none, the scene's CONTACT_LEVELS), and a
              box on its way that the leader's world lacks
    link      this process's node (teleop_link.py), every STREAM_PERIOD (50 Hz): the hand's
              target, the leader's newest state as the follower's target, and the force
              feedback (--teleop-feedback: on, contact (only while the follower's contact
              flag is set), off)

The motion starts once both arms are up and have held SETTLE_S, and the run ends after one
lap, or at --duration (laps go on until then), or at Ctrl-C. Then one line of figures
(teleop_report.py: the follower's RMS error of the leader at the same instants, the box's
contact on the follower, the feedback on the leader), the plots in --output (default: the
--log-dir, else ./teleop_output), and the verdict; exit status 0 only if the error stayed
below 20 mrad RMS, the box was touched and flagged, and the feedback (unless off) reached
the leader. A run stopped before the lap was done is judged on its error alone.
"""
from __future__ import annotations

import contextlib
import sys
import time

from rbd_control.bringup.arguments import TELEOP_OUTPUT
from rbd_control.bringup.namespaces import unmatched_section
from rbd_control.bringup.processes import (CONTROLLER_NODE, Bringup, BringupConfig,
                                           controller_parameters, find_config_file)
from rbd_control.bringup.teleop_link import ARMS, FeedbackPolicy, TeleopLink
from rbd_control.bringup.teleop_scene import (CONTACT_LEVELS, FEEDBACK_GAIN, LAP_S,
                                              STREAM_PERIOD, obstacle, path_point)
from rbd_control.bringup.waypoints import WORK_JOINTS

READY_S = 60.0     # wall s for both arms to come up (a cold kernel cache compiles first)
SETTLE_S = 1.0     # wall s both arms hold before the hand moves
REPORT_S = 5.0     # wall s between two progress lines
# Both controllers in real time: the loop declared as it runs (a state every 1 ms from the
# simulator, answered within ~2 ms), so the follower's stiffness bound is this loop's, not
# the default declaration's 4 ms / 10 ms; a loaded 2-core machine may hold a state back
# longer than the default 0.1 s state_timeout (test_two_arms.py): --lockstep's 1 s.
REALTIME_LOOP = {"expected_state_period": 0.001, "expected_delay": 0.002}
STATE_TIMEOUT_S = 1.0


def arm_configs(args, urdf, model, link) -> dict[str, BringupConfig]:
    """The two runs: what test_teleop_nodes.py's parameter files once gave two rbd_bringups."""
    controller = {"state_timeout": STATE_TIMEOUT_S, **({} if args.lockstep else REALTIME_LOOP)}
    box = obstacle(model, WORK_JOINTS, link)
    follower = {
        # a 50 Hz stream of a moving leader, filtered over one sample period (the default
        # 0.05 s smooths slower, sparser streams; its lag is T v)
        "joint_impedance.filter_time_constant": STREAM_PERIOD,
        "contact.enabled": True, "contact.reaction": "none", "contact.wrench_link": link,
        "contact.torque_thresholds": [float(x) for x in CONTACT_LEVELS]}
    box_parameters = {"obstacle.box": [float(x) for x in [*box.centre, *box.half_size]],
                      "obstacle.probe_link": link,
                      "obstacle.probe_radius": float(box.probe_radius)}
    arms = {"leader": ("gravity_compensation", {}, {"hand.link": link}),
            "follower": ("joint_impedance", follower, box_parameters)}
    return {arm: BringupConfig(
        urdf=urdf, config_file=find_config_file(), mode=mode, lockstep=args.lockstep,
        initial_positions=dict(WORK_JOINTS), joint_damping=not args.no_joint_damping,
        extra_controller_parameters={**controller, **extra}, extra_simulator_parameters=sim,
        controller_params_files=list(args.params_file),
        simulator_params_files=list(args.params_file),
        log_dir=args.log_dir / arm if args.log_dir else None, namespace=f"/{arm}")
        for arm, (mode, extra, sim) in arms.items()}


def run(args) -> int:
    """rbd_bringup --teleop (module doc): the exit status."""
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf
    from rbd_control.ros.run import exit_if_signalled, ros_session

    for path in args.params_file:   # a section for the root namespace only would set nothing
        reason = unmatched_section(path, "/leader", CONTROLLER_NODE)
        if reason:
            print(f"rbd_bringup: error: --teleop: {reason}", file=sys.stderr)
            return 2
    urdf = default_arm_urdf()
    model = load_urdf(urdf)
    config = controller_parameters(find_config_file())
    link = config["ee_link"]
    configs = arm_configs(args, urdf, model, link)
    with ros_session("rbd_teleop", args=[]) as (node, executor):
        teleop = _Teleop(args, node, model, link, config["joints"])
        with contextlib.ExitStack() as stack:
            bringups = {arm: stack.enter_context(Bringup(configs[arm])) for arm in ARMS}
            teleop.describe(urdf)
            print("rbd_bringup: teleop: logs in " + ", ".join(
                f"{bringup.log_dir} ({arm})" for arm, bringup in bringups.items())
                + "; Ctrl-C to stop", flush=True)
            teleop.loop(executor, bringups.values())
            # every node of both runs at once: one run's shutdown need not wait for the other's
            for bringup in bringups.values():
                for child in (bringup.simulator, bringup.controller):
                    child.interrupt()
            status = teleop.judge()
            for bringup in bringups.values():
                bringup.keep_logs = status != 0
        teleop.finish()
    return exit_if_signalled(status)


class _Teleop:
    """One run of the link's loop: wait for both arms, settle, move the hand, judge."""

    def __init__(self, args, node, model, link, joints) -> None:
        from rbd_control.ros.drained import DrainedSubscriptions

        self.args, self.node, self.model, self.ee_link = args, node, model, link
        self.joints = list(joints)
        self.drained = DrainedSubscriptions(node)
        self.link = TeleopLink(node, self.drained, self.joints,
                               FeedbackPolicy(args.teleop_feedback, FEEDBACK_GAIN))
        self._publishers = []   # each arm's robot_description, kept while the run lives
        self.began = self.ended = None   # wall time (time.time) of the motion
        self.lap_done = self.signalled = False
        self.failure: str | None = None
        self.figures: dict | None = None
        self.measured = None
        self.verdict = ''
        self._path_origin = self._grip = self._t0 = None

    def describe(self, urdf) -> None:
        """robot_description in each arm's namespace, as rbd_bringup publishes it for one."""
        import rclpy

        from rbd_control.ros.description_publisher import make_description_publisher
        for arm in ARMS:
            arm_node = rclpy.create_node("rbd_bringup", namespace=f"/{arm}",
                                         context=self.node.context)
            self._publishers.append((arm_node, make_description_publisher(arm_node, urdf)))

    def loop(self, executor, bringups) -> None:
        from rclpy.executors import ExternalShutdownException

        started = next_tick = next_report = time.monotonic()
        ready_at = None
        try:
            while True:
                executor.spin_once(timeout_sec=max(0.0, next_tick - time.monotonic()))
                if not self.node.context.ok():   # Ctrl-C or SIGTERM (run.ros_session)
                    self.signalled = True
                    break
                self.drained.drain()
                for bringup in bringups:
                    bringup.check_alive()
                now = time.monotonic()
                if self.args.duration is not None and now - started >= self.args.duration:
                    break
                if now < next_tick:
                    continue
                # the next tick a period on, or now if this one came more than a period late
                next_tick = max(next_tick + STREAM_PERIOD, now)
                if ready_at is None:
                    if self.link.ready():
                        ready_at = now
                    elif now - started > READY_S:
                        self.failure = f"the arms were not up within {READY_S:g} s"
                        break
                elif self.began is None and now - ready_at >= SETTLE_S:
                    self._begin()
                elif self.began is not None and self._tick(now >= next_report):
                    break
                next_report = now + REPORT_S if now >= next_report else next_report
        except (KeyboardInterrupt, ExternalShutdownException):
            self.signalled = True
        except RuntimeError as error:   # a node that died (check_alive), or rclpy's RCLError
            if self.node.context.ok():  # when a signal shut it down mid-wait
                self.failure = str(error)
            else:
                self.signalled = True
        self.ended = time.time()

    def _begin(self) -> None:
        from rbd_control.control.laws.pose import quat_from_matrix
        from rbd_control.dynamics import frame_pose
        from rbd_control.ros.conversions import seconds

        start = frame_pose(self.model, self.link.newest_position("leader"), self.ee_link)
        self._path_origin, self._grip = start[:3, 3], quat_from_matrix(start[:3, :3])
        self._t0 = seconds(self.link.newest["leader"].header.stamp)
        self.began = time.time()
        print(f"rbd_bringup: teleop: both arms up; the hand moves ({LAP_S:g} s a lap, "
              f"feedback {self.args.teleop_feedback})", flush=True)

    def _tick(self, report: bool) -> bool:
        """The hand, the stream and the feedback; True when the run must end (a lap done and
        no --duration)."""
        from rbd_control.ros.conversions import seconds

        t = seconds(self.link.newest["leader"].header.stamp) - self._t0   # leader's sim time
        self.link.hold_hand(path_point(self._path_origin, t), self._grip)
        self.link.tick()
        if report:
            error = self.link.newest_position("leader") - self.link.newest_position("follower")
            print(f"rbd_bringup: teleop t = {t:5.1f} s: leader - follower now "
                  f"{abs(error).max() * 1e3:.1f} mrad at most (newest states)", flush=True)
        if t >= LAP_S and not self.lap_done:
            self.lap_done = True
            print(f"rbd_bringup: teleop: lap 1 done ({t:.1f} s of sim time)", flush=True)
            return self.args.duration is None
        return False

    def judge(self) -> int:
        """The figures (their line now) and the verdict (its line after the plots, finish());
        the exit status."""
        from rbd_control.bringup.teleop_report import judged, measure, summary, summary_line

        failures, unfinished, done = [], [], []
        if self.failure:
            failures.append(self.failure)
        if self.began is None:
            (unfinished if self.signalled or self.args.duration else failures).append(
                "the hand never moved")
        else:
            self.measured = measure(self.link, self.began, self.ended)
            self.figures = summary(self.measured, self.link, self.began, self.ended)
            print(f"rbd_bringup: teleop: {summary_line(self.figures)}", flush=True)
            failed, unfinished = judged(self.figures, self.args.teleop_feedback, self.lap_done)
            failures += failed
            done.append(f"the follower tracked the leader within {self.figures['rms'] * 1e3:.1f}"
                        f" mrad RMS over {self.ended - self.began:.1f} s")
        if failures:
            self.verdict = f"rbd_bringup: FAILED: {'; '.join(failures)}"
            return 1
        stopped = ("stopped by a signal: " if self.signalled else
                   "stopped by --duration: " if not self.lap_done else "")
        done += [f"not reached: {reason}" for reason in unfinished]
        self.verdict = f"rbd_bringup: done: {stopped}{'; '.join(done)}"
        return 0

    def finish(self) -> None:
        """The plots (after the nodes have stopped: the CPU is free), then the verdict."""
        from rbd_control.bringup.teleop_report import save_recording, write_plots

        if self.figures is not None:
            output = self.args.output or self.args.log_dir or TELEOP_OUTPUT
            written = [*write_plots(output, self.joints, self.measured, self.link, self.began),
                       save_recording(output / "teleop_run.npz", self.link, self.began)]
            print(f"rbd_bringup: teleop: plots in {output}: "
                  + ", ".join(path.name for path in written), flush=True)
        print(self.verdict, flush=True)
