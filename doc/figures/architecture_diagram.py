"""Draws doc/images/architecture.svg: the layers of rbd_control, top to bottom (each imports only
the layers below it; ARCHITECTURE.md is the source of the table). Plain SVG, no system package.

    python doc/figures/architecture_diagram.py
"""
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "images" / "architecture.svg"
ROWS = [
    [("cli/", "console-script front doors: --help from the tables, no kernel loaded")],
    [("demo/", "the demo: record, run, report, plots, cartesian, identify")],
    [("bringup/", "rbd_bringup: launcher, processes, --excite, waypoints")],
    [("ros/", "every rclpy node: controller/ (rbd_controller), simulator/ (rbd_mujoco_sim), "
              "conversions, qos, run")],
    [("control/", "controller core: Controller, trajectory/, laws/, safety/, model/"),
     ("sim/", "MuJoCo plant: model builder, Simulator"),
     ("identification/", "base parameters, excitation, fit, rbd_identify")],
    [("dynamics/", "URDF -> Model; RNEA, CRBA, LTDL, kinematics, regressor"),
     ("params/", "parameter tables, bounds; no numpy"),
     ("description/", "default arm, .urdf/.xacro -> URDF")],
]
NO_RCLPY_BELOW = 4          # rows from this one on import no rclpy (test/test_layout.py)
COLORS = ["#f3e5f5", "#e8eaf6", "#e3f2fd", "#e0f2f1", "#fff8e1", "#fbe9e7"]
WIDTH, BOX_H, GAP, TOP, LEFT = 820, 58, 26, 44, 20


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wrap(text: str, limit: int) -> list:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + len(word) + 1 > limit:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line]


def svg() -> str:
    height = TOP + len(ROWS) * (BOX_H + GAP) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           '<defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" '
           'orient="auto">'
           '<path d="M0,0 L10,4 L0,8 z" fill="#555"/></marker></defs>',
           f'<text x="{LEFT}" y="24" font-size="15" font-weight="bold">'
           'rbd_control: each layer imports only the layers below it</text>']
    for r, row in enumerate(ROWS):
        y = TOP + r * (BOX_H + GAP)
        width = (WIDTH - 2 * LEFT - (len(row) - 1) * 12) / len(row)
        for k, (name, text) in enumerate(row):
            x = LEFT + k * (width + 12)
            out.append(f'<rect x="{x:.0f}" y="{y}" width="{width:.0f}" height="{BOX_H}" rx="8" '
                       f'fill="{COLORS[r]}" stroke="#555"/>')
            out.append(f'<text x="{x + 10:.0f}" y="{y + 22}" font-size="14" font-weight="bold">'
                       f'rbd_control/{name}</text>')
            for i, line in enumerate(wrap(text, int(width / 6.4))[:2]):
                out.append(f'<text x="{x + 10:.0f}" y="{y + 38 + 13 * i}" font-size="11" '
                           f'fill="#333">{escape(line)}</text>')
        if r < len(ROWS) - 1:
            out.append(f'<line x1="{WIDTH / 2}" y1="{y + BOX_H + 2}" x2="{WIDTH / 2}" '
                       f'y2="{y + BOX_H + GAP - 3}" stroke="#555" stroke-width="1.6" '
                       'marker-end="url(#arrow)"/>')
    y = TOP + NO_RCLPY_BELOW * (BOX_H + GAP) - 11
    out.append(f'<line x1="{LEFT}" y1="{y}" x2="{WIDTH - LEFT}" y2="{y}" stroke="#c62828" '
               'stroke-dasharray="6,4"/>')
    out.append(f'<text x="{WIDTH - LEFT}" y="{y - 4}" font-size="11" fill="#c62828" '
               'text-anchor="end">below this line: no rclpy (test/test_layout.py)</text>')
    return "\n".join(out + ["</svg>"]) + "\n"


if __name__ == "__main__":
    OUT.write_text(svg())
    print(OUT)
