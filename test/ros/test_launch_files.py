"""launch/ and launch_ros are not installable here, so the launch files cannot run.
What can be checked without them: they compile, and everything they name exists -
share files, our executables, the parameters they give rbd_controller, the modes; and
arm.launch.py's launch_setup run against stand-ins of launch and launch_ros classes that
record their arguments (run_arm_launch): what each Node would be started with, per
namespace:=."""
import ast
import configparser
import importlib.util
import py_compile
import re
import sys
import types
from pathlib import Path

import pytest
import yaml

from rbd_control.params.controller import CONTROLLER_PARAMETERS, GAIN_FIELDS, gain_name

REPO = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((REPO / 'launch').glob('*.launch.py'))
SETUP_PY = (REPO / 'setup.py').read_text()


def share_tree():
    """share/rbd_control as setup.py installs it: relative path -> source file."""
    tree = {'package.xml': REPO / 'package.xml'}
    for path in (REPO / 'launch').glob('*.launch.py'):
        tree[f'launch/{path.name}'] = path
    for path in (REPO / 'config').glob('*.yaml'):
        tree[f'config/{path.name}'] = path
    for path in (REPO / 'config' / 'profiles').glob('*.yaml'):
        tree[f'config/profiles/{path.name}'] = path
    for path in (REPO / 'rbd_control' / 'description').glob('*.urdf'):
        tree[f'urdf/{path.name}'] = path
    return tree


def entry_points():
    return dict(re.findall(r"'(\w+) = ([\w.]+):main'", SETUP_PY))


def module_constants(tree):
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return constants


