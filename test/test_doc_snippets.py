"""Every code block of README.md and doc/ says what it is, and the ones that can run, run.

A block is marked by an HTML comment on the line just before it (GitHub and Sphinx show
nothing of it):

    <!-- snippet: KIND [argument] -->

KIND                 what this test does with the block
run                  Python: runs in a subprocess (cwd: a temporary folder holding stand-ins of
                     the user's files, see STAND_INS); bash: runs with `bash -euo pipefail` in
                     the repository's root. Either with a timeout.
node NAME...         a Python snippet that talks to running nodes (sets a parameter, publishes
                     a target): runs beside a stub of those nodes (STUB: same names, parameter
                     services, the subscriptions the pages use), which must see it arrive.
args                 command lines of ours: each rbd_bringup / rbd_identify / rbd_controller
                     line's arguments go through that program's own parser (files named are
                     created empty, nothing starts); `source scripts/<name>` lines are sourced in
                     a clean environment, which must then find rbd_bringup.
ros-install          needs a ROS 2 install (ros2 param, ros2 topic pub, ros2 launch): not run;
                     the next block of the page must be the pip way (run, node, args),
                     unless the argument starts with `alone:` and says why there is none.
controller-yaml ROBOT
                     an rbd_controller parameter file: every name is a parameter of the table
                     with a valid value, the joints are moving joints of ROBOT (`default`: the
                     default arm; else an example-robot-data path), ee_link is one of its links,
                     the file builds a Controller for ROBOT, and every gain it gives is within
                     GAIN_FACTOR of the model's default for that joint.
output | skip REASON what a command prints, a formula, a listing; or too long to run here
                     (the demo, the test suite, a colcon build): not run.

A block without a marker fails test_every_block_is_marked: a new snippet is either run or
says why not. `python -m pytest -s test/test_doc_snippets.py` prints the counts per page.
Figures the pages quote that no parameter table generates are checked in the last tests.
"""
from __future__ import annotations

import importlib.metadata
import os
import random
import re
import shlex
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "doc").rglob("*.md"))
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*([\w-]+)\s*(.*?)\s*-->\s*$")
KINDS = ("run", "node", "args", "ros-install", "controller-yaml", "output", "skip")
RUNNABLE = ("run", "node", "args", "controller-yaml")
TIMEOUT_S = 60
GAIN_FACTOR = 5.0      # a gain a page gives is within 1/5 .. 5x the model's default
OUR_PROGRAMS = {"rbd_bringup": "rbd_control.bringup.launcher",
                "rbd_identify": "rbd_control.identification.cli"}


@dataclass(frozen=True)
class Snippet:
    page: str          # relative to the repository
    line: int          # of the block's first line (1-based, the fence itself)
    kind: str | None
    argument: str
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def page_snippets(page: Path) -> list[Snippet]:
    """The code blocks of a Markdown page but MyST directives ({figure}, {include} ...)."""
    from markdown_it import MarkdownIt
    text = page.read_text()
    lines = text.splitlines()
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type not in ("fence", "code_block") or token.info.strip().startswith("{"):
            continue
        first = token.map[0]
        marker = MARKER.match(lines[first - 1]) if first > 0 else None
        found.append(Snippet(str(page.relative_to(ROOT)), first + 1,
                             marker.group(1) if marker else None,
                             marker.group(2) if marker else "",
                             token.info.strip().split(" ")[0], token.content))
    return found


SNIPPETS = [snippet for page in PAGES for snippet in page_snippets(page)]


def of_kind(*kinds, language=None):
    return [pytest.param(s, id=s.id) for s in SNIPPETS
            if s.kind in kinds and (language is None or s.language in language)]


def test_every_block_is_marked():
    counts = {}
    for snippet in SNIPPETS:
        counts.setdefault(snippet.page, Counter())[snippet.kind] += 1
    print("\ndoc snippets per page (runnable: run, node, args, controller-yaml):")
    for page, count in counts.items():
        runnable = sum(count[kind] for kind in RUNNABLE)
        rest = ", ".join(f"{kind} {n}" for kind, n in sorted(count.items(), key=str))
        print(f"  {page:36s} {runnable} runnable of {sum(count.values())} ({rest})")
    total = sum(1 for s in SNIPPETS if s.kind in RUNNABLE)
    print(f"  {total} runnable blocks of {len(SNIPPETS)} on {len(counts)} pages")
    unmarked = [s.id for s in SNIPPETS if s.kind is None]
    assert not unmarked, ("code blocks without a `<!-- snippet: KIND -->` line before them "
                          f"(test/test_doc_snippets.py says which): {unmarked}")
    unknown = [f"{s.id} {s.kind}" for s in SNIPPETS if s.kind not in KINDS]
    assert not unknown, f"unknown snippet kinds (known: {KINDS}): {unknown}"
    assert total >= 15, f"only {total} runnable blocks: were markers lost?"


