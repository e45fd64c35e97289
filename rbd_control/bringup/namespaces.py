"""One arm's ROS namespace, for rbd_bringup --namespace and arm.launch.py namespace:=.

    absolute_namespace('left')  -> '/left'  ('' and '/': '', the root namespace);
                                   ValueError with rcl's reason for a name ROS refuses
    namespace_ros_args('/left', clock=True)
                                -> the --ros-args that move a node there: '-r __ns:=/left'
                                   and, with clock, '-r /clock:=/left/clock' (rbd_bringup)
    clock_remapping('/left')    -> [('/clock', '/left/clock')] (arm.launch.py's Node remappings)
    section_matches, unmatched_section
                                -> whether a parameter file's section applies to a node in
                                   a namespace ('rbd_controller:' only to /rbd_controller)

Every topic, service and action of our nodes is relative ('joint_states',
'effort_controller/commands', 'robot_description') or private ('~/...'), so `__ns` moves
them all. Two stay absolute: /diagnostics, which diagnostic_aggregator and rqt_robot_monitor
read as one global topic (each status names its node's namespace instead:
ros/controller/diagnostics.py), and /clock, which rclpy's TimeSource subscribes as an absolute
name (one clock per ROS graph is the convention of a single simulation). Two simulators must
not both drive one /clock, so each run in a namespace remaps it into that namespace, on its
simulator (which publishes it) and its controller (whose TimeSource subscribes it through the
node's remap rules).

rclpy is imported only when a namespace is checked: --help and a launch file's
--show-args stay instant (test_layout).
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = ""


def absolute_namespace(text: str) -> str:
    """'/left' for 'left' or '/left', '' (the root namespace) for '' or '/'; ValueError with
    the reason rcl gives (rclpy.validate_namespace) for anything ROS refuses as a namespace."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a string")
    if text in ("", "/"):
        return ROOT
    candidate = text if text.startswith("/") else "/" + text
    from rclpy.exceptions import InvalidNamespaceException
    from rclpy.validate_namespace import validate_namespace
    try:
        validate_namespace(candidate)
    except InvalidNamespaceException as error:
        raise ValueError(f"{text!r} is not a ROS namespace: {_reason(error, candidate, text)}") \
            from None
    return candidate


def _reason(error: Exception, candidate: str, text: str) -> str:
    """rclpy's three-line message (reason, the name, a caret under the bad character) as one
    phrase: 'namespace must not ...: at character 5'."""
    lines = str(error).splitlines()
    reason = lines[0].removeprefix("Invalid namespace: ").rstrip(":") if lines else str(error)
    if len(lines) >= 3 and "^" in lines[2]:
        # the caret sits under the quoted name, which starts 3 characters in; the user did
        # not type the '/' we added
        index = lines[2].index("^") - 3 - (len(candidate) - len(text))
        if 0 <= index < len(text):
            return f"{reason} (character {index + 1}, {text[index]!r})"
    return reason


def clock_remapping(namespace: str) -> list[tuple[str, str]]:
    """[('/clock', '/left/clock')] for '/left' (launch_ros Node's remappings), [] for the root
    namespace."""
    return [("/clock", f"{namespace}/clock")] if namespace else []


def namespace_ros_args(namespace: str, clock: bool) -> list[str]:
    """--ros-args remap rules that put a node in `namespace` (absolute_namespace's result) and,
    with `clock`, its /clock there too; [] for the root namespace."""
    if not namespace:
        return []
    rules = [f"__ns:={namespace}",
             *(f"{old}:={new}" for old, new in (clock_remapping(namespace) if clock else []))]
    return [arg for rule in rules for arg in ("-r", rule)]


def section_matches(key: str, node: str) -> bool:
    """Whether a parameter file's section `key` ('/**', '/**/rbd_controller', 'rbd_controller',
    '/left/rbd_controller') applies to the node whose fully qualified name is `node`
    ('/left/rbd_controller'), by rcl's rules: a key without a leading '/' is absolute, '**'
    stands for any number of namespace parts, '*' for one part."""
    key = key if key.startswith("/") else "/" + key
    pattern = "".join("(/[^/]+)*" if part == "**" else "/[^/]+" if part == "*" else
                      "/" + re.escape(part) for part in key.split("/")[1:])
    return re.fullmatch(pattern, node) is not None


def unmatched_section(path: Path, namespace: str, node: str) -> str | None:
    """Why the parameter file `path`, given to `node` in `namespace`, would set nothing of it
    although it has a section for that node elsewhere ('rbd_controller:' matches only
    /rbd_controller): the reason, naming the key to use instead; None when it applies."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return None     # the node says what it cannot read
    if not isinstance(document, dict):
        return None
    qualified = f"{namespace}/{node}"
    keys = [str(key) for key in document]
    if any(section_matches(key, qualified) for key in keys):
        return None
    meant = [key for key in keys if key.rstrip("/").rsplit("/", 1)[-1] == node]
    if not meant:
        return None
    return (f"{path}: its section {meant[0]!r} does not match {qualified}: name it "
            f"'/**/{node}' (any namespace) or '/**'")
