"""ros2 launch fay_ros companion.launch.py [arg:=value ...]

The whole companion on one host. The node list and every parameter come from
fay_ros.bringup.graph (which reads config/companion.yaml): the same place `fay-ros up`
and the tests use, so the launch file only translates it into launch actions.

Launch arguments (see `ros2 launch fay_ros companion.launch.py --show-args`) are the
things people change; everything else lives in config/companion.yaml.

Respawn: launch's own `respawn=True` restarts on every exit, so a node that stops with the
configuration-error code (2) would be restarted every RESPAWN_DELAY seconds forever. Each
process is therefore started with respawn=False and watched by an OnProcessExit handler
that asks graph.respawn_after_exit (the rule `fay-ros up` uses too) and, after a crash,
starts a fresh action (an action runs only once) with its own handler after RESPAWN_DELAY.
"""

import os

from ament_index_python.packages import get_package_prefix
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    LogInfo,
    OpaqueFunction,
    RegisterEventHandler,
    TimerAction,
)
from launch.event_handlers import OnProcessExit
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from fay_ros.bringup import graph
from launch import LaunchDescription


def _supervised(name, make_action, respawn):
    """The action made by `make_action()`, and when `respawn`, a handler that starts a fresh
    one RESPAWN_DELAY s after it crashed (not after a configuration error, not at shutdown)."""
    action = make_action()
    if not respawn:
        return [action]

    def on_exit(event, context):
        if context.is_shutdown:
            return None
        code = event.returncode
        if not graph.respawn_after_exit(code):
            return [LogInfo(msg=f"[fay_ros] {name} exited with {code} (a configuration error); not restarting")]
        return [
            LogInfo(msg=f"[fay_ros] {name} exited with {code}; restarting in {graph.RESPAWN_DELAY:.1f}s"),
            TimerAction(period=graph.RESPAWN_DELAY, actions=_supervised(name, make_action, respawn)),
        ]

    # Registered before the action runs, so even an immediate exit is seen; handle_once: the
    # handler belongs to this one process.
    return [RegisterEventHandler(OnProcessExit(target_action=action, on_exit=on_exit, handle_once=True)), action]


def _node_action(spec, ns):
    return lambda: Node(
        package="fay_ros",
        executable=spec.executable,
        name=spec.name,
        namespace=ns,
        parameters=[spec.parameters],
        respawn=False,
        output="screen",
        emulate_tty=True,
    )


def _process_action(proc, fay_ros_cli):
    return lambda: ExecuteProcess(cmd=[fay_ros_cli, *proc.args], name=proc.name, output="screen", respawn=False)


def _resolve(context):
    options = {name: LaunchConfiguration(name).perform(context) for name in graph.LAUNCH_ARGUMENTS}
    options = graph.parse_options(options)
    ns = graph.namespace(options)
    actions = [LogInfo(msg=f"fay_ros companion in namespace {ns}")]
    for spec in graph.companion_nodes(options):
        actions += _supervised(spec.name, _node_action(spec, ns), spec.respawn)
    fay_ros_cli = os.path.join(get_package_prefix("fay_ros"), "lib", "fay_ros", "fay-ros")
    for proc in graph.companion_processes(options):
        actions += _supervised(proc.name, _process_action(proc, fay_ros_cli), proc.respawn)
    return actions


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument(name, default_value=str(default), description=description)
        for name, (default, description) in graph.LAUNCH_ARGUMENTS.items()
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_resolve)])
