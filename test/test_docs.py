"""The documentation builds with warnings as errors, so a broken reference, a missing figure or a
docstring Sphinx cannot read fails the suite; and the pages a reader looks for are there.

    python -m sphinx -W -b html doc <out>      (Sphinx etc. from requirements/docs.txt)

About 10-25 s on the 2-core machine (autodoc imports the public modules; their numba kernels
are cached by then)."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rbd_control.params.docs import tables

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("index", "getting_started", "demo", "concepts/dynamics", "concepts/control_laws",
         "concepts/trajectories", "concepts/safety_and_loop", "concepts/identification",
         "concepts/simulators", "howto/own_robot", "howto/real_arm", "howto/moveit",
         "howto/gazebo", "howto/identify", "howto/tune_gains", "howto/payload", "howto/client",
         "howto/two_arms",
         "reference/parameters", "reference/topics", "reference/api", "reference/controller_core",
         "reference/dynamics_api", "benchmarks", "architecture", "limits")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [m for m in ("sphinx", "myst_parser", "sphinx_rtd_theme")
               if importlib.util.find_spec(m) is None]
    assert not missing, f"{', '.join(missing)} not installed: pip install -r requirements/docs.txt"
    out = tmp_path_factory.mktemp("html")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(ROOT / "doc"), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"the docs build failed:\n{done.stderr[-6000:]}"
    return out


def test_every_page_is_built(site):
    missing = [page for page in PAGES if not (site / f"{page}.html").is_file()]
    assert not missing, f"pages not built: {missing}"


def test_the_parameter_page_lists_every_parameter(site):
    html = (site / "reference" / "parameters.html").read_text()
    for node, parameters in tables():
        for p in parameters:
            escaped = p.name.replace("<", "&lt;").replace(">", "&gt;")
            assert escaped in html, f"{node}: {p.name} missing"


def test_the_api_page_documents_the_public_modules(site):
    html = (site / "reference" / "api.html").read_text()
    for name in ("rbd_control.dynamics.rnea", "rbd_control.dynamics.crba",
                 "rbd_control.control.Controller",
                 "rbd_control.control.Controller.set_trajectory", "rbd_control.identification.fit",
                 "rbd_control.sim.Simulator",
                 "rbd_control.params.table.ParameterTable"):
        assert f'id="{name}"' in html, f"{name} is not documented"


def test_the_figures_are_on_their_pages(site):
    for image in ("tracking_error.png", "gravity_compensation.png", "cartesian_impedance_push.png",
                  "identification_before_after.png", "architecture.svg"):
        assert (site / "_images" / image).is_file(), f"{image} not in the built site"
    assert "architecture.svg" in (site / "architecture.html").read_text()
