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
    'client': set(),      # rclpy and the messages only: a policy's process imports nothing else
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
            assert node.level == 0, \
                f'{path.relative_to(REPO)}: relative import (use rbd_control.*)'
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
                   if m.split('.')[0] == 'rclpy'
                   or m.split('.')[0].endswith(('_msgs', '_interfaces'))}
            assert not ros, f'{name} imports {ros}'


def test_parameter_tables_import_no_numerics():
    for name, path in MODULES.items():
        if layer(name) in NO_NUMERICS:
            heavy = {m for m in imports(path) if m.split('.')[0] in ('numpy', 'numba', 'scipy')}
            assert not heavy, f'{name} imports {heavy}'


# modules allowed past 400 lines, each with its own cap and the reason
LONG_MODULES = {
    # the face of the controller core: one class that composes its parts (the supervisor,
    # the contact monitor, the plan, the laws) and applies their decisions; split by
    # inheritance from partial classes it was one class in four files calling each other;
    # 640: the last terms of every command (safety/command_limits.py) and shadow mode each
    # need their call in update and the safe paths; 670: joint_impedance's target setters and
    # its step (the law and its target shaping are laws/joint_impedance.py)
    'rbd_control.control.controller': 670,
}


def test_no_module_over_400_lines():
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > LONG_MODULES.get(name, 400)}
    assert not long, f'modules over 400 lines (or their named cap): {long}'


# control/ inside: the face (controller.py) on top, its parts in folders (the wings), and the
# floor modules every part may use
CONTROL_FLOOR = {'errors', 'angles', 'flags', 'throttle', 'config'}
CONTROL_PARTS = {
    # part -> the other parts of control/ it may import, besides the floor and itself
    'laws': set(),
    'contact': set(),
    'trajectory': set(),
    'safety': set(),
    'model': {'laws', 'contact'},   # one model's plan: its gains and its Cartesian law
    # the floor: config holds the gain, contact and oscillation value types of ControllerConfig
    'errors': set(), 'angles': set(), 'flags': set(), 'throttle': set(),
    'config': {'laws', 'contact', 'safety'},
}


def control_part(module: str):
    """'laws' for rbd_control.control.laws.gains, 'config' for rbd_control.control.config;
    None outside control/ and for its __init__."""
    parts = module.split('.')
    return parts[2] if len(parts) > 2 and parts[1] == 'control' else None


def test_control_parts_import_only_the_floor():
    """A part of the controller core never reaches into another part or up into the face, so
    it cannot call the Controller back: it returns decisions the face applies."""
    wrong = []
    for name, targets in GRAPH.items():
        part = control_part(name)
        if part is None or part == 'controller':
            continue
        allowed = {part} | CONTROL_FLOOR | CONTROL_PARTS[part]
        wrong += [f'{name} -> {target}' for target in targets
                  if control_part(target) not in allowed | {None}]
    assert not wrong, 'control/ parts importing other parts or the face:\n' + '\n'.join(wrong)


def test_nothing_below_imports_the_controller_face():
    importers = [name for name, targets in GRAPH.items()
                 if 'rbd_control.control.controller' in targets
                 and layer(name) in ('control', 'dynamics', 'params', 'identification', 'sim')
                 and name != 'rbd_control.control']
    assert not importers, f'modules below the face importing controller.py: {importers}'


def partial_classes():
    """Classes of ours that read attributes of self they neither assign nor define: pieces
    of a class spread over several files by inheritance, not classes of their own."""
    found = []
    for name, path in MODULES.items():
        for cls in ast.walk(ast.parse(path.read_text())):
            if not isinstance(cls, ast.ClassDef):
                continue
            defined = {n.name for n in cls.body
                       if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            defined |= {t.id for n in cls.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                        if isinstance(t, ast.Name)}
            read, assigned = set(), set()
            for node in ast.walk(cls):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == 'self'):
                    (assigned if isinstance(node.ctx, ast.Store) else read).add(node.attr)
            # a class with a base may read what the base defines (an rclpy Node's fields)
            based = [b for b in cls.bases if not (isinstance(b, ast.Name) and b.id == 'object')]
            missing = read - assigned - defined
            if missing and not based:
                found.append(f'{name}.{cls.name} reads self.{sorted(missing)}')
    return found


def test_no_class_is_spread_over_files():
    """No class of rbd_control is assembled from partial classes (mixins reading fields that
    another file's class sets): each part is a class of its own, composed and passed its
    handles explicitly."""
    found = partial_classes()
    assert not found, 'partial classes:\n' + '\n'.join(found)


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
