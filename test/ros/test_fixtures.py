"""The fixtures other ROS tests build on do what they promise."""
import os

from shm_segments import KILLED_PROCESS_SEGMENTS, paths_in_use, shm_segments_of


def test_kill_removes_the_shm_segments_only_the_killed_participant_used(spawn_node, ros_node):
    process = spawn_node('rbd_control.ros.controller.node', {'state_timeout': 1.0})

    # (the graph may still list an earlier test's node: watch this process instead)
    def own_segment_mapped():
        return any(not os.path.basename(s).startswith('fastrtps_port')
                   for s in shm_segments_of(process.pid))
    ros_node.wait_for(own_segment_mapped, 30, 'the node to map its shared-memory segment')
    ros_node.spin_for(0.5)
    segments = shm_segments_of(process.pid)
    process.kill()
    assert segments <= KILLED_PROCESS_SEGMENTS
    left = {s for s in segments if os.path.exists(s)}
    assert left != segments, "the participant's own segment must be gone"
    # what is left is still used by someone alive (this process, other participants)
    assert left <= paths_in_use()


def test_ros_env_isolates_the_session(ros_env):
    assert 101 <= int(ros_env['ROS_DOMAIN_ID']) <= 232
    assert ros_env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert os.environ['ROS_DOMAIN_ID'] == ros_env['ROS_DOMAIN_ID']
    assert any(p.endswith('/lib') for p in ros_env['LD_LIBRARY_PATH'].split(':'))
