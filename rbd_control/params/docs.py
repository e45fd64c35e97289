"""The parameter reference, generated from the parameter tables.

The documentation's page doc/reference/parameters.md is built from these tables by the
Sphinx directive `rbd-parameters` (doc/_ext/parameter_tables.py), so it cannot go stale: a new
table entry is on the page at the next docs build. For a terminal or a Markdown file:

    python -m rbd_control.params.docs        # both nodes' lists as Markdown

test/control/test_parameter_docs.py checks the page shows every table; test/test_docs.py builds it.
"""
from rbd_control.params.controller import CONTROLLER_PARAMETERS
from rbd_control.params.simulator import SIM_PARAMETERS
from rbd_control.params.table import ParameterTable, markdown


def tables() -> tuple:
    """(node name, its table), for every node with a parameter table."""
    return (("rbd_controller", CONTROLLER_PARAMETERS), ("rbd_mujoco_sim", SIM_PARAMETERS))


def table(node: str) -> ParameterTable:
    """The parameter table of `node` (KeyError naming the known nodes otherwise)."""
    known = dict(tables())
    if node not in known:
        raise KeyError(f"no parameter table for node {node!r}; known: {', '.join(known)}")
    return known[node]


def generated() -> str:
    """Every node's parameter list in Markdown."""
    return "\n".join(markdown(t, f"{node} parameters") for node, t in tables())


if __name__ == "__main__":
    print(generated(), end="")
