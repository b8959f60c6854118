"""servo_mapper and led_mapper as real processes: ActionCue in over DDS, JointTrajectory,
ColorRGBA and the latched pattern line out; a bad table at start leaves them alive and not
ready, saying why on /diagnostics; edits are reloaded and bad edits keep the last good table.
(Lifecycle transitions and live parameters: test_body_live.py; sim time: test_body_sim_time.py.)"""

from __future__ import annotations

import struct

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from std_msgs.msg import ColorRGBA, String
from trajectory_msgs.msg import JointTrajectory

from body_rig import (
    ACTIVATE,
    CONFIGURE,
    LED_TABLE,
    SERVO_TABLE,
    SERVO_YAML,
    action_cue,
    change_state,
    connect,
    lifecycle_state,
    motion_index,
    seconds,
    set_parameter,
    sync,
)
from fay_ros.body import led, servo
from fay_ros.body.map_tables import default_table_path
from fay_ros.common import qos, topics
from harness import repeat_until, wait_until


def find_table_status(arrays, node: str, level: bytes) -> str | None:
    """The message of the first status `node` published about its table at `level`, if any."""
    return next(
        (s.message for a in arrays for s in a.status if s.name == f"fay/{node}: table" and s.level == level), None
    )


def write_until_status(path, text: str, statuses, node: str, level: bytes) -> str:
    """Write the table file until `node` reports a reload at `level`: it reports each edit once,
    and its /diagnostics publisher may not have matched our subscription yet (see
    harness.repeat_until). Rewriting the same text is the same edit again (idempotent)."""
    return repeat_until(
        lambda: path.write_text(text, encoding="utf-8"),
        lambda: find_table_status(statuses.messages, node, level),
        message=f"a {node} table status at level {level!r}",
    )


def assert_trajectory_message(msg: JointTrajectory, table) -> None:
    assert list(msg.joint_names) == list(table.joints)
    times = [seconds(p.time_from_start) for p in msg.points]
    assert times[0] > 0 and all(b > a for a, b in zip(times, times[1:]))
    for point in msg.points:
        assert len(point.positions) == len(point.velocities) == len(msg.joint_names)
        for name, pos, vel in zip(msg.joint_names, point.positions, point.velocities):
            spec = table.joints[name]
            assert spec.min - 1e-9 <= pos <= spec.max + 1e-9 and abs(vel) <= spec.max_velocity * (1 + 1e-6)
    assert list(msg.points[-1].positions) == [table.joints[n].idle for n in msg.joint_names]
    assert list(msg.points[-1].velocities) == [0.0] * len(msg.joint_names)


def test_cues_drive_servos_and_leds_across_processes(ros, launch_node):
    servo_node = launch_node("fay_ros.nodes.servo_mapper", {"reload_period": 0.0})
    led_node = launch_node("fay_ros.nodes.led_mapper", {"reload_period": 0.0})
    cue_pub, (trajectories, colors, patterns) = connect(
        ros,
        (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1),
        (ColorRGBA, topics.LED_COLOR, qos.COMMANDS, 1),
        (String, topics.LED_PATTERN, qos.LATCHED, 1),
    )
    ros.wait_for_subscribers(cue_pub, 2)

    # Latched: the idle look published at start-up reaches a subscriber that came later.
    first = patterns.wait_for_count(1)[0]
    assert led.parse_pattern(first.data).affect == LED_TABLE.idle.affect

    sync(cue_pub, trajectories, colors)
    cue_pub.publish(action_cue("invite", "warm", 0.9, 40))
    start = motion_index(trajectories)
    invite = trajectories.messages[start]
    assert_trajectory_message(invite, SERVO_TABLE)
    wire_intensity = struct.unpack("f", struct.pack("f", 0.9))[0]  # ActionCue.intensity is float32
    planned = servo.plan(SERVO_TABLE, "invite", wire_intensity, {})
    assert [seconds(p.time_from_start) for p in invite.points] == pytest.approx(
        [p.time for p in planned.points], abs=2e-9
    )
    assert [list(p.positions) for p in invite.points] == [pytest.approx(p.positions) for p in planned.points]
    warm = LED_TABLE.affects["warm"]
    bright = LED_TABLE.brightness.at(wire_intensity)
    color = colors.wait_for_match(lambda c: abs(c.a - bright) < 1e-6, what="the warm colour")
    assert (color.r, color.g, color.b) == pytest.approx([c * bright for c in warm.color], abs=1e-6)
    line = patterns.wait_for_match(lambda m: "affect=warm" in m.data, what="the warm pattern").data
    assert led.parse_pattern(line).pattern == warm.pattern

    # Lower priority while invite is busy: it waits, then starts by itself.
    cue_pub.publish(action_cue("nod", "smile", 0.5, 10, uid="c:1"))
    nod = trajectories.wait_for_count(start + 2, timeout=SERVO_TABLE.preemption.max_wait + 10)[start + 1]
    assert_trajectory_message(nod, SERVO_TABLE)
    tilt = list(nod.joint_names).index("head_tilt")
    assert max(p.positions[tilt] for p in nod.points) > 0.1, "a nod moves the head"

    # Unknown behavior and affect, higher priority: the servo default, the sentiment fallback.
    cue_pub.publish(action_cue("moonwalk", "bewildered", 0.5, 90, sentiment=-0.9, uid="c:2"))
    fallback = trajectories.wait_for_count(start + 3)[start + 2]
    assert_trajectory_message(fallback, SERVO_TABLE)
    assert len(fallback.points) == 1, "the default (idle) is a single move back to the idle pose"
    negative = LED_TABLE.sentiment_fallback.negative
    patterns.wait_for_match(lambda m: f"affect={negative}" in m.data, what="the negative fallback look")
    assert servo_node.alive() and led_node.alive()
    assert servo_node.stop() == 0  # exited: everything it logged is in its output
    assert "moonwalk→idle (default)" in servo_node.output()


