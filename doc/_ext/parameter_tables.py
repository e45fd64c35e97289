"""Sphinx directive `rbd-parameters NODE`: the node's parameter table, built from
rbd_control.params (the one definition of every parameter) at docs build time.

    ```{rbd-parameters} rbd_controller
    ```
"""
from docutils import nodes
from docutils.parsers.rst import Directive

from rbd_control.params.docs import table
from rbd_control.params.table import COLUMNS, row

WIDTHS = (24, 10, 13, 10, 43)   # per cent of the page width


class ParameterTableDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        try:
            parameters = table(self.arguments[0])
        except KeyError as exc:
            raise self.error(str(exc.args[0]))
        group = nodes.tgroup(cols=len(COLUMNS))
        group += [nodes.colspec(colwidth=width) for width in WIDTHS]
        group += nodes.thead("", _row(COLUMNS, literal=()))
        body = nodes.tbody()
        for parameter in parameters:
            name, kind, default, when, meaning = row(parameter)
            cells = (name, kind, "unset" if default is None else default, when, meaning)
            body += _row(cells, literal=(0,) if default is None else (0, 2))
        group += body
        result = nodes.table("", group, classes=["rbd-parameters", "colwidths-given"])
        result["ids"].append(nodes.make_id(f"parameters-{self.arguments[0]}"))
        return [result]


def _row(cells, literal) -> nodes.row:
    out = nodes.row()
    for k, text in enumerate(cells):
        inline = nodes.literal(text, text) if k in literal else nodes.Text(text)
        out += nodes.entry("", nodes.paragraph("", "", inline))
    return out


def setup(app):
    app.add_directive("rbd-parameters", ParameterTableDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
