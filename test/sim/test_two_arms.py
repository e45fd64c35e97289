"""Two arms side by side: `rbd_bringup --namespace left` and `--namespace right` at once, in
real time, in one ROS domain (doc/howto/two_arms.md).

Each run's nodes live in its namespace (/left/rbd_controller, /left/rbd_mujoco_sim,
/left/rbd_bringup), each topic, action and parameter service is its namespace's alone, each
simulator drives its own clock (/left/clock; nobody publishes /clock), both hold and track the
demo trajectory, each one's statuses on the one global /diagnostics name its namespace,
ArmClient reaches each controller by its namespace and a parameter set on one is not seen on
the other, and SIGINT ends both runs with exit status 0.
The refusals (a namespace ROS refuses, a parameter file for the root namespace only) start no
node and take a second each; which sections of a parameter file apply to a node in a
namespace is checked against rcl's own answer.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

from rbd_control.client import ArmClient

ARMS = ("left", "right")
NODES = ("rbd_controller", "rbd_mujoco_sim", "rbd_bringup")
STARTUP_S = 60.0     # a cold kernel cache compiles on the first start
DEMO_RMS_MRAD = 20.0
STOP_S = 5.0         # SIGINT to exit, for each run
# Two arms in real time are four 1 kHz processes (and two watchers) on this 2-core machine,
# beside other tests: at a load average of 10-11 a controller went 0.1 s (the default
# state_timeout), once 0.5 s, without a state (its simulator 3.5 s behind real time) and
# dropped its goal: the load's doing, not a crossing. Both runs get rbd_bringup --lockstep's
# 1 s through a --params-file in the form that applies in any namespace.
STATE_TIMEOUT_S = 1.0


def bringup_args(*args):
    return [sys.executable, "-m", "rbd_control.bringup.launcher", *args]


def test_two_namespaced_runs_hold_track_and_stay_apart(ros_env, ros_node, spawn_node, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    started = time.monotonic()
    states = {arm: ros_node.collect(JointState, f"/{arm}/joint_states") for arm in ARMS}
    clocks = {arm: ros_node.collect(Clock, f"/{arm}/clock") for arm in ARMS}
    diagnostics = ros_node.collect(DiagnosticArray, "/diagnostics")   # global, shared
    root = [ros_node.collect(JointState, "/joint_states"),
            ros_node.collect(Float64MultiArray, "/effort_controller/commands"),
            ros_node.collect(Clock, "/clock")]
    loaded = tmp_path / "loaded_machine.yaml"
    loaded.write_text(f"/**/rbd_controller:\n  ros__parameters:\n"
                      f"    state_timeout: {STATE_TIMEOUT_S}\n")
    runs = {arm: spawn_node("rbd_control.bringup.launcher", node_name=f"bringup_{arm}",
                            args=["--namespace", arm, "--demo-trajectory",
                                  "--params-file", str(loaded)]) for arm in ARMS}
    for arm, run in runs.items():
        run.wait_for_log("demo trajectory ended", STARTUP_S)
    ros_node.spin_for(0.5)
    for arm, run in runs.items():
        found = re.search(r"demo trajectory ended SUCCESSFUL.*RMS tracking error ([0-9.]+) mrad",
                          run.log())
        assert found and float(found[1]) < DEMO_RMS_MRAD, run.log()
        assert states[arm] and clocks[arm], f"no /{arm}/joint_states or /{arm}/clock"
    assert not any(root), "a message on /joint_states, /effort_controller/commands or /clock"
    # one /diagnostics for both: each status names its arm's namespace
    # (hardware_id is the robot's name once a model is in use: the newest status per name)
    loops = {s.name: s.hardware_id for array in diagnostics for s in array.status
             if s.name.endswith(": control loop")}
    assert loops == {f"{arm}/rbd_controller: control loop": f"{arm}/rbd_arm" for arm in ARMS}

    # the graph: every node in its namespace, every endpoint of a namespace's topics its own
    node = ros_node.node
    names = set(node.get_node_names_and_namespaces())
    for arm in ARMS:
        assert {(name, f"/{arm}") for name in NODES} <= names, names
    assert not {name for name, namespace in names if namespace == "/" and name in NODES}, names
    for arm in ARMS:
        for topic in ("joint_states", "effort_controller/commands", "clock",
                      "rbd_controller/follow_joint_trajectory/_action/status"):
            endpoints = [*node.get_publishers_info_by_topic(f"/{arm}/{topic}"),
                         *node.get_subscriptions_info_by_topic(f"/{arm}/{topic}")]
            foreign = [(e.node_namespace, e.node_name) for e in endpoints
                       if e.node_namespace not in (f"/{arm}", node.get_namespace())]
            assert endpoints and not foreign, (arm, topic, foreign)
        clock_publishers = node.get_publishers_info_by_topic(f"/{arm}/clock")
        assert [(e.node_namespace, e.node_name) for e in clock_publishers] == \
            [(f"/{arm}", "rbd_mujoco_sim")]
    assert not node.get_publishers_info_by_topic("/clock")

    # the Python client reaches each controller by its namespace; a parameter stays with its
    # node
    with ArmClient(namespace="left") as left, ArmClient(namespace="/right") as right:
        assert left.wait_for_state().name == right.wait_for_state().name
        assert left.mode() == right.mode() == "feedforward_pd"
        left.set_mode("gravity_compensation")
        assert left.mode() == "gravity_compensation" and right.mode() == "feedforward_pd"

    for run in runs.values():   # both at once, then wait for each
        run.process.send_signal(signal.SIGINT)   # as Ctrl-C in its terminal
    for arm, run in runs.items():
        code = run.stop(STOP_S)
        last = run.log().strip().splitlines()[-1]
        assert code == 0 and last.startswith("rbd_bringup: done: stopped by a signal"), \
            run.log()[-3000:]
    print(f"two arms: held, tracked, stopped in {time.monotonic() - started:.1f} s")


def test_a_namespace_ros_refuses_is_one_line_and_exit_2(ros_env):
    for namespace, reason in (("left arm", "must not contain characters other than"),
                              ("1st", "must not have a token that starts with a number"),
                              ("left//arm", "repeated '/'")):
        done = subprocess.run(bringup_args("--namespace", namespace), env=ros_env,
                              capture_output=True, text=True, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2, done.stdout + done.stderr
        assert len(lines) == 1 and lines[0].startswith(
            f"rbd_bringup: error: argument --namespace: {namespace!r} is not a ROS namespace"), \
            done.stderr
        assert reason in lines[0] and "logs in" not in done.stdout, done.stderr


def test_a_parameter_file_for_the_root_namespace_only_is_refused_under_a_namespace(
        ros_env, tmp_path):
    """'rbd_controller:' matches only /rbd_controller: under --namespace it would set nothing,
    silently; refused, naming the key that matches in any namespace."""
    params = tmp_path / "gains.yaml"
    params.write_text("rbd_controller:\n  ros__parameters:\n    effort_scale: 0.5\n")
    done = subprocess.run(bringup_args("--namespace", "left", "--params-file", str(params)),
                          env=ros_env, capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stdout + done.stderr
    assert "does not match /left/rbd_controller" in lines[0] and \
        "'/**/rbd_controller'" in lines[0], lines[0]


def test_which_parameter_sections_apply_in_a_namespace_is_rcls_answer(ros_env, tmp_path):
    """namespaces.section_matches, which rbd_bringup uses to refuse a file that would set
    nothing, against rcl itself: a node in each namespace gets exactly the sections it says."""
    import rclpy

    from rbd_control.bringup.namespaces import section_matches
    keys = ["/**", "/**/rbd_controller", "rbd_controller", "/rbd_controller",
            "/left/rbd_controller", "/*/rbd_controller", "/**/rbd_mujoco_sim", "/robots/**"]
    params = tmp_path / "sections.yaml"
    params.write_text("".join(f"'{key}':\n  ros__parameters:\n    section_{i}: true\n"
                              for i, key in enumerate(keys)))
    context = rclpy.Context()
    rclpy.init(args=["--ros-args", "--params-file", str(params)], context=context)
    try:
        for namespace in ("", "/left", "/robots/left"):
            node = rclpy.create_node("rbd_controller", namespace=namespace, context=context,
                                     automatically_declare_parameters_from_overrides=True)
            applied = {keys[int(name.split("_")[1])] for name in node._parameters
                       if name.startswith("section_")}
            node.destroy_node()
            said = {key for key in keys if section_matches(key, f"{namespace}/rbd_controller")}
            assert applied == said, (namespace, applied, said)
    finally:
        context.try_shutdown()


def test_the_controller_gets_rbd_bringups_mode_and_loop_over_the_config_in_any_namespace(
        ros_env, tmp_path):
    """The files Bringup hands rbd_controller, resolved by rcl itself: --mode, the lock-step
    loop and a user's '/**/rbd_controller' file win over the config's '/**' section, in the
    root namespace and in another (rcl merges sections by key in the order each key first
    appears: a first file keyed '/**/rbd_controller' once let the config's mode win)."""
    import rclpy

    from rbd_control.bringup.processes import Bringup, BringupConfig, find_config_file
    user = tmp_path / "user.yaml"
    user.write_text("/**/rbd_controller:\n  ros__parameters:\n    effort_scale: 0.5\n")
    for namespace in ("", "/left"):
        bringup = Bringup(BringupConfig(urdf="", config_file=find_config_file(),
                                        mode="gravity_compensation", lockstep=True,
                                        controller_params_files=[user],
                                        log_dir=tmp_path / (namespace.strip("/") or "root"),
                                        namespace=namespace))
        bringup.log_dir.mkdir()
        args = [arg for path in bringup.controller_files() for arg in ("--params-file", str(path))]
        context = rclpy.Context()
        rclpy.init(args=["--ros-args", *args], context=context)
        try:
            node = rclpy.create_node("rbd_controller", namespace=namespace, context=context,
                                     automatically_declare_parameters_from_overrides=True)
            got = {name: node.get_parameter(name).value for name in
                   ("mode", "expected_delay", "effort_scale", "contact.use_measured_effort")}
            node.destroy_node()
        finally:
            context.try_shutdown()
        assert got == {"mode": "gravity_compensation", "expected_delay": 0.001,
                       "effort_scale": 0.5, "contact.use_measured_effort": True}, (namespace, got)