def wait_not_ready(diagnostics, node: str) -> str:
    """The message of the node's ERROR `state` on /diagnostics (repeated every second)."""
    array = diagnostics.wait_for_match(
        lambda a: any(s.name == f"fay/{node}: state" and s.level == DiagnosticStatus.ERROR for s in a.status),
        what=f"{node} not ready on /diagnostics",
    )
    return next(s.message for s in array.status if s.name == f"fay/{node}: state")


def test_a_bad_servo_table_leaves_the_node_alive_unconfigured_and_saying_where(tmp_path, ros, launch_node):
    bad = SERVO_YAML.replace("{at: 0.5, pose: {head_tilt: -0.05}}", "{at: 0.5, pose: {neck: -0.05}}")
    assert bad != SERVO_YAML
    path = tmp_path / "servo_map.yaml"
    path.write_text(bad, encoding="utf-8")
    line = bad.splitlines().index(next(t for t in bad.splitlines() if "neck: -0.05" in t)) + 1
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    readiness = ros.readiness("servo_mapper")
    node = launch_node("fay_ros.nodes.servo_mapper", {"map_file": str(path)})
    message = wait_not_ready(diagnostics, "servo_mapper")
    assert message.startswith(
        f"not ready: servo map table: {path}: behaviors.nod.keyframes[1].pose.neck: unknown joint"
    ), message
    assert f"(line {line})" in message
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False)
    assert node.alive() and lifecycle_state(ros, "servo_mapper") == "unconfigured"
    assert not any(m.data for m in readiness.messages)

    # The way back without a restart: a good map_file (live), then configure and activate.
    good = tmp_path / "good_servo_map.yaml"
    good.write_text(SERVO_YAML, encoding="utf-8")
    assert set_parameter(ros, "servo_mapper", "map_file", str(good)).successful
    assert change_state(ros, "servo_mapper", CONFIGURE) and change_state(ros, "servo_mapper", ACTIVATE)
    readiness.wait_for(lambda msgs: msgs[-1].data is True, what="ready once configured with the good table")


def test_a_missing_led_table_leaves_the_node_alive_unconfigured_and_saying_why(tmp_path, ros, launch_node):
    path = tmp_path / "nowhere" / "led_map.yaml"
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    node = launch_node("fay_ros.nodes.led_mapper", {"map_file": str(path)})
    assert wait_not_ready(diagnostics, "led_mapper") == f"not ready: led map table: {path}: file not found"
    assert node.alive() and lifecycle_state(ros, "led_mapper") == "unconfigured"


def test_servo_mapper_reloads_edits_and_keeps_the_last_good_table(tmp_path, ros, launch_node):
    path = tmp_path / "servo_map.yaml"
    path.write_text(SERVO_YAML, encoding="utf-8")
    node = launch_node("fay_ros.nodes.servo_mapper", {"map_file": str(path), "reload_period": 0.1})
    cue_pub, (trajectories, statuses) = connect(
        ros, (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1), (DiagnosticArray, topics.DIAGNOSTICS, 10, 1)
    )
    ros.wait_for_subscribers(cue_pub)
    node.wait_ready()
    ros.wait_matched(statuses, "servo_mapper")
    sync(cue_pub, trajectories)
    nod_points = len(SERVO_TABLE.behaviors["nod"].keyframes) + 1

    rejected = write_until_status(
        path, SERVO_YAML.replace("default: idle", "default: dance"), statuses, "servo_mapper", DiagnosticStatus.ERROR
    )
    assert "NOT reloaded" in rejected and f"{path}: default: 'dance' is not a key of behaviors" in rejected
    assert "NOT reloaded" in node.output()
    assert f"{path}: default: 'dance' is not a key of behaviors" in node.output()
    # A nod after the moonwalk marks where the moonwalk's trajectory is, past the sync cues' ones.
    cue_pub.publish(action_cue("moonwalk", "neutral", 0.5, 50))
    cue_pub.publish(action_cue("nod", "neutral", 0.5, 60, uid="c:1"))
    marker = motion_index(trajectories)
    assert len(trajectories.messages[marker].points) == nod_points
    old = trajectories.messages[marker - 1]
    assert len(old.points) == 1, "still the old default (idle)"

    write_until_status(
        path, SERVO_YAML.replace("default: idle", "default: nod"), statuses, "servo_mapper", DiagnosticStatus.OK
    )
    cue_pub.publish(action_cue("moonwalk", "neutral", 0.5, 70, uid="c:2"))
    new = trajectories.wait_for_count(marker + 2)[marker + 1]
    assert len(new.points) == nod_points, "the new default (nod)"
    assert node.alive()