def node_calls(tree):
    """keyword dicts of every Node(...) call whose keywords are literal."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'Node':
            calls.append({k.arg: k.value for k in node.keywords})
    return calls


def literal_or_constant(value, constants):
    if isinstance(value, ast.Name):
        return constants.get(value.id)
    try:
        return ast.literal_eval(value)
    except ValueError:
        return None


def test_there_are_two_launch_files():
    assert {p.name for p in LAUNCH_FILES} == {'arm.launch.py', 'gazebo.launch.py'}


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles_and_defines_generate_launch_description(launch_file, tmp_path):
    py_compile.compile(str(launch_file), cfile=str(tmp_path / 'out.pyc'), doraise=True)
    tree = ast.parse(launch_file.read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert 'generate_launch_description' in functions


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_share_file_named_by_a_launch_file_is_installed(launch_file):
    constants = module_constants(ast.parse(launch_file.read_text()))
    named = [v for v in constants.values()
             if isinstance(v, str) and re.match(r'^(config|launch|urdf)/', v)]
    assert named, 'expected the launch file to name share files in constants'
    tree = share_tree()
    for relative in named:
        assert relative in tree, f'{launch_file.name} names {relative}, which is not installed'


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=lambda p: p.name)
def test_our_executables_exist_as_console_scripts(launch_file):
    tree = ast.parse(launch_file.read_text())
    constants = module_constants(tree)
    scripts = entry_points()
    for call in node_calls(tree):
        package = literal_or_constant(call.get('package'), constants)
        if package != 'rbd_control':
            continue
        executable = literal_or_constant(call['executable'], constants)
        assert executable in scripts, f'{executable} is not a console script of setup.py'
        module = scripts[executable].replace('.', '/') + '.py'
        assert (REPO / module).is_file(), f'{executable} -> {module} does not exist'


def test_every_console_script_points_at_a_main_function():
    scripts = entry_points()
    assert set(scripts) == {'rbd_controller', 'rbd_mujoco_sim', 'rbd_bringup', 'rbd_identify',
                            'rbd_description_publisher'}
    # a pip install puts a wrapper of each where ros2 run / ros2 launch look (setup.py)
    assert {p.name for p in (REPO / 'resource' / 'lib').iterdir()} == set(scripts)
    for script, module in scripts.items():
        source = REPO / (module.replace('.', '/') + '.py')
        assert source.is_file(), f'{script} -> {source} does not exist'
        tree = ast.parse(source.read_text())
        assert 'main' in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, script


def test_arm_launch_passes_only_declared_parameters_to_rbd_controller():
    tree = ast.parse((REPO / 'launch' / 'arm.launch.py').read_text())
    declared = {p.name for p in CONTROLLER_PARAMETERS.fixed} | {'use_sim_time'}
    controller_calls = [c for c in node_calls(tree)
                        if isinstance(c.get('executable'), ast.Constant)
                        and c['executable'].value == 'rbd_controller']
    assert len(controller_calls) == 1
    keys = {k.value for node in ast.walk(controller_calls[0]['parameters'])
            if isinstance(node, ast.Dict) for k in node.keys}
    assert keys and keys <= declared


def test_arm_launch_modes_are_the_node_modes():
    tree = ast.parse((REPO / 'launch' / 'arm.launch.py').read_text())
    imports = {(node.module, alias.name) for node in tree.body if isinstance(node, ast.ImportFrom)
               for alias in node.names}
    assert ('rbd_control.params.controller', 'MODES') in imports, 'MODES must come from the table'
    constants = module_constants(tree)
    assert 'MODES' not in constants
    assert constants['SIMULATORS'] == ('none', 'mujoco', 'dart', 'gazebo')


def test_controller_yaml_uses_declared_parameters_with_valid_values():
    document = yaml.safe_load((REPO / 'config' / 'arm_controller.yaml').read_text())
    values = document['/**']['ros__parameters']
    joints = values['joints']
    for name, value in values.items():
        if name == 'gains':
            assert set(value) <= set(joints)
            for joint, gains in value.items():
                assert set(gains) <= set(GAIN_FIELDS)
                for field, gain in gains.items():
                    full = gain_name(joint, field)
                    assert isinstance(gain, float), f'{full} must be a YAML float'
                    assert CONTROLLER_PARAMETERS.validate(full, gain, set(joints)) is None
            continue
        assert CONTROLLER_PARAMETERS.lookup(name) is not None, f'unknown parameter {name}'
        assert CONTROLLER_PARAMETERS.validate(name, value, set(joints)) is None, name


def test_yaml_joints_match_the_default_arm_and_the_gazebo_controller():
    from rbd_control.description import default_arm_urdf
    urdf = default_arm_urdf()
    moving = re.findall(r'<joint name="(\w+)" type="(?:revolute|continuous|prismatic)"', urdf)
    controller = yaml.safe_load((REPO / 'config' / 'arm_controller.yaml').read_text())
    gazebo = yaml.safe_load((REPO / 'config' / 'gz_controllers.yaml').read_text())
    assert controller['/**']['ros__parameters']['joints'] == moving
    assert gazebo['effort_controller']['ros__parameters']['joints'] == moving
    manager = gazebo['controller_manager']['ros__parameters']
    assert manager['effort_controller']['type'] == 'effort_controllers/JointGroupEffortController'
    assert manager['joint_state_broadcaster']['type'] == \
        'joint_state_broadcaster/JointStateBroadcaster'
    # the URDF's gz_ros2_control block must point at this file
    assert '$(find rbd_control)/config/gz_controllers.yaml' in urdf


def test_arm_launch_profile_is_validated_and_given_to_both_nodes_after_the_config():
    """profile:=NAME (default none) is checked like mode:= (choose, against the profiles
    present) and its values against the tables (profile_refusal); its file goes to
    rbd_controller after arm_controller.yaml and before the launch's own values, and to
    rbd_mujoco_sim before its own; every profile is installed."""
    from rbd_control.bringup.profiles import profile_names
    tree = ast.parse((REPO / 'launch' / 'arm.launch.py').read_text())
    constants = module_constants(tree)
    assert 'profile' in constants['ARGUMENTS']   # not a xacro argument
    declared = {call.args[0].value: {k.arg: k.value for k in call.keywords}
                for call in ast.walk(tree) if isinstance(call, ast.Call)
                and getattr(call.func, 'id', '') == 'DeclareLaunchArgument'}
    assert declared['profile']['default_value'].value == 'none'
    source = ast.unparse(tree)
    assert "choose(context, 'profile', profile_names())" in source
    assert 'profile_refusal(profile_file(profile))' in source
    parameters = {literal_or_constant(call['executable'], constants):
                  ast.unparse(call['parameters']) for call in node_calls(tree)}
    controller = parameters['rbd_controller']
    assert controller.index('CONTROLLER_CONFIG') < \
        controller.index("profile_files_for(profile, 'rbd_controller')") < \
        controller.index("'mode': mode")
    assert parameters['rbd_mujoco_sim'].index("profile_files_for(profile, 'rbd_mujoco_sim')") \
        < parameters['rbd_mujoco_sim'].index("'publish_clock'")
    installed = {name for name in share_tree() if name.startswith('config/profiles/')}
    assert installed == {f'config/profiles/{name}.yaml' for name in profile_names()}
    assert {'franka_panda', 'ur_e_series', 'so101', 'none'} <= set(profile_names())
    assert "share('config/profiles', 'config/profiles/*.yaml')" in SETUP_PY


def test_setup_cfg_puts_scripts_where_ros2_run_looks():
    config = configparser.ConfigParser()
    config.read(REPO / 'setup.cfg')
    assert config['develop']['script_dir'] == '$base/lib/rbd_control'
    assert config['install']['install_scripts'] == '$base/lib/rbd_control'


def exec_depends():
    import xml.etree.ElementTree as ElementTree
    root = ElementTree.parse(REPO / 'package.xml').getroot()
    return {e.text for e in root.iter('exec_depend')}


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_ros_package_a_launch_file_uses_is_an_exec_depend(launch_file):
    tree = ast.parse(launch_file.read_text())
    constants = module_constants(tree)
    used = {literal_or_constant(call.get('package'), constants) for call in node_calls(tree)}
    used |= {node.args[0].value for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, 'id', '') ==
             'get_package_share_directory' and isinstance(node.args[0], ast.Constant)}
    used |= {alias.name.split('.')[0] for node in ast.walk(tree)
             if isinstance(node, (ast.Import, ast.ImportFrom))
             for alias in ([ast.alias(node.module)] if isinstance(node, ast.ImportFrom)
                           else node.names)}
    used -= {'rbd_control', 'os', None}
    assert used, 'expected the launch file to use ROS packages'
    missing = used - exec_depends()
    assert not missing, f'{launch_file.name} uses {missing}, not declared in package.xml'


def test_every_ros_package_the_nodes_import_is_an_exec_depend():
    imported = set()
    for source in (REPO / 'rbd_control' / 'ros').rglob('*.py'):   # every node is under ros/
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split('.')[0])
            elif isinstance(node, ast.Import):
                imported |= {alias.name.split('.')[0] for alias in node.names}
    ros_packages = {name for name in imported
                    if name == 'rclpy' or name.endswith(('_msgs', '_interfaces'))}
    assert 'rclpy' in ros_packages
    assert ros_packages <= exec_depends(), ros_packages - exec_depends()


def declared_arguments(tree):
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, 'id', '') ==
            'DeclareLaunchArgument'}


@pytest.mark.parametrize('launch_file', LAUNCH_FILES, ids=lambda p: p.name)
def test_description_file_is_read_by_the_shared_reader_with_xacro_arguments(launch_file):
    """description_file:= takes a .urdf or a .xacro; every launch configuration that is
    not one of the file's ARGUMENTS is a xacro argument, so ARGUMENTS must be exactly
    the declared arguments, and the file must read it through description/files.py."""
    tree = ast.parse(launch_file.read_text())
    declared = declared_arguments(tree)
    assert 'description_file' in declared
    assert set(module_constants(tree)['ARGUMENTS']) == declared
    imports = {(node.module, alias.name) for node in tree.body
               if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert ('rbd_control.description.files', 'description_for_launch') in imports
    calls = {getattr(node.func, 'id', None) for node in ast.walk(tree)
             if isinstance(node, ast.Call)}
    assert 'description_for_launch' in calls and 'open' not in calls


def test_arm_launch_robot_state_publisher_argument_chooses_the_description_publisher():
    """robot_state_publisher:=true (default) or false: either node gets the description."""
    tree = ast.parse((REPO / 'launch' / 'arm.launch.py').read_text())
    constants = module_constants(tree)
    assert 'robot_state_publisher' in constants['ARGUMENTS']    # not a xacro argument
    assert constants['BOOLEANS'] == ('true', 'false')
    declared = {call.args[0].value: {k.arg: k.value for k in call.keywords}
                for call in ast.walk(tree) if isinstance(call, ast.Call)
                and getattr(call.func, 'id', '') == 'DeclareLaunchArgument'}
    assert declared['robot_state_publisher']['default_value'].value == 'true'
    publishers = {}
    for call in node_calls(tree):
        executable = literal_or_constant(call['executable'], constants)
        if executable in ('robot_state_publisher', 'rbd_description_publisher'):
            keys = {k.value for node in ast.walk(call['parameters'])
                    if isinstance(node, ast.Dict) for k in node.keys}
            publishers[executable] = (literal_or_constant(call['package'], constants), keys)
    assert publishers['robot_state_publisher'][0] == 'robot_state_publisher'
    assert publishers['rbd_description_publisher'][0] == 'rbd_control'
    assert all('robot_description' in keys for _, keys in publishers.values())


def test_rbd_description_publisher_latches_the_description(ros_node, spawn_node):
    """What robot_state_publisher:=false starts: a late subscriber still gets the URDF."""
    from std_msgs.msg import String

    from ros_helpers import LATCHED
    urdf = (REPO / 'rbd_control' / 'description' / 'rbd_arm.urdf').read_text()
    node = spawn_node('rbd_control.ros.description_publisher', {'robot_description': urdf},
                      node_name='rbd_description_publisher')
    node.wait_for_log('publishing /robot_description', 60.0)
    received = ros_node.collect(String, '/robot_description', LATCHED)   # after it published
    ros_node.wait_for(lambda: received, 20.0, 'the latched /robot_description')
    assert received[0].data == urdf
    assert node.stop() == 0


def test_rbd_description_publisher_refuses_an_empty_description(spawn_node):
    node = spawn_node('rbd_control.ros.description_publisher',
                      node_name='rbd_description_publisher')
    assert node.process.wait(60) == 1
    assert 'robot_description is empty' in node.log()


# --- arm.launch.py run against stand-ins of launch and launch_ros -------------------------

class Recorded:
    """A launch or launch_ros class that only keeps what it was built with."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration(Recorded):
    def perform(self, context):
        return context.launch_configurations[self.args[0]]


