"""The body nodes as lifecycle nodes with live parameters, through their real ROS services:
deactivate brings the body to rest and cues are ignored until activate; `set_parameters`
applies a live change from the next cue, refuses a read-only one with the reason, an invalid
value with the pydantic message, and a map_file that does not load with its file and line."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from std_msgs.msg import ColorRGBA, String
from trajectory_msgs.msg import JointTrajectory

from body_rig import (
    ACTIVATE,
    DEACTIVATE,
    LED_TABLE,
    LED_YAML,
    SERVO_TABLE,
    SERVO_YAML,
    action_cue,
    change_state,
    connect,
    get_parameter,
    is_idle_colour,
    is_sync_colour,
    lifecycle_state,
    motion_index,
    moves,
    set_parameter,
    sync,
)
from fay_ros.body import led
from fay_ros.common import qos, topics
from harness import publish_until


def test_deactivate_rests_the_body_and_ignores_cues_until_activate(ros, launch_node):
    servo_node = launch_node("fay_ros.nodes.servo_mapper", {"reload_period": 0.0})
    led_node = launch_node("fay_ros.nodes.led_mapper", {"reload_period": 0.0})
    cue_pub, (trajectories, colors) = connect(
        ros, (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1), (ColorRGBA, topics.LED_COLOR, qos.COMMANDS, 1)
    )
    ros.wait_for_subscribers(cue_pub, 2)
    sync(cue_pub, trajectories, colors)
    cue_pub.publish(action_cue("invite", "warm", 0.9, 40, uid="c:1"))
    invite_at = motion_index(trajectories)
    colors.wait_for_match(lambda c: c.a > 0.9, what="the warm look")
    readiness = [ros.readiness(name) for name in ("servo_mapper", "led_mapper")]

    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    for name in ("servo_mapper", "led_mapper"):
        assert change_state(ros, name, DEACTIVATE) and lifecycle_state(ros, name) == "inactive"
    for ready in readiness:
        ready.wait_for(lambda msgs: msgs and msgs[-1].data is False, what="ready false once inactive")
    # The servos go back to the idle pose from mid-invite; the light shows the idle look.
    [rest] = trajectories.wait_for(lambda msgs: msgs[invite_at + 1 :], what="the rest trajectory")
    assert len(rest.points) == 1
    assert list(rest.points[0].positions) == [SERVO_TABLE.joints[n].idle for n in rest.joint_names]
    colors.wait_for(lambda msgs: is_idle_colour(msgs[-1]), what="the idle look")

    # Inactive: cues are ignored (each node counts them on /diagnostics, status `cues`).
    counts = len(trajectories.messages), len(colors.messages)
    cue_pub.publish(action_cue("wave", "excited", 0.9, 90, uid="c:2"))
    for name in ("servo_mapper", "led_mapper"):
        diagnostics.wait_for(
            lambda arrays, n=name: any(
                s.name == f"fay/{n}: cues" and {kv.key: kv.value for kv in s.values}.get("ignored") == "1"
                for a in arrays
                for s in a.status
            ),
            what=f"{name} saying it ignored the cue",
        )
    for name in ("servo_mapper", "led_mapper"):
        assert change_state(ros, name, ACTIVATE)
    for ready in readiness:
        ready.wait_for(lambda msgs: msgs[-1].data is True, what="ready true once active again")
    assert all(is_idle_colour(c) for c in colors.messages[counts[1] :]), "activate shows the idle look only"
    publish_until(
        cue_pub,
        action_cue("idle", "neutral", 0.0, 0, uid="sync:1"),
        lambda: len(trajectories.messages) > counts[0] and any(is_sync_colour(c) for c in colors.messages[counts[1] :]),
        message="cues acted on again",
    )
    assert all(len(m.points) == 1 for m in trajectories.messages[counts[0] :]), "the wave was ignored"
    assert not any(c.a > 0.9 for c in colors.messages[counts[1] :]), "the wave's look was not shown"
    assert servo_node.alive() and led_node.alive()


def test_led_live_parameters(tmp_path, ros, launch_node):
    node = launch_node("fay_ros.nodes.led_mapper", {"reload_period": 0.0})
    cue_pub, (colors, patterns, statuses) = connect(
        ros,
        (ColorRGBA, topics.LED_COLOR, qos.COMMANDS, 1),
        (String, topics.LED_PATTERN, qos.LATCHED, 1),
        (DiagnosticArray, topics.DIAGNOSTICS, 10, 1),
    )
    node.wait_ready(probe=ros)
    sync(cue_pub, colors=colors)
    assert LED_TABLE.hold > 5, "the table's hold alone would keep the look for the whole test"

    # hold: live; the look shown now returns to idle after the new hold.
    assert set_parameter(ros, "led_mapper", "hold", 0.2).successful
    last_sync = max(i for i, c in enumerate(colors.messages) if is_sync_colour(c))
    colors.wait_for(
        lambda msgs: any(is_idle_colour(c) for c in msgs[last_sync + 1 :]),
        timeout=5,
        what="the idle look after the new hold",
    )

    # Invalid values: the pydantic message, naming the parameter; nothing changes.
    result = set_parameter(ros, "led_mapper", "hold", "long")
    assert not result.successful and "parameter 'hold'" in result.reason and "valid number" in result.reason
    result = set_parameter(ros, "led_mapper", "reload_period", -1.0)
    assert not result.successful and "parameter 'reload_period'" in result.reason
    assert "greater than or equal to 0" in result.reason
    assert get_parameter(ros, "led_mapper", "hold") == 0.2

    # Read-only: refused with the reason.
    result = set_parameter(ros, "led_mapper", "tick_period", 0.5)
    assert not result.successful and "read-only" in result.reason.lower()
    assert get_parameter(ros, "led_mapper", "tick_period") == 0.1

    # map_file: a table that does not load is refused with file and line; the old one stays.
    bad = tmp_path / "bad_led_map.yaml"
    bad.write_text(LED_YAML.replace("pattern: pulse, period: 4.0", "pattern: flicker, period: 4.0"), encoding="utf-8")
    line = next(n for n, t in enumerate(bad.read_text().splitlines(), 1) if "flicker" in t)
    result = set_parameter(ros, "led_mapper", "map_file", str(bad))
    assert not result.successful and f"led map table: {bad}: affects.sad.pattern:" in result.reason
    assert f"line {line}" in result.reason, result.reason
    assert get_parameter(ros, "led_mapper", "map_file") == ""
    missing = tmp_path / "missing.yaml"
    result = set_parameter(ros, "led_mapper", "map_file", str(missing))
    assert not result.successful and f"{missing}: file not found" in result.reason

    # A good one is used at once (the idle look is shown again) and for the next cue.
    good = tmp_path / "led_map.yaml"
    good.write_text(
        LED_YAML.replace("warm:       {color: '#FF8C32'", "warm:       {color: '#0000FF'").replace(
            "idle: {affect: neutral,", "idle: {affect: serious,"
        ),
        encoding="utf-8",
    )
    assert "#0000FF" in good.read_text()
    assert set_parameter(ros, "led_mapper", "map_file", str(good)).successful
    patterns.wait_for_match(lambda m: "affect=serious" in m.data, what="the new table's idle look")
    cue_pub.publish(action_cue("invite", "warm", 1.0, 40, uid="c:1"))
    line = patterns.wait_for_match(lambda m: "affect=warm" in m.data, what="the warm look").data
    pattern = led.parse_pattern(line)
    assert (pattern.r, pattern.g, pattern.b) == (0.0, 0.0, 1.0)
    statuses.wait_for(
        lambda arrays: any(
            s.name == "fay/led_mapper: table" and f"led map loaded from {good}" in s.message
            for a in arrays
            for s in a.status
        ),
        what="the table status",
    )
    assert node.alive()


def test_servo_live_parameters(tmp_path, ros, launch_node):
    node = launch_node("fay_ros.nodes.servo_mapper", {"reload_period": 0.0})
    cue_pub, (trajectories,) = connect(ros, (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1))
    node.wait_ready(probe=ros)
    sync(cue_pub, trajectories)

    # max_wait 0: an equal-priority cue that would wait is dropped instead. The shake after it
    # (higher priority: preempts) marks its place: the nod never came.
    assert set_parameter(ros, "servo_mapper", "max_wait", 0.0).successful
    cue_pub.publish(action_cue("invite", "neutral", 0.5, 40, uid="c:1"))
    cue_pub.publish(action_cue("nod", "neutral", 0.5, 40, uid="c:2"))
    cue_pub.publish(action_cue("shake", "neutral", 0.5, 90, uid="c:3"))
    invite_at = motion_index(trajectories)
    shake = trajectories.wait_for_count(invite_at + 2)[invite_at + 1]
    assert moves(shake, "head_pan") > 0.1 and moves(shake, "head_tilt") < 1e-9, "the shake, not the nod"

    # equal_priority preempt (live): the next equal-priority cue starts at once over the shake.
    assert set_parameter(ros, "servo_mapper", "equal_priority", "preempt").successful
    cue_pub.publish(action_cue("nod", "neutral", 0.5, 90, uid="c:4"))
    nod = trajectories.wait_for_count(invite_at + 3)[invite_at + 2]
    assert moves(nod, "head_tilt") > 0.1

    # Invalid value: the pydantic message; read-only: refused with the reason.
    result = set_parameter(ros, "servo_mapper", "equal_priority", "sometimes")
    assert not result.successful and "parameter 'equal_priority'" in result.reason
    assert "'wait' or 'preempt'" in result.reason, result.reason
    assert get_parameter(ros, "servo_mapper", "equal_priority") == "preempt"
    result = set_parameter(ros, "servo_mapper", "joint_states_topic", "/joint_states")
    assert not result.successful and "read-only" in result.reason.lower()

    # map_file: refused with file and line when it does not load; a good one is used from the
    # next cue (here: a new default behavior for unknown ones).
    bad = tmp_path / "bad_servo_map.yaml"
    bad.write_text(SERVO_YAML.replace("return_to_idle: 0.8", "return_to_idle: -0.8"), encoding="utf-8")
    line = next(n for n, t in enumerate(bad.read_text().splitlines(), 1) if t.startswith("return_to_idle"))
    result = set_parameter(ros, "servo_mapper", "map_file", str(bad))
    assert not result.successful and f"servo map table: {bad}: return_to_idle:" in result.reason
    assert f"line {line}" in result.reason, result.reason
    good = tmp_path / "servo_map.yaml"
    good.write_text(SERVO_YAML.replace("default: idle", "default: nod"), encoding="utf-8")
    assert set_parameter(ros, "servo_mapper", "map_file", str(good)).successful
    assert get_parameter(ros, "servo_mapper", "map_file") == str(good)
    cue_pub.publish(action_cue("moonwalk", "neutral", 0.5, 99, uid="c:5"))
    default = trajectories.wait_for_count(invite_at + 4)[invite_at + 3]
    assert moves(default, "head_tilt") > 0.1, "the new default (nod)"
    assert node.alive()
