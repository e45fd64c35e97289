"""The ROS-free cores must stay ROS-free: the node is a thin adapter over them."""
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROS_FREE = ('dynamics', 'control', 'description')


def imported_top_level_modules(source):
    modules = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split('.')[0])
        elif isinstance(node, ast.Import):
            modules |= {alias.name.split('.')[0] for alias in node.names}
    return modules


def test_core_packages_never_import_ros():
    for package in ROS_FREE:
        for source in (REPO / 'rbd_control' / package).rglob('*.py'):
            ros = {m for m in imported_top_level_modules(source)
                   if m == 'rclpy' or m.endswith(('_msgs', '_interfaces'))}
            assert not ros, f'{source.relative_to(REPO)} imports {ros}'
