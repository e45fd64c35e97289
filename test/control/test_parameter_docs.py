"""The README's parameter lists are the ones the tables generate."""
from pathlib import Path

from rbd_control.params.docs import BEGIN, END, generated, readme_block

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_parameter_lists_match_the_tables():
    block = readme_block(README.read_text())
    assert block, f"README.md lacks the generated parameter lists between {BEGIN} and {END}"
    assert block == generated(), "README parameter lists are stale: paste python -m rbd_control.params.docs"


def test_every_table_entry_has_a_row():
    text = generated()
    for name in ("`mode`", "`gains.<joint>.p`", "`gains.<joint>.i_clamp`", "`lockstep`", "`timestep`"):
        assert name in text
