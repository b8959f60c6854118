"""Lifecycle nodes (fay_ros.common.lifecycle) and node health on /diagnostics
(fay_ros.common.diagnostics): ready when active, and not ready with the reason."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.qos import QoSProfile

from harness import wait_until

MODULE = "procs.managed_probe"
STATE = "fay/managed_probe: state"


def _states(ros):
    return ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))


def _state_statuses(collector) -> list[DiagnosticStatus]:
    return [s for array in collector.messages for s in array.status if s.name == STATE]


def _lifecycle_state(ros) -> str:
    return ros.call(GetState, "/fay/managed_probe/get_state", GetState.Request()).current_state.label


def test_autostart_configures_and_activates_and_says_ready(ros, launch_node):
    diagnostics = _states(ros)
    node = launch_node(MODULE, name="managed_probe")
    node.wait_ready(probe=ros)
    assert _lifecycle_state(ros) == "active"
    # health is repeated every second, so a late subscriber sees the state too
    wait_until(
        lambda: any(s.level == DiagnosticStatus.OK and s.message == "ready" for s in _state_statuses(diagnostics)),
        message="state OK on /diagnostics",
    )


def test_a_failed_configure_keeps_the_node_alive_and_says_why_on_diagnostics(ros, launch_node):
    diagnostics = _states(ros)
    readiness = ros.readiness("managed_probe")
    node = launch_node(MODULE, {"fail_reason": "model file /models/missing.bin not found"}, name="managed_probe")
    status = diagnostics.wait_for_match(
        lambda array: any(s.name == STATE and s.level == DiagnosticStatus.ERROR for s in array.status)
    )
    [state] = [s for s in status.status if s.name == STATE]
    assert state.message == "not ready: model file /models/missing.bin not found"
    assert state.hardware_id == "fay_ros"
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False)
    assert node.alive() and _lifecycle_state(ros) == "unconfigured"


def test_without_autostart_it_waits_for_the_lifecycle_transitions(ros, launch_node):
    readiness = ros.readiness("managed_probe")
    node = launch_node(MODULE, {"autostart": False}, name="managed_probe")
    wait_until(lambda: node.alive() and _lifecycle_state(ros) == "unconfigured")
    assert not any(m.data for m in readiness.messages)
    for transition, label in (
        (Transition.TRANSITION_CONFIGURE, "inactive"),
        (Transition.TRANSITION_ACTIVATE, "active"),
    ):
        request = ChangeState.Request()
        request.transition.id = transition
        assert ros.call(ChangeState, "/fay/managed_probe/change_state", request).success
        assert _lifecycle_state(ros) == label
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is True)
    request = ChangeState.Request()
    request.transition.id = Transition.TRANSITION_DEACTIVATE
    assert ros.call(ChangeState, "/fay/managed_probe/change_state", request).success
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False)


def test_a_transition_the_state_does_not_have_is_refused_and_the_node_lives_on(ros, launch_node):
    # rclpy's own change_state service raises out of spin() for it, ending the process
    node = launch_node(MODULE, name="managed_probe")
    node.wait_ready(probe=ros)
    for transition in (Transition.TRANSITION_ACTIVATE, Transition.TRANSITION_CONFIGURE, 99):
        assert not ros.change_state("managed_probe", transition)
    assert node.alive() and _lifecycle_state(ros) == "active"
    assert ros.change_state("managed_probe", Transition.TRANSITION_DEACTIVATE)
    assert _lifecycle_state(ros) == "inactive"
