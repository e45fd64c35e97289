"""The package's layout holds: every import runs down the layers, no module imports itself back
through others, the ROS-free layers import no ROS, and the parameter tables load without numpy.

Layers (ARCHITECTURE.md): params and dynamics at the bottom, then identification and control,
sim, the ROS adapters, bringup, the demo, the console scripts on top.
"""
import ast
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / 'rbd_control'

# package -> the packages of ours it may import (besides itself)
ALLOWED = {
    'params': set(),
    'dynamics': set(),
    'description': set(),
    'identification': {'dynamics', 'description'},
    'control': {'dynamics', 'params'},
    'sim': {'dynamics'},
    'ros': {'params', 'dynamics', 'description', 'identification', 'control', 'sim'},
    'bringup': {'params', 'dynamics', 'description', 'identification', 'control', 'sim', 'ros'},
    'demo': {'params', 'dynamics', 'description', 'identification', 'control', 'sim', 'ros',
             'bringup'},
    'cli': {'params', 'ros'},
}
ROS_FREE = ('params', 'dynamics', 'description', 'identification', 'control', 'sim')
NO_NUMERICS = ('params',)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob('*.py')}


def imports(path: Path):
    """The modules `path` imports (absolute names), lazy and TYPE_CHECKING imports included;
    `from package import name` counts as the submodule when `name` is one."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f'{path.relative_to(REPO)}: relative import (use rbd_control.*)'
            for alias in node.names:
                sub = f'{node.module}.{alias.name}'
                found.add(sub if sub in MODULES else node.module)
    return found


def layer(module: str) -> str:
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else ''


GRAPH = {name: {m for m in imports(path) if m in MODULES} for name, path in MODULES.items()}


def test_every_import_runs_down_the_layers():
    upward = [f'{name} -> {target}' for name, targets in GRAPH.items() for target in targets
              if layer(target) != layer(name) and layer(target) not in ALLOWED[layer(name)]]
    assert not upward, 'imports against the layers:\n' + '\n'.join(sorted(upward))


def test_no_import_cycles():
    """Depth-first search over the module graph; any back edge is a cycle."""
    state, cycles = {}, []

    def visit(name, stack):
        state[name] = 'open'
        stack.append(name)
        for target in sorted(GRAPH[name]):
            if state.get(target) == 'open':
                cycles.append(' -> '.join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[name] = 'done'

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [])
    assert not cycles, 'import cycles:\n' + '\n'.join(cycles)


def test_ros_free_layers_import_no_ros():
    for name, path in MODULES.items():
        if layer(name) in ROS_FREE:
            ros = {m for m in imports(path)
                   if m.split('.')[0] == 'rclpy' or m.split('.')[0].endswith(('_msgs', '_interfaces'))}
            assert not ros, f'{name} imports {ros}'


def test_parameter_tables_import_no_numerics():
    for name, path in MODULES.items():
        if layer(name) in NO_NUMERICS:
            heavy = {m for m in imports(path) if m.split('.')[0] in ('numpy', 'numba', 'scipy')}
            assert not heavy, f'{name} imports {heavy}'


def test_no_module_over_400_lines():
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > 400}
    assert not long, f'modules over 400 lines: {long}'


def launch_file_imports():
    """What the launch files import of ours (they run inside `ros2 launch`, --show-args too)."""
    return sorted({m for launch in (REPO / 'launch').glob('*.launch.py') for m in imports(launch)
                   if m.startswith('rbd_control')})


def test_parameter_tables_and_launch_imports_load_no_kernel():
    """`import rbd_control.params` and what the launch files import load neither numba nor
    numpy (a fresh install would compile every kernel: a minute before --show-args answers)."""
    modules = ['rbd_control.params', 'rbd_control.params.docs', 'rbd_control.cli',
               *launch_file_imports()]
    code = ('import sys, time; t = time.perf_counter(); '
            + '; '.join(f'import {m}' for m in modules)
            + '; print(time.perf_counter() - t); '
            'print(sorted({m.split(".")[0] for m in sys.modules} & {"numba", "numpy", "rclpy"}))')
    start = time.perf_counter()
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=REPO,
                         check=True).stdout.split('\n')
    print(f'imported {modules} in {float(out[0]) * 1e3:.0f} ms '
          f'(process {time.perf_counter() - start:.2f} s)')
    assert out[1] == '[]', f'{modules} loaded {out[1]}'
