"""The parameter reference is the tables: the docs page shows every node's table through the
`rbd-parameters` directive (built from rbd_control.params at docs build time, so no list can go
stale), and no hand-kept copy of a list lives anywhere else. test/test_docs.py builds the page
and checks every parameter is on it."""
import re
from pathlib import Path

from rbd_control.params.docs import generated, table, tables
from rbd_control.params.table import COLUMNS, row

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "doc" / "reference" / "parameters.md"


def test_the_page_shows_every_node_table():
    directives = re.findall(r"^```\{rbd-parameters\} (\S+)$", PAGE.read_text(), re.MULTILINE)
    assert sorted(directives) == sorted(node for node, _ in tables()), \
        f"{PAGE.name} must hold one rbd-parameters directive per parameter table"


def test_no_hand_kept_parameter_list():
    for path in [ROOT / "README.md", *sorted((ROOT / "doc").rglob("*.md"))]:
        text = path.read_text()
        assert "| `state_timeout` |" not in text and "| `lockstep` |" not in text, \
            f"{path.relative_to(ROOT)} holds a copied parameter list; the tables generate it"


def test_one_row_per_table_entry():
    for node, parameters in tables():
        rows = [row(p) for p in parameters]
        assert [r[0] for r in rows] == [p.name for p in parameters]
        assert all(len(r) == len(COLUMNS) and r[4] for r in rows), \
            f"{node}: a row lacks its meaning"
    text = generated()
    for name in ("`mode`", "`gains.<joint>.p`", "`gains.<joint>.i_clamp`", "`lockstep`",
                 "`timestep`"):
        assert name in text


def test_an_unknown_node_is_named():
    try:
        table("rbd_nothing")
    except KeyError as exc:
        assert "rbd_nothing" in str(exc) and "rbd_controller" in str(exc)
    else:
        raise AssertionError("table('rbd_nothing') returned a table")
