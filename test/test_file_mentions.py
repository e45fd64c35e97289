"""Every file of ours that a docstring, a comment or a documentation page names exists.

A renamed or removed module leaves its old name behind in the prose that points at it; this
finds those pointers. What is read: the docstrings (string statements) and comments of every
Python file, the comments of shell, YAML, setup.cfg and requirements files, and every
Markdown and reStructuredText page (doc/, README.md, ARCHITECTURE.md, the packages' README.md
and dynamics/API.md). Code strings are not read: tests name missing files on purpose.

A mention is a run of path characters ending in a file extension (`gains.py`,
`ros/controller/intake.py`, `config/arm_controller.yaml`). It is checked when it is ours:
- a path whose first folder is a folder of this repository (`ros/controller/intake.py`,
  `test/sim/conftest.py`, a page's link up to `..`); it exists if it names a file from the
  repository root, from the mentioning file's folder, or as the end of a real path at a folder
  boundary (`safety/checks.py` is rbd_control/control/safety/checks.py);
- an installed path, share/rbd_control/... (setup.py's data_files: the default arm goes to
  urdf/, launch/, config/ and package.xml keep their names);
- a bare name of our code or pages, ending .py, .sh, .md or .rst: a file of that name must exist
  somewhere in the repository.
Not checked, by rule: other projects' files (a first folder that is not ours: numpy/...,
panda_description/urdf/...; C++ sources, we ship none), absolute paths, and bare names of
descriptions, parameter files, recordings and figures (.urdf, .yaml, .npz, .png ...): in usage
lines those are the user's files (my_arm.urdf.xacro) or what a tool writes at run time
(identified.urdf, friction.yaml, report.txt). The bare names of our own kind that are not files
are listed in NOT_FILES with the reason.
"""
from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# folders that are not the project: environments, build output, caches, run-time output
SKIPPED_FOLDERS = {'build', 'install', 'log', '__pycache__', 'demo_output'}

EXTENSIONS = ('py', 'sh', 'md', 'rst', 'yaml', 'yml', 'urdf', 'xacro', 'srdf', 'xml', 'cfg',
              'toml', 'txt', 'json', 'ini', 'svg', 'png', 'npz', 'csv', 'msg', 'action', 'css')
MENTION = re.compile(r'[\w./-]+\.(?:' + '|'.join(EXTENSIONS) + r')\b')
URL = re.compile(r'\w+://\S+')
# bare names checked: our code and our pages
CHECKED_BARE = ('.py', '.sh', '.md', '.rst')
# bare names of that kind that are not files
NOT_FILES = {
    'data.md': "dynamics' Data.md, the packed workspace array the kernels take (an attribute)",
    'script.py': "test/ros/conftest.py's `python script.py`, any script a test starts",
    'modules.rst': "the page rosdoc2's sphinx-apidoc writes into its own build (doc/conf.py)",
}
# share/rbd_control/<prefix> -> where the file is in the repository (setup.py's data_files)
INSTALLED = (('share/rbd_control/urdf/', 'rbd_control/description/'),
             ('share/rbd_control/', ''))


def project_files() -> list[str]:
    """Every file of the project, relative to the repository root, '/'-separated."""
    found = []
    for folder, subfolders, files in os.walk(REPO):
        subfolders[:] = [name for name in subfolders if not name.startswith('.')
                         and name not in SKIPPED_FOLDERS and not name.endswith('.egg-info')]
        relative = Path(folder).relative_to(REPO)
        found += [(relative / name).as_posix() for name in files]
    return sorted(found)


FILES = project_files()
FILE_SET = set(FILES)
NAMES = {path.rsplit('/', 1)[-1] for path in FILES}
FOLDERS = {part for path in FILES for part in path.split('/')[:-1]}


def python_prose(text: str):
    """(line, text) of the comments and the string statements (docstrings) of Python source."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            for offset, line in enumerate(node.value.value.split('\n')):
                yield node.lineno + offset, line


def prose(path: str):
    """(line, text) of what a file says about other files."""
    text = (REPO / path).read_text(encoding='utf-8')
    if path.endswith('.py'):
        yield from python_prose(text)
    elif path.endswith(('.md', '.rst')):
        yield from enumerate(text.split('\n'), 1)
    elif path.endswith(('.sh', '.yaml', '.cfg', '.txt')):
        for number, line in enumerate(text.split('\n'), 1):
            if '#' in line:
                yield number, line[line.index('#'):]


def read_files() -> list[str]:
    return [path for path in FILES
            if path.endswith(('.py', '.md', '.rst', '.sh', '.yaml', '.cfg'))
            or (path.startswith('requirements/') and path.endswith('.txt'))]


def is_ours(mention: str) -> bool:
    if mention.startswith('share/rbd_control/'):
        return True
    if '/' in mention:
        first = mention.split('/', 1)[0]
        return first == '..' or first in FOLDERS
    return mention.endswith(CHECKED_BARE) and not mention.startswith('.') \
        and mention.lower() not in NOT_FILES


def exists(mention: str, mentioned_in: str) -> bool:
    for installed, source in INSTALLED:
        if mention.startswith(installed):
            return source + mention[len(installed):] in FILE_SET
    if '/' not in mention:
        return mention in NAMES
    beside = os.path.normpath(os.path.join(os.path.dirname(mentioned_in), mention))
    return (mention in FILE_SET or Path(beside).as_posix() in FILE_SET
            or any(path.endswith('/' + mention) for path in FILES))


def mentions():
    """(file, line, mention) of every mention of a file of ours."""
    for path in read_files():
        for number, text in prose(path):
            for match in MENTION.finditer(URL.sub(' ', text)):
                mention = match.group(0).removeprefix('./')
                if is_ours(mention):
                    yield path, number, mention


def candidates(mention: str) -> list[str]:
    """The files of the same name, to say where a moved file went."""
    name = mention.rsplit('/', 1)[-1]
    return [path for path in FILES if path.rsplit('/', 1)[-1] == name][:4]


def test_every_file_mentioned_exists():
    found = list(mentions())
    assert len(found) > 500, f'only {len(found)} mentions found: is the scan reading the files?'
    missing = []
    for path, number, mention in found:
        if not exists(mention, path):
            near = candidates(mention)
            hint = f' (a file of that name: {", ".join(near)})' if near else ''
            missing.append(f'{path}:{number}: {mention}{hint}')
    assert not missing, (f'{len(missing)} mentions of files that do not exist:\n'
                         + '\n'.join(missing))


def test_the_rules_read_a_mention_as_meant():
    assert exists('safety/checks.py', 'ARCHITECTURE.md')
    assert exists('../reference/parameters.md', 'doc/howto/tune_gains.md')
    assert exists('share/rbd_control/urdf/rbd_arm.urdf', 'README.md')
    assert exists('share/rbd_control/launch/arm.launch.py', 'README.md')
    assert not exists('ros/intake.py', 'README.md')          # ros/controller/intake.py
    assert not exists('checks.py/safety', 'README.md')
    assert not exists('afety/checks.py', 'README.md')        # only at a folder boundary
    assert is_ours('parameters.py') and is_ours('doc/limits.md')
    assert not is_ours('numpy/_core/_methods.py')            # another project's file
    assert not is_ours('my_arm.urdf.xacro') and not is_ours('identified/friction.yaml')
    assert not is_ours('data.md') and not is_ours('.launch.py')