STAND_INS = {
    'launch': ['LaunchDescription'],
    'launch.actions': ['DeclareLaunchArgument', 'IncludeLaunchDescription', 'OpaqueFunction',
                       'RegisterEventHandler'],
    'launch.event_handlers': ['OnProcessExit'],
    'launch.launch_description_sources': ['PythonLaunchDescriptionSource'],
    'launch.substitutions': ['LaunchConfiguration'],
    'launch_ros': [],
    'launch_ros.actions': ['Node'],
    'launch_ros.parameter_descriptions': ['ParameterValue'],
}


@pytest.fixture
def run_arm_launch(monkeypatch):
    """run_arm_launch(name=value, ...) -> arm.launch.py's actions for those launch arguments
    (the declared defaults for the rest), as `ros2 launch` would get them from its
    OpaqueFunction, with launch and launch_ros replaced by classes that record their
    arguments: what each Node would start with (namespace, remappings, parameters)."""
    for module_name, classes in STAND_INS.items():
        module = types.ModuleType(module_name)
        for name in classes:
            setattr(module, name, LaunchConfiguration if name == 'LaunchConfiguration'
                    else type(name, (Recorded,), {}))
        monkeypatch.setitem(sys.modules, module_name, module)
    spec = importlib.util.spec_from_file_location('arm_launch_under_test',
                                                  REPO / 'launch' / 'arm.launch.py')
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)

    def run(**arguments):
        description = launch.generate_launch_description()
        items = description.args[0]
        defaults = {item.args[0]: item.kwargs['default_value'] for item in items
                    if type(item).__name__ == 'DeclareLaunchArgument'}
        assert set(arguments) <= set(defaults), set(arguments) - set(defaults)
        context = types.SimpleNamespace(launch_configurations={**defaults, **arguments})
        setup = [item for item in items if type(item).__name__ == 'OpaqueFunction'][0]
        return setup.kwargs['function'](context)

    # no share/rbd_control needed: the nodes only get the paths, and the default arm's URDF
    monkeypatch.setattr(launch, 'share_path', lambda relative: str(REPO / relative))
    monkeypatch.setattr(launch, 'robot_description',
                        lambda context: (REPO / 'rbd_control' / 'description' /
                                         'rbd_arm.urdf').read_text())
    return run


