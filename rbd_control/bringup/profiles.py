"""Robot profiles: the ROS 2 parameter files config/profiles/<name>.yaml, found where
config/arm_controller.yaml is (processes.find_config_file). Each sets, for one kind of arm,
rbd_controller's (and rbd_mujoco_sim's) parameters from its vendor's figures; `none` sets
nothing. rbd_bringup --profile (arguments.py) and launch/arm.launch.py profile:= use them
alike: the names present, the files each node gets, and why a file cannot be used.
No rclpy and no numpy here: --help and a launch file read it at once."""
from __future__ import annotations

from pathlib import Path

import yaml

from rbd_control.bringup.processes import CONTROLLER_NODE, SIMULATOR_NODE, find_config_file
from rbd_control.params.controller import CONTROLLER_PARAMETERS
from rbd_control.params.simulator import SIM_PARAMETERS

PROFILES_DIR = "config/profiles"
NO_PROFILE = "none"      # the profile that sets nothing: its file holds no section
# the nodes a profile may set, and the parameter table each one's values must pass
PROFILE_TABLES = {CONTROLLER_NODE: CONTROLLER_PARAMETERS, SIMULATOR_NODE: SIM_PARAMETERS}
# what rcl takes for each parameter type (a YAML integer is refused for a double)
YAML_TYPES = {"bool": (bool,), "integer": (int,), "double": (float,), "string": (str,)}


def profile_file(name: str) -> Path:
    """config/profiles/<name>.yaml where config/arm_controller.yaml is found."""
    return find_config_file(f"{PROFILES_DIR}/{name}.yaml")


def profile_names() -> tuple[str, ...]:
    """The profiles present: the names of config/profiles/*.yaml (none found: ())."""
    try:
        folder = profile_file(NO_PROFILE).parent
    except FileNotFoundError:
        return ()
    return tuple(sorted(path.stem for path in folder.glob("*.yaml")))


def profile_sections(path: Path) -> dict:
    """{node: {parameter: value}} of a profile file (ValueError: not such a file). A section's
    node is the last part of its key: the shipped profiles name theirs '/**/rbd_controller',
    which matches the node in any namespace (rbd_bringup --namespace, namespace:=)."""
    document = yaml.safe_load(Path(path).read_text())
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ValueError(f"{path}: not a ROS 2 parameter file")
    sections = {}
    for node, section in document.items():
        if not isinstance(section, dict) or not isinstance(section.get("ros__parameters"), dict):
            raise ValueError(f"{path}: {node} has no ros__parameters mapping")
        sections[str(node).rstrip("/").rsplit("/", 1)[-1]] = section["ros__parameters"]
    return sections


def profile_refusal(path: Path) -> str | None:
    """Why the profile file `path` cannot be used, or None: a node other than PROFILE_TABLES',
    a parameter not in that node's table or per joint (a profile holds for any robot), a value
    of the wrong YAML type or refused by the table's checks (a negative limits.torque_rate; a
    negative limits.soft_margin, which would put the soft limits outside the hard ones)."""
    try:
        sections = profile_sections(path)
    except (ValueError, yaml.YAMLError) as error:
        return str(error).splitlines()[0]
    for node, values in sections.items():
        table = PROFILE_TABLES.get(node)
        if table is None:
            return f"{path.name}: unknown node {node!r} (one of {', '.join(PROFILE_TABLES)})"
        for name, value in values.items():
            found = table.lookup(name)
            if found is None or found[1] is not None:
                return f"{path.name}: {name} is not a parameter of {node} for every robot"
            kind = found[0].type
            types = YAML_TYPES.get(kind)
            if types and (not isinstance(value, types) or
                          isinstance(value, bool) and bool not in types):
                return f"{path.name}: {name} must be a YAML {kind}, got {value!r}"
            reason = table.validate(name, value)
            if reason:
                return f"{path.name}: {reason}"
    return None


def profile_files_for(name: str, node: str) -> list[Path]:
    """[the profile's file] when it sets parameters of `node`, else [] (the profile 'none')."""
    path = profile_file(name)
    return [path] if profile_sections(path).get(node) else []
