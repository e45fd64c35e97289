"""Start-up with extreme but accepted loop-design values, through the nodes: a controller that
has a model and receives joint states commands, or says on /diagnostics why not.

The cases: a state period and a delay of 1 s each (the design's slowest corner), a period of
1e-9 s with no delay at 1000 Hz, and a damping ratio of 1e-300. Each is inside its parameter's
range; the loop design (control/laws/loop_design.py) must find gains for it or the model is
refused with a reason /diagnostics carries (an ERROR naming the refusal).

A review once saw one such run give no command for 60 s from a controller that had logged its
model; not reproduced here: 9 runs of the three cases (2026-11-28, a loaded 2-core machine)
commanded 1.0-3.0 s after the simulator's first state."""
from __future__ import annotations

import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rbd_control.bringup.waypoints import DEFAULT_ARM_HOME
from rbd_control.description import default_arm_urdf

from test_in_the_loop import ARM_JOINTS, controller_parameters, sim_parameters, start_loop

HOME = [DEFAULT_ARM_HOME[j] for j in ARM_JOINTS]
ANSWER_S = 30.0     # wall: a start-up that compiles nothing commands within a few seconds
CASES = {
    "slowest corner": {"expected_state_period": 1.0, "expected_delay": 1.0},
    "fastest loop": {"expected_state_period": 1e-9, "expected_delay": 0.0, "bandwidth_hz": 1000.0},
    "tiny damping": {"damping_ratio": 1e-300},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_controller_with_a_model_commands_or_says_why_not(ros_node, spawn_node, case):
    urdf = default_arm_urdf()
    states = ros_node.collect(JointState, "/joint_states", 100)
    commands = ros_node.collect(Float64MultiArray, "/effort_controller/commands", 100)
    diagnostics = ros_node.collect(DiagnosticArray, "/diagnostics", 100)
    parameters = controller_parameters(urdf, ARM_JOINTS, "gravity_compensation",
                                       use_sim_time=True, **CASES[case])
    sim, controller = start_loop(ros_node, spawn_node, states,
                                 sim_parameters(urdf, ARM_JOINTS, HOME, lockstep=False),
                                 parameters)

    def errors():
        return [s.message for array in diagnostics for s in array.status
                if s.level == DiagnosticStatus.ERROR]
    started = time.monotonic()
    ros_node.wait_for(lambda: commands or errors() or not controller.alive(), ANSWER_S,
                      f"a command or an ERROR on /diagnostics ({case})")
    print(f"{case}: {'commanding' if commands else 'not commanding'} after "
          f"{time.monotonic() - started:.1f} s; errors {errors()[:1]}")
    assert controller.alive(), controller.log()
    if not commands:
        assert any("model" in text for text in errors()), (errors(), controller.log())