def started_nodes(actions):
    """{executable: the keyword arguments of its Node} of arm.launch.py's actions."""
    return {node.kwargs['executable']: node.kwargs for node in actions
            if type(node).__name__ == 'Node'}


def test_arm_launch_twice_with_two_namespaces_starts_two_arms_that_share_nothing(
        run_arm_launch):
    """namespace:=left and namespace:=right: every node in its namespace, each with /clock
    remapped into it (two simulators, two clocks), robot_state_publisher's TF frames
    prefixed; nothing of one run names the other's namespace or an absolute topic."""
    arms = {arm: started_nodes(run_arm_launch(namespace=arm, sim='mujoco'))
            for arm in ('left', 'right')}
    for arm, nodes in arms.items():
        assert set(nodes) == {'robot_state_publisher', 'rbd_controller', 'rbd_mujoco_sim'}
        for executable, node in nodes.items():
            assert node['namespace'] == f'/{arm}', executable
            assert node['remappings'] == [('/clock', f'/{arm}/clock')], executable
        publisher = nodes['robot_state_publisher']['parameters'][0]
        assert publisher['frame_prefix'] == f'{arm}/'
        other = 'right' if arm == 'left' else 'left'
        assert other not in repr(nodes)

    # no namespace: the root, no remapping (as before), and without a simulator no /clock remap
    root = started_nodes(run_arm_launch(sim='mujoco', robot_state_publisher='false'))
    assert all(node['namespace'] is None and node['remappings'] == [] for node in root.values())
    hardware = started_nodes(run_arm_launch(namespace='/robots/left'))
    assert {node['namespace'] for node in hardware.values()} == {'/robots/left'}
    assert all(node['remappings'] == [] for node in hardware.values())