def test_led_mapper_reloads_edits_and_keeps_the_last_good_table(tmp_path, ros, launch_node):
    text = default_table_path(led.TABLE_FILE).read_text(encoding="utf-8")
    path = tmp_path / "led_map.yaml"
    path.write_text(text, encoding="utf-8")
    node = launch_node("fay_ros.nodes.led_mapper", {"map_file": str(path), "reload_period": 0.1})
    _cue_pub, (patterns, statuses) = connect(
        ros, (String, topics.LED_PATTERN, qos.LATCHED, 1), (DiagnosticArray, topics.DIAGNOSTICS, 10, 1)
    )
    node.wait_ready()
    ros.wait_matched(statuses, "led_mapper")
    assert led.parse_pattern(patterns.wait_for_count(1)[0].data).affect == LED_TABLE.idle.affect

    rejected = write_until_status(
        path,
        text.replace("pattern: pulse, period: 4.0", "pattern: flicker, period: 4.0"),
        statuses,
        "led_mapper",
        DiagnosticStatus.ERROR,
    )
    assert "NOT reloaded" in rejected and f"{path}: affects.sad.pattern:" in rejected
    assert f"{path}: affects.sad.pattern:" in node.output()

    idle = f"idle: {{affect: {LED_TABLE.idle.affect}, brightness: 0.25}}"
    assert idle in text
    reloaded = write_until_status(
        path, text.replace(idle, "idle: {affect: sad, brightness: 0.25}"), statuses, "led_mapper", DiagnosticStatus.OK
    )
    assert "led map reloaded" in reloaded
    patterns.wait_for_match(lambda m: "affect=sad" in m.data, what="the new idle look")
    assert node.alive()


def test_servo_mapper_starts_motions_from_measured_joint_states(ros, launch_node):
    from sensor_msgs.msg import JointState

    launch_node(
        "fay_ros.nodes.servo_mapper",
        {"reload_period": 0.0, "joint_states_topic": "/joint_states", "joint_state_timeout": 5.0},
    )
    cue_pub, (trajectories,) = connect(ros, (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1))
    ros.wait_for_subscribers(cue_pub)
    measured = JointState(name=["head_pan", "not_a_joint"], position=[0.6, 9.0])
    states = ros.node.create_publisher(JointState, "/joint_states", 10)
    ros.wait_for_subscribers(states)
    sync(cue_pub, trajectories)
    pan = list(SERVO_TABLE.joints).index("head_pan")
    idle_pan = SERVO_TABLE.joints["head_pan"].idle

    def motions(msgs):
        return [m for m in msgs if len(m.points) > 1]

    # The mapper may match our joint-state publisher later than our cue publisher, and a state
    # may be overtaken by the cue after it (another topic). A real robot streams states; so does
    # this loop, a state before each nod, until a nod starts from the measured head_pan. Equal
    # priorities: a nod waits for the one before to end, so each round gets exactly one
    # trajectory, and the rounds are paced by the motion, however fast or slow discovery is.
    def nod_from_measured_pan():
        done = len(motions(trajectories.messages))
        states.publish(measured)
        cue_pub.publish(action_cue("nod", "neutral", 0.5, 50, uid=f"js:{done}"))
        msg = trajectories.wait_for(
            lambda msgs: motions(msgs)[done:], SERVO_TABLE.preemption.max_wait + 10, what=f"nod #{done + 1}"
        )[0]
        assert_trajectory_message(msg, SERVO_TABLE)
        return msg if msg.points[0].positions[pan] != idle_pan else None

    msg = wait_until(nod_from_measured_pan, timeout=30, message="a nod planned from the measured head_pan")
    # A nod does not move head_pan: it holds the measured 0.6 until the return to idle.
    assert msg.points[0].positions[pan] == pytest.approx(0.6)