def test_ros_install_blocks_have_the_pip_way_beside_them():
    missing = []
    for k, snippet in enumerate(SNIPPETS):
        if snippet.kind != "ros-install" or snippet.argument.startswith("alone:"):
            continue
        after = SNIPPETS[k + 1] if k + 1 < len(SNIPPETS) else None
        if after is None or after.page != snippet.page \
                or after.kind not in ("run", "node", "args"):
            missing.append(snippet.id)
    assert not missing, f"ros-install blocks without the pip way as the next block: {missing}"


# --- run ----------------------------------------------------------------------------------

def default_arm_urdf() -> str:
    from rbd_control.description import default_arm_urdf as text
    return text()


def example_robot(relative: str) -> Path:
    """An example-robot-data description (a cmeel wheel: under site-packages/cmeel.prefix)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (requirements/test.txt)")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")) / relative


# the user's files the snippets name, and what stands in for them
STAND_INS = {"my_arm.urdf": default_arm_urdf}


def snippet_env() -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, PYTHONPATH=path, MPLBACKEND="Agg")


@pytest.fixture
def user_folder(tmp_path):
    for name, text in STAND_INS.items():
        (tmp_path / name).write_text(text())
    return tmp_path


def run_python(code: str, cwd: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env or snippet_env(),
                          capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("snippet", of_kind("run", language=("python",)))
def test_python_snippet_runs(snippet, user_folder):
    done = run_python(snippet.code, user_folder)
    assert done.returncode == 0, (
        f"{snippet.id} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")


@pytest.mark.parametrize("snippet", of_kind("run", language=("bash", "sh", "shell")))
def test_shell_snippet_runs(snippet):
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", snippet.code], cwd=ROOT,
                          env=snippet_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, (
        f"{snippet.id} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")


# --- args ---------------------------------------------------------------------------------

def command_lines(code: str):
    """The shell lines of a block, continuation lines joined, comments and prompts dropped."""
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "$":
            words = words[1:]
        if words:
            yield words


def parse_with_our_parser(words, folder: Path):
    """words[0]'s own argument parser on words[1:], in `folder`, the files named created."""
    import importlib
    for word in words[1:]:
        candidate = word.split(":=")[-1]
        if re.search(r"\.(urdf|xacro|yaml|npz)$", candidate) and "/" not in candidate.lstrip("./"):
            (folder / candidate).write_text("")
        elif re.search(r"\.(urdf|xacro|yaml|npz)$", candidate):
            (folder / candidate).parent.mkdir(parents=True, exist_ok=True)
            (folder / candidate).write_text("")
    module = importlib.import_module(OUR_PROGRAMS[words[0]])
    before = Path.cwd()
    os.chdir(folder)
    try:
        module.parse_args(words[1:])
    except SystemExit as exit_:
        raise AssertionError(f"{' '.join(words)}: {words[0]} refuses these arguments") from exit_
    finally:
        os.chdir(before)


@pytest.mark.parametrize("snippet", of_kind("args"))
def test_command_lines_parse(snippet, tmp_path):
    checked = 0
    for words in command_lines(snippet.code):
        if words[0] in ("source", ".") and words[1].startswith("scripts/"):
            # RBD_VENV: the venv running this test (CI builds it outside the clone, where
            # the reader's default .venv/ is not)
            clean = {"HOME": os.environ.get("HOME", "/tmp"), "PATH": "/usr/bin:/bin",
                     "RBD_VENV": sys.prefix}
            script = f"source {shlex.join(words[1:])} && command -v rbd_bringup"
            done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=clean,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
            assert done.returncode == 0, f"{snippet.id}: {' '.join(words)}: {done.stderr}"
            checked += 1
        elif words[0] in OUR_PROGRAMS:
            parse_with_our_parser(words, tmp_path)
            checked += 1
    assert checked, f"{snippet.id}: no line of ours to check (mark it otherwise)"