def test_arm_launch_gives_the_controller_what_rbd_bringup_gives_it_for_our_simulator(
        run_arm_launch):
    """sim:=mujoco|dart: before the config, the simulated plant's parameters (the effort it
    applied for the contact observer, the loop it runs in real time), every one declared;
    sim:=none (a robot) gets none of them."""
    from rbd_control.bringup.processes import simulated_plant_parameters

    plant = simulated_plant_parameters(lockstep=False)
    assert plant['contact.use_measured_effort'] is True and 'expected_delay' in plant
    assert set(plant) <= {p.name for p in CONTROLLER_PARAMETERS.fixed}
    for sim in ('mujoco', 'dart'):
        parameters = started_nodes(run_arm_launch(sim=sim))['rbd_controller']['parameters']
        assert parameters[0] == plant, sim
        assert parameters[1].endswith('arm_controller.yaml'), sim
    robot = started_nodes(run_arm_launch(sim='none'))['rbd_controller']['parameters']
    assert plant not in robot and robot[0].endswith('arm_controller.yaml')


@pytest.mark.parametrize('arguments, reason', [
    ({'namespace': 'left arm'}, "'left arm' is not a ROS namespace: namespace must not contain"),
    ({'namespace': '2nd'}, 'must not have a token that starts with a number'),
    ({'namespace': 'left', 'sim': 'gazebo'}, 'with sim:=gazebo'),
])
def test_arm_launch_refuses_a_bad_namespace_with_its_reason(run_arm_launch, arguments, reason):
    with pytest.raises(ValueError, match=re.escape(reason)):
        run_arm_launch(**arguments)
