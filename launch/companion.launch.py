"""ros2 launch fay_ros companion.launch.py [arg:=value ...]

The whole companion on one host. The node list and every parameter come from
fay_ros.bringup.graph (which reads config/companion.yaml): the same place `fay-ros up`
and the tests use, so the launch file only translates it into launch actions.

Launch arguments (see `ros2 launch fay_ros companion.launch.py --show-args`) are the
things people change; everything else lives in config/companion.yaml.
"""
import os

from ament_index_python.packages import get_package_prefix
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from fay_ros.bringup import graph


def _resolve(context):
    options = {name: LaunchConfiguration(name).perform(context) for name in graph.LAUNCH_ARGUMENTS}
    options = graph.parse_options(options)
    ns = graph.namespace(options)
    actions = [LogInfo(msg=f"fay_ros companion in namespace {ns}")]
    for spec in graph.companion_nodes(options):
        actions.append(
            Node(
                package="fay_ros",
                executable=spec.executable,
                name=spec.name,
                namespace=ns,
                parameters=[spec.parameters],
                respawn=spec.respawn,
                respawn_delay=graph.RESPAWN_DELAY,
                output="screen",
                emulate_tty=True,
            )
        )
    fay_ros_cli = os.path.join(get_package_prefix("fay_ros"), "lib", "fay_ros", "fay-ros")
    for proc in graph.companion_processes(options):
        actions.append(
            ExecuteProcess(cmd=[fay_ros_cli, *proc.args], name=proc.name, output="screen",
                           respawn=proc.respawn, respawn_delay=graph.RESPAWN_DELAY)
        )
    return actions


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument(name, default_value=str(default), description=description)
        for name, (default, description) in graph.LAUNCH_ARGUMENTS.items()
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_resolve)])
