"""The body nodes on simulated time (use_sim_time:=true, /clock published by the test): the LED
hold, the servo's busy period and its return to idle follow /clock, not the wall clock."""

from __future__ import annotations

import pytest
from std_msgs.msg import ColorRGBA
from trajectory_msgs.msg import JointTrajectory

from body_rig import (
    SERVO_TABLE,
    SimClock,
    action_cue,
    connect,
    is_idle_colour,
    is_sync_colour,
    motion_index,
    sync,
)
from fay_ros.body import servo
from fay_ros.common import qos, topics

T0 = 100.0


def test_the_led_hold_expires_when_the_clock_passes_it(ros, launch_node):
    hold = 60.0  # far beyond the test's wall time: only /clock can make it expire
    node = launch_node("fay_ros.nodes.led_mapper", {"use_sim_time": True, "hold": hold, "reload_period": 0.0})
    clock = SimClock(ros, "led_mapper")
    node.wait_ready(probe=ros)
    clock.set(T0)
    cue_pub, (colors,) = connect(ros, (ColorRGBA, topics.LED_COLOR, qos.COMMANDS, 1))
    sync(cue_pub, colors=colors)  # the look of a cue shown at T0 (every copy at T0: the clock stands)

    def after_the_cue(msgs):
        return msgs[max(i for i, c in enumerate(msgs) if is_sync_colour(c)) + 1 :]

    clock.set(T0 + hold - 0.1)
    clock.settle()  # wall time passes, the node's time does not
    assert not after_the_cue(colors.messages), "the hold expired before /clock passed it"
    clock.set(T0 + hold + 0.1)
    [back] = colors.wait_for(after_the_cue, what="the idle look once /clock passed the hold")
    assert is_idle_colour(back)
    assert node.alive()


def test_the_servo_motion_and_its_return_to_idle_follow_the_clock(ros, launch_node):
    # max_wait (a live parameter, here given at start) long enough for a nod to wait for invite.
    node = launch_node("fay_ros.nodes.servo_mapper", {"use_sim_time": True, "reload_period": 0.0, "max_wait": 60.0})
    clock = SimClock(ros, "servo_mapper")
    node.wait_ready(probe=ros)
    clock.set(T0)
    cue_pub, (trajectories,) = connect(ros, (JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS, 1))
    sync(cue_pub, trajectories)
    pan = list(SERVO_TABLE.joints).index("head_pan")
    idle_pan = SERVO_TABLE.joints["head_pan"].idle

    def nods_from(start: int) -> list:
        return [m for m in trajectories.messages[start:] if len(m.points) > 1]

    # invite moves head_pan; a lower-priority nod (which does not) waits for it.
    cue_pub.publish(action_cue("invite", "warm", 0.5, 40, uid="c:1"))
    cue_pub.publish(action_cue("nod", "smile", 0.5, 10, uid="c:2"))
    invite_at = motion_index(trajectories)
    invite = servo.plan(SERVO_TABLE, "invite", 0.5, {}, start=T0)
    assert invite.motion_end > 0.5 and invite.sample(invite.motion_end)[0][pan] != pytest.approx(idle_pan)

    clock.set(T0 + invite.motion_end - 0.05)
    clock.settle()
    assert not nods_from(invite_at + 1), "the nod started before /clock passed the invite's last keyframe"
    started = T0 + invite.motion_end + 0.01
    clock.set(started)
    [nod] = trajectories.wait_for(lambda msgs: nods_from(invite_at + 1), what="the nod once invite's motion ended")
    # Started from where invite's return to idle had brought head_pan at that /clock time.
    expected_pan = invite.sample(started - T0)[0][pan]
    assert expected_pan != pytest.approx(idle_pan, abs=1e-3)
    assert nod.points[0].positions[pan] == pytest.approx(expected_pan, abs=1e-6)

    # Nothing busy from the nod's last keyframe on; its return to idle ends when /clock says so.
    planned = servo.plan(SERVO_TABLE, "nod", 0.5, {"head_pan": expected_pan}, start=started)
    count = len(trajectories.messages)
    clock.set(started + planned.duration - 0.3)
    cue_pub.publish(action_cue("nod", "smile", 0.5, 10, uid="c:3"))
    before_end = trajectories.wait_for_count(count + 1)[count]
    assert before_end.points[0].positions[pan] != pytest.approx(idle_pan, abs=1e-3), "head_pan still returning"
    second = servo.plan(SERVO_TABLE, "nod", 0.5, {"head_pan": before_end.points[0].positions[pan]}, start=clock.now)
    clock.set(clock.now + second.duration + 0.01)
    cue_pub.publish(action_cue("nod", "smile", 0.5, 10, uid="c:4"))
    after_end = trajectories.wait_for_count(count + 2)[count + 1]
    assert after_end.points[0].positions[pan] == pytest.approx(idle_pan, abs=1e-9), "back at rest"
    assert node.alive()
