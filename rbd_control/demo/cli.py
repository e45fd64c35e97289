"""python -m rbd_control.demo: run the demo, print the table, write the plots."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from rbd_control.bringup.processes import (Bringup, BringupConfig, controller_parameters,
                                           find_config_file, simulator_loop)
from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME, TRACKING_MODES
from rbd_control.demo import cartesian, contact, __doc__ as DEMO_DOC, identify_report
from rbd_control.demo.identify import (MAX_IDENTIFIED_DRIFT, MAX_RMS_VS_EXACT, MIN_RMS_GAIN,
                                       STATE_TIMEOUT_S, IdentificationPhase)
from rbd_control.demo.plots import write_plots
from rbd_control.demo.report import (MAX_GRAVITY_DRIFT, MAX_TRACKING_RMS, save_recording,
                                     summary_table, verdict)
from rbd_control.demo.run import DemoRun
from rbd_control.dynamics.joint_map import JointMap
from rbd_control.params.controller import CONTROLLER_PARAMETERS
from rbd_control.params.simulator import ENGINES
from rbd_control.ros.description_publisher import make_description_publisher

ENGINE_NAMES = {"mujoco": "MuJoCo", "dart": "DART"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rbd_demo", description=DEMO_DOC.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=Path("demo_output"), help="plots go here")
    parser.add_argument(
        "--realtime", "--real-time", dest="real_time",
        action="store_true",
        help="simulator paced by the wall clock, not lockstep (needs a core free for each node; "
        "on a busy machine the controller falls behind and the loop degrades)",
    )
    parser.add_argument(
        "--config", type=Path, help="controller YAML (default: config/arm_controller.yaml)"
    )
    parser.add_argument("--sim", choices=ENGINES, default="mujoco",
                        help="the simulator's physics engine "
                             "(dart: pip install rbd_control[dart])")
    parser.add_argument(
        "--skip-identification", action="store_true",
        help="leave out the identification phase (identify.py; about half the demo's time)",
    )
    return parser.parse_args(argv)


def _import_rclpy():
    try:
        import rclpy  # noqa: F401
    except ImportError as error:
        raise SystemExit(
            f"rbd_demo needs rclpy ({error}). Install the ROS 2 wheels "
            "(pip install -r requirements/ros.txt) and `source scripts/ros_env.sh`, "
            "or source a ROS 2 Jazzy install."
        )


def run(args: argparse.Namespace) -> int:
    _import_rclpy()
    from rbd_control.description import default_arm_urdf
    from rbd_control.dynamics import load_urdf
    from rbd_control.ros.run import ros_session

    urdf = default_arm_urdf()
    config = BringupConfig(
        urdf=urdf,
        config_file=args.config or find_config_file(),
        mode="gravity_compensation",
        lockstep=not args.real_time,
        engine=args.sim,
        initial_positions=dict(DEFAULT_ARM_HOME),
        log_dir=args.output / "logs",
        # lock step: a stalled simulator is this machine starved of CPU, not a robot gone
        # quiet; every phase rides out stalls as the identification does
        extra_controller_parameters={"ee_link": cartesian.EE_LINK, **(
            {} if args.real_time else {"state_timeout": STATE_TIMEOUT_S})},
    )
    joints = config.joints()
    model = load_urdf(urdf)
    limits = JointMap.by_name(joints, model.joint_names).take(model.effort_limit)

    pacing = "real time" if args.real_time else "lockstep"
    identified = touched = None
    # the obstacle of the contact phase is in the MuJoCo plant only
    with_contact = args.sim == "mujoco"
    main = replace(config, extra_controller_parameters={
        **config.extra_controller_parameters, **contact.CONTROLLER_PARAMETERS_ON},
        extra_simulator_parameters={**config.extra_simulator_parameters,
                                    **contact.simulator_parameters(model)}) \
        if with_contact else config
    with ros_session("rbd_demo") as (node, executor):
        description = make_description_publisher(node, urdf)
        print(f"rbd_control demo: default arm '{model.name}', {ENGINE_NAMES[args.sim]} 1 kHz "
              f"{pacing}; logs in {config.log_dir}")
        try:
            with Bringup(main) as bringup:
                demo = DemoRun(node, executor, bringup, joints)
                push_phase = cartesian.CartesianPhase(demo)
                demo.gravity_compensation()
                for mode in TRACKING_MODES:
                    demo.track(mode, DEFAULT_ARM_HOME)
                push = push_phase.run(model, controller_parameters(config.config_file).get(
                    "cartesian_stiffness") or CONTROLLER_PARAMETERS.default("cartesian_stiffness"),
                    simulator_loop(config.lockstep))
                if with_contact:
                    touched = contact.ContactPhase(demo).run()
            demo.progress.done()
            demo.recorder.close()   # the next simulators start their clocks at 0 again
            if not args.skip_identification:
                identified = IdentificationPhase(node, executor, config, description,
                                                 args.output).run()
        except RuntimeError as error:
            print(f"\nrbd_demo failed: {error}\nnode logs: {config.log_dir}", file=sys.stderr)
            return 1

    recorder = demo.recorder
    gravity = recorder.series(*demo.windows["gravity_compensation"])
    tracking = {mode: recorder.series(*demo.windows[mode]) for mode in TRACKING_MODES}
    latency = recorder.latency_between(demo.windows[TRACKING_MODES[0]][0],
                                       demo.windows[TRACKING_MODES[-1]][1])
    print()
    print(summary_table(joints, gravity, tracking, latency))
    for path in write_plots(args.output, joints, gravity, tracking, limits):
        print(f"wrote {path}")
    recording = save_recording(args.output / "recording.npz", joints, gravity, tracking, latency)
    print(f"wrote {recording}")
    print(cartesian.summary(push))
    print(f"wrote {cartesian.write_plot(args.output, push)}")
    print(contact.summary(touched, contact.SKIPPED_DART))
    if touched is not None:
        print(f"wrote {contact.write_plot(args.output, touched, joints)}")
        print(f"wrote {contact.save(args.output / 'contact.npz', touched, joints)}")
    problems = verdict(gravity, tracking) + cartesian.problems(push) + contact.problems(touched)
    if identified is not None:
        print()
        print(identify_report.summary(identified))
        print(f"wrote {identify_report.write_plot(args.output, identified)}")
        problems += identify_report.problems(identified)
    print()
    if problems:
        print("verdict: FAILED\n  " + "\n  ".join(problems))
        print(f"  (gains come from {config.config_file}; node logs in {config.log_dir})")
        return 2
    print(
        f"verdict: OK (drift < {MAX_GRAVITY_DRIFT:g} rad, RMS tracking error < "
        f"{MAX_TRACKING_RMS:g} rad in every mode"
        + ("" if touched is None else
           f"; contact detected, stopped within {1e3 * contact.MAX_STOP_S:.0f} ms")
        + ("" if identified is None else
           f"; identified model: drift < {MAX_IDENTIFIED_DRIFT:g} rad where the nominal falls, "
           f"RMS within {MAX_RMS_VS_EXACT:g}x of the exact model and {MIN_RMS_GAIN:g}x below the "
           "nominal") + ")"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse_args(argv))
