"""ros2 launch fay_ros companion.launch.py [arg:=value ...]

The whole companion on one host. The node list and every parameter come from
fay_ros.bringup.graph (which reads config/companion.yaml): the same place `fay-ros up`
and the tests use, so the launch file only translates it into launch actions.

Launch arguments (see `ros2 launch fay_ros companion.launch.py --show-args`) are the
things people change; everything else lives in config/companion.yaml.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, IncludeLaunchDescription, LogInfo, OpaqueFunction
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
    for proc in graph.companion_processes(options, apt_ros=True):
        if proc.launch_include is not None:
            package, launch_file, arguments = proc.launch_include
            from launch.launch_description_sources import AnyLaunchDescriptionSource
            from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

            try:
                share = get_package_share_directory(package)
            except PackageNotFoundError:
                actions.append(LogInfo(msg=f"{package} is not installed: {proc.name} not started ({proc.why_optional})"))
                continue
            actions.append(
                IncludeLaunchDescription(
                    AnyLaunchDescriptionSource(f"{share}/launch/{launch_file}"),
                    launch_arguments=list(arguments.items()),
                )
            )
        else:
            actions.append(
                ExecuteProcess(cmd=list(proc.command), name=proc.name, output="screen",
                               respawn=proc.respawn, respawn_delay=graph.RESPAWN_DELAY)
            )
    return actions


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument(name, default_value=str(default), description=description)
        for name, (default, description) in graph.LAUNCH_ARGUMENTS.items()
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_resolve)])