# --- controller-yaml ----------------------------------------------------------------------

def flattened(tree: dict, prefix="") -> dict:
    """{'gains': {'elbow': {'p': 1.0}}} -> {'gains.elbow.p': 1.0}, as ROS reads a YAML."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(flattened(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@pytest.mark.parametrize("snippet", of_kind("controller-yaml"))
def test_controller_yaml_fits_its_robot(snippet, tmp_path):
    import numpy as np

    from rbd_control.bringup.processes import controller_parameters
    from rbd_control.control import Controller, ControllerConfig
    from rbd_control.dynamics import load_urdf
    from rbd_control.params.controller import CONTROLLER_PARAMETERS as table

    robot = snippet.argument
    urdf = default_arm_urdf() if robot == "default" else example_robot(robot).read_text()
    model = load_urdf(urdf)
    (tmp_path / "params.yaml").write_text(snippet.code)
    values = flattened(controller_parameters(tmp_path / "params.yaml"))
    joints = values.get("joints") or list(model.joint_names)
    unknown = sorted(set(joints) - set(model.joint_names))
    assert not unknown, f"{snippet.id}: {unknown} are not moving joints of {robot}"
    for name, value in values.items():
        assert table.lookup(name) is not None, f"{snippet.id}: {name} is not a parameter"
        refusal = table.validate(name, value, set(joints))
        assert refusal is None, f"{snippet.id}: {refusal}"
    if values.get("ee_link"):
        links = re.findall(r'<link\s+name="([^"]+)"', urdf)
        assert values["ee_link"] in links, f"{snippet.id}: ee_link is not a link of {robot}"
    config = ControllerConfig.from_parameters(
        lambda name: values.get(name, table.default(name)))
    controller = Controller(model, config)
    defaults = dict(zip(controller.joint_names, controller.gains.kp))
    damping = dict(zip(controller.joint_names, controller.gains.kd))
    for name, value in values.items():
        found = table.lookup(name)
        if found[0].name in ("gains.<joint>.p", "gains.<joint>.d"):
            default = (defaults if name.endswith(".p") else damping)[found[1]]
            factor = value / default
            assert 1 / GAIN_FACTOR <= factor <= GAIN_FACTOR, (
                f"{snippet.id}: {name} {value} is {factor:.1f}x the model's default "
                f"{default:.3g}: not an example a reader should copy")
    assert np.all(np.isfinite(controller.gains.kp))


# --- node: snippets beside a stub of the nodes ----------------------------------------------

STUB = r"""
import sys
import rclpy
from geometry_msgs.msg import InertiaStamped, PoseStamped
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

rclpy.init()
controller = rclpy.create_node("rbd_controller", allow_undeclared_parameters=True)
controller.declare_parameter("gains.elbow.p", 16.05)
controller.declare_parameter("mode", "feedforward_pd")
simulator = rclpy.create_node("rbd_mujoco_sim")


def said(text):
    print(text, flush=True)


def on_set(parameters):
    said("set " + " ".join(f"{p.name}={p.value}" for p in parameters))
    return SetParametersResult(successful=True)


controller.add_on_set_parameters_callback(on_set)
for node, kind, topic in ((controller, InertiaStamped, "~/payload"),
                          (controller, PoseStamped, "~/target_pose"),
                          (controller, JointTrajectory, "~/joint_trajectory"),
                          (simulator, JointState, "~/joint_disturbance")):
    node.create_subscription(kind, topic, lambda msg, t=topic: said("heard " + t), 10)
