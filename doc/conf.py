# Sphinx configuration of rbd_control's documentation.
#
#   python -m sphinx -W -b html doc doc/_build/html     (test/test_docs.py runs exactly this)
#
# The layout is the one rosdoc2 builds (doc/conf.py + doc/index.rst, as ros2_controllers'
# packages). rosdoc2 execs this file from a wrapping conf.py in another folder, so paths are
# found from Sphinx's source directory in setup(app), never from __file__.
import sys
from pathlib import Path

project = "rbd_control"
author = "rbd_control developers"
copyright = "2026, rbd_control developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx_rtd_theme",
    # "parameter_tables" is added in setup(): it is found relative to the source directory
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
master_doc = "index"
# figures/ holds the script that draws images/; rosdoc2's sphinx-apidoc writes modules.rst and
# rbd_control*.rst here: reference/api.rst documents the public modules instead.
exclude_patterns = ["_build", "figures", "modules.rst", "rbd_control*.rst"]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"          # signatures stay readable; the docstrings say the types
# members a class inherits from a class of ours are its own; not those of Python's base classes
# (exceptions, tuples)
autodoc_default_options = {"members": True,
                           "inherited-members": "BaseException,Exception,ValueError,tuple,object"}

html_theme = "sphinx_rtd_theme"
html_theme_options = {"navigation_depth": 3, "collapse_navigation": False}
html_title = "rbd_control"
html_static_path = ["_static"]
html_css_files = ["rbd_control.css"]


def docstring_as_written(app, what, name, obj, options, lines):
    """The package's docstrings are plain text (aligned columns, indented examples), not
    reStructuredText: show each one as a literal block, exactly as help() would."""
    if any(line.strip() for line in lines):
        lines[:] = [".. code-block:: text", ""] + ["    " + line for line in lines] + [""]


def setup(app):
    source = Path(app.srcdir)
    # the checkout's package (not an installed copy) and the directive that reads its tables
    sys.path.insert(0, str(source.parent))
    sys.path.insert(0, str(source / "_ext"))
    app.setup_extension("parameter_tables")
    app.connect("autodoc-process-docstring", docstring_as_written)
