"""A robot description file -> URDF text: the one reader of `.urdf` and `.xacro` files.

    read_description(path, mappings=None) -> str    URDF XML
    parse_mappings(["name:=value", ...]) -> dict    xacro arguments, as on xacro's command line
    is_xacro(path) -> bool                          whether `path` takes xacro arguments
    description_for_launch(path, configurations, arguments, shares) -> str
                                                    the same for a ROS 2 launch file

`.urdf` files are read as they are. `.xacro` files (`robot.xacro`, `robot.urdf.xacro`) are
expanded by the `xacro` package (PyPI `xacro`, ROS `ros-<distro>-xacro`) through its
`process_file` - what `xacro FILE name:=value` prints and what a ROS 2 launch file gives
robot_state_publisher with `Command(['xacro ', FILE, ' name:=value'])`. `mappings` set the
file's `<xacro:arg>`s; `$(find pkg)` resolves through ament_index_python, as under ROS.

Every failure is a `DescriptionError` whose message is one line naming the file: a missing
file, an unknown extension, arguments for a plain URDF, and anything xacro raises (bad XML,
an undefined property, a missing include, ...), so a command line can print it and exit.
No ROS imports: the bringup, the launch files and the identification tools share it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

URDF_SUFFIX = ".urdf"
XACRO_SUFFIX = ".xacro"
MAPPING_SEPARATOR = ":="  # xacro's (and ROS 1 roslaunch's) name:=value


class DescriptionError(ValueError):
    """A description file that cannot be turned into URDF text; the message names the file."""


def parse_mappings(arguments: Iterable[str]) -> dict[str, str]:
    """`["length:=0.4", "prefix:=left_"]` -> `{"length": "0.4", "prefix": "left_"}`."""
    mappings = {}
    for argument in arguments:
        name, separator, value = argument.partition(MAPPING_SEPARATOR)
        if not separator or not name.strip():
            raise DescriptionError(f"xacro argument {argument!r} is not name:=value")
        mappings[name.strip()] = value.strip()
    return mappings


def is_xacro(path: str | Path) -> bool:
    return Path(path).suffix == XACRO_SUFFIX


def read_description(path: str | Path, mappings: Mapping[str, str] | None = None) -> str:
    """The URDF XML of a `.urdf` file, or of a `.xacro` file expanded with `mappings`."""
    path = Path(path)
    if not path.is_file():
        raise DescriptionError(f"{path}: no such file")
    if is_xacro(path):
        return _expand_xacro(path, dict(mappings or {}))
    if path.suffix != URDF_SUFFIX:
        raise DescriptionError(
            f"{path}: unknown extension {path.suffix!r}, expected {URDF_SUFFIX} or {XACRO_SUFFIX}")
    if mappings:
        raise DescriptionError(
            f"{path}: name:=value arguments ({', '.join(mappings)}) apply to {XACRO_SUFFIX} "
            f"files only")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DescriptionError(f"{path}: cannot be read: {error}") from None


def description_for_launch(path: str | Path, configurations: Mapping[str, str],
                           arguments: Iterable[str], shares: Mapping[str, str]) -> str:
    """`read_description` for a launch file. The launch configurations that are not one of
    the launch file's own `arguments` are the xacro arguments of a .xacro (`ros2 launch ...
    description_file:=arm.urdf.xacro prefix:=left_`); a plain URDF ignores them, as they may
    be an including launch file's. `$(find pkg)` in a plain URDF is replaced by `shares[pkg]`
    (xacro resolves it in a .xacro itself)."""
    if not is_xacro(path):
        text = read_description(path)
        for package, share in shares.items():
            text = text.replace(f"$(find {package})", share)
        return text
    own = set(arguments)
    return read_description(path, {k: v for k, v in configurations.items() if k not in own})


def _expand_xacro(path: Path, mappings: dict[str, str]) -> str:
    try:
        import xacro
    except ImportError:
        raise DescriptionError(
            f"{path}: the xacro package is needed for {XACRO_SUFFIX} files "
            "(pip install xacro, or apt install ros-<distro>-xacro)") from None
    try:
        document = xacro.process_file(str(path), mappings=mappings)
    # xacro raises XacroException, expat's ExpatError, NameError, KeyError, ... from
    # expressions in the file: each is the file's fault, reported as one line, no traceback.
    except Exception as error:  # noqa: BLE001
        raise DescriptionError(f"{path}: xacro failed: {_one_line(error, xacro)}") from None
    # xacro's command line prints the document this way
    return document.toprettyxml(indent="  ")


def _one_line(error: Exception, xacro) -> str:
    """xacro's message on one line, and the included file it came from, if any."""
    text = str(error) or repr(error)
    if isinstance(getattr(error, "exc", None), OSError) and error.args and error.args[0]:
        text = error.args[0]  # "No such file or directory: FILE"; the wrapped OSError repeats it
    message = " ".join(text.split())
    stack = [name for name in (getattr(xacro, "filestack", None) or []) if name]
    if len(stack) > 1:
        message += f" (in {stack[-1]})"
    return message