executor = rclpy.executors.SingleThreadedExecutor()
executor.add_node(controller)
executor.add_node(simulator)
said("ready")
executor.spin()
"""


class Stub:
    def __init__(self, env):
        self.lines: list[str] = []
        self.process = subprocess.Popen([sys.executable, "-c", STUB], env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for("ready", 0, 30.0)

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def wait_for(self, prefix: str, start: int, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = [line for line in self.lines[start:] if line.startswith(prefix)]
            if seen:
                return seen
            assert self.process.poll() is None, f"the stub ended: {self.lines}"
            time.sleep(0.05)
        return []


@pytest.fixture(scope="module")
def stub_env():
    first, last = map(int, os.environ.get("RBD_TEST_DOMAINS", "101-232").split("-"))
    return dict(snippet_env(), ROS_DOMAIN_ID=str(random.randint(first, last)),
                ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")


@pytest.fixture(scope="module")
def stub(stub_env):
    pytest.importorskip("rclpy")
    nodes = Stub(stub_env)
    yield nodes
    nodes.process.terminate()
    nodes.process.wait(10)


@pytest.mark.parametrize("snippet", of_kind("node"))
def test_node_snippet_reaches_the_nodes(snippet, stub, stub_env, user_folder):
    start = len(stub.lines)
    done = run_python(snippet.code, user_folder, stub_env)
    assert done.returncode == 0, (
        f"{snippet.id} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    seen = stub.wait_for("", start, 5.0)
    assert any(line.startswith(("set ", "heard ")) for line in seen), (
        f"{snippet.id}: the nodes heard nothing of it; stub said {stub.lines[start:]}")


# --- figures the pages quote --------------------------------------------------------------

def page(relative: str) -> str:
    return (ROOT / relative).read_text()


def test_kernel_count_quoted_is_the_real_one():
    """getting_started's count is what compile_kernels compiles: every module of
    rbd_control.dynamics imported (the kernels are all there)."""
    import importlib
    import pkgutil

    import rbd_control.dynamics
    from rbd_control.dynamics.spatial import KERNELS
    for module in pkgutil.walk_packages(rbd_control.dynamics.__path__, "rbd_control.dynamics."):
        importlib.import_module(module.name)
    text = page("doc/getting_started.md")
    quoted = {int(n) for n in re.findall(r"(\d+) kernels", text)}
    quoted |= {int(n) for n in re.findall(r"all (\d+)\b", text)}
    assert quoted == {len(KERNELS)}, f"getting_started quotes {quoted}, there are {len(KERNELS)}"


def test_max_state_age_default_quoted_is_the_tables():
    from rbd_control.params.controller import CONTROLLER_PARAMETERS
    milliseconds = round(CONTROLLER_PARAMETERS.default("max_state_age") * 1000)
    for relative in ("doc/howto/tune_gains.md", "doc/concepts/safety_and_loop.md"):
        quoted = re.findall(r"max_state_age`?,? \(?default (\d+) ms", page(relative))
        assert quoted, f"{relative} no longer quotes max_state_age's default: update this test"
        assert set(quoted) == {str(milliseconds)}, (
            f"{relative} says max_state_age's default is {quoted} ms; it is {milliseconds} ms")


def test_payload_gain_factors_quoted_are_measured():
    """payload.md: the demo's 1.5 kg tool changes the default gains by the factors it quotes."""
    import numpy as np

    from rbd_control.control import Controller, ControllerConfig
    from rbd_control.demo.plant import TRUE_PAYLOAD as tool
    from rbd_control.dynamics import load_urdf

    controller = Controller(load_urdf(default_arm_urdf()), ControllerConfig())
    before = controller.gains.kp.copy()
    controller.set_payload(tool.link, tool.mass, tool.com, tool.inertia)
    factor = dict(zip(controller.joint_names, controller.gains.kp / before))
    text = page("doc/howto/payload.md")
    for joint in ("wrist_2", "wrist_3"):
        assert f"{joint}'s by {factor[joint]:.1f}x" in text, (
            f"payload.md should say {joint}'s by {factor[joint]:.1f}x")
    others = [abs(f - 1.0) for j, f in factor.items() if j not in ("wrist_2", "wrist_3")]
    assert np.max(others) < 0.05, f"the other joints' gains moved: {factor}"


def test_every_topic_of_the_nodes_is_on_the_topics_page():
    """Each `~/name` topic or service a node of ours creates is named on topics.md (or on the
    page it links for it)."""
    created = set()
    for path in (ROOT / "rbd_control" / "ros").rglob("*.py"):
        created |= set(re.findall(r"""['"](~/\w+)['"]""", path.read_text()))
    pages = page("doc/reference/topics.md") + page("doc/howto/payload.md") + page(
        "doc/howto/moveit.md") + page("doc/concepts/simulators.md")
    missing = sorted(name for name in created if name not in pages)
    assert not missing, f"not on doc/reference/topics.md: {missing}"
