"""Reading robot_description text safely, for the loader and the MuJoCo plant.

robot_description arrives over the network, so the text is first read by a bare expat pass that
refuses any DOCTYPE (no external entities, no entity bombs), reports where XML is malformed, and
keeps only what dynamics reads, at most four levels deep (so neither this module nor
urdf_parser_py recurses over a hostile nesting depth); only then does urdf_parser_py read it.
"""
from __future__ import annotations

import xml.parsers.expat
from contextlib import contextmanager
from xml.sax.saxutils import quoteattr

from rbd_control.dynamics.errors import ModelError

# element -> the children dynamics reads; everything else (visuals, transmissions, gazebo and
# ros2_control tags, and any nesting below these) is dropped before urdf_parser_py sees it
KEPT = {"robot": {"link", "joint"}, "link": {"inertial"},
        "inertial": {"origin", "mass", "inertia"},
        "joint": {"parent", "child", "origin", "axis", "limit", "dynamics", "mimic",
                  "safety_controller"}}


def _as_text(xml) -> str:
    if isinstance(xml, bytes):
        try:
            return xml.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ModelError(f"robot description is not UTF-8: {error}") from error
    if not isinstance(xml, str):
        raise ModelError(f"robot description must be a string, got {type(xml).__name__}")
    if not xml.strip():
        raise ModelError("robot description is empty")
    return xml


def dynamics_elements(description: str | bytes) -> str:
    """One expat pass: refuse DTDs (where entities live), report malformed XML with its
    position, and re-emit only the elements in KEPT, with their attributes.

    Real URDFs carry visuals, materials, transmissions and simulator tags that urdf_parser_py
    rejects or complains about although they say nothing about dynamics. A robot without a name
    gets one. The stack below is a list, so any nesting depth is read without recursion.
    The MuJoCo plant is built from the same text.
    """
    text = _as_text(description)
    parser = xml.parsers.expat.ParserCreate()
    out, stack = [], []      # stack: per open element, whether it is kept

    def refuse_doctype(name, *_):
        raise ModelError(f"robot description declares a DOCTYPE ({name!r}); DTDs and entities "
                         "are refused because the text may come from the network")

    def start(tag, attrs):
        if not stack:
            if tag != "robot":
                raise ModelError(f"robot description's root element is <{tag}>, not <robot>")
            attrs = {**attrs, "name": attrs.get("name") or "robot"}
        keep = not stack or (stack[-1] is not None and tag in KEPT.get(stack[-1], ()))
        stack.append(tag if keep else None)
        if keep:
            out.append(f"<{tag}" + "".join(f" {k}={quoteattr(v)}" for k, v in attrs.items())
                       + ">")

    def end(tag):
        if stack.pop() is not None:
            out.append(f"</{tag}>")

    parser.StartDoctypeDeclHandler = refuse_doctype
    parser.EntityDeclHandler = refuse_doctype
    parser.StartElementHandler, parser.EndElementHandler = start, end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as error:
        raise ModelError(f"robot description is not well-formed XML: {error}") from error
    return "".join(out)


@contextmanager
def _collect_parser_complaints(sink):
    # urdf_parser_py reports unknown tags (gazebo, ros2_control, transmission) through a
    # module-level hook that prints to stderr; collect them instead of spamming the console.
    from urdf_parser_py.xml_reflection import core
    previous, core.on_error = core.on_error, sink.append
    try:
        yield
    finally:
        core.on_error = previous


def parse_with_urdf_parser_py(text: str):
    from urdf_parser_py.urdf import URDF
    complaints = []
    with _collect_parser_complaints(complaints):
        try:
            robot = URDF.from_xml_string(text)
        except Exception as error:  # urdf_parser_py raises bare Exception/AssertionError types
            raise ModelError(f"invalid URDF: {error}") from error
    if not robot.links:
        raise ModelError("URDF has no <link> elements")
    return robot
