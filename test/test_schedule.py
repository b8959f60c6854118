"""The schedule core without ROS (`fay_ros.schedule`): the file (strict, file:line errors),
time rules (daily / every / cron through croniter; start-up, coalescing, the clock going
backwards, daylight saving time), and proactive talk (the gate: quiet hours, absent, rate
limit, late, waiting while someone speaks; the planner's silence and topic triggers, hot
reload). Every time is an explicit datetime in an explicit zone."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from fay_ros.common.errors import ConfigError
from fay_ros.schedule.config import ScheduleError, ScheduleFile, load_schedule
from fay_ros.schedule.proactive import ProactivePlanner, gate, in_quiet_hours
from fay_ros.schedule.timing import CronRule, IntervalRule, TimeTriggers, daily_rule, repeated_wall_time

UTC = UTC
BERLIN = ZoneInfo("Europe/Berlin")
SHANGHAI = ZoneInfo("Asia/Shanghai")


def at(*parts: int, zone=UTC) -> float:
    return datetime(*parts, tzinfo=zone).timestamp()


def schedule(**proactive) -> ScheduleFile:
    return ScheduleFile.model_validate({"timezone": "UTC", "proactive": proactive})


# ---------------------------------------------------------------- the file
def write(tmp_path, text: str):
    path = tmp_path / "schedule.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_shipped_and_example_files_load():
    from fay_ros.common.paths import config_file

    shipped = load_schedule(config_file("schedule.yaml"))
    assert (shipped.memory.portrait_at, shipped.memory.reflection_at) == ("11:30", "23:00")
    example = load_schedule(config_file("schedule.example.yaml"))
    assert [t.kind for t in example.proactive.triggers] == ["daily", "every", "cron", "topic", "silence"]


@pytest.mark.parametrize(
    "body, expected",
    [
        ('memory:\n  portrait_at: "25:00"\n', "memory.portrait_at: a time of day is written HH:MM"),
        ('memory:\n  reflecton_at: "23:00"\n', "memory.reflecton_at: unknown key (misspelt?) (line 2)"),
        ("timezone: Mars/Olympus\n", "timezone: unknown time zone"),
        ('proactive:\n  quiet_hours: "22:00"\n', "proactive.quiet_hours: quiet hours are written HH:MM-HH:MM"),
        (
            'proactive:\n  triggers:\n    - name: a\n      cron: "61 * * * *"\n      say: hi\n',
            "proactive.triggers[0].cron: not a valid cron expression",
        ),
        (
            'proactive:\n  triggers:\n    - name: a\n      cron: "0 12 * * 1-5 0"\n      say: hi\n',
            "a cron expression has 5 fields",
        ),
        (
            'proactive:\n  triggers:\n    - name: a\n      daily: "08:30"\n      say: hi\n      prompt: greet\n',
            "proactive.triggers[0]: needs exactly one of say (a fixed line) or prompt",
        ),
        (
            "proactive:\n  triggers:\n    - name: a\n      say: hi\n",
            "proactive.triggers[0]: needs exactly one of daily, every, cron, topic, silence (got none) (line 3)",
        ),
        (
            'proactive:\n  triggers:\n    - name: a\n      daily: "08:30"\n      every: 60\n      say: hi\n',
            "(got daily, every)",
        ),
        (
            "proactive:\n  triggers:\n    - name: a\n      topic: {name: /people/detected, type: std_msgs/Bool}\n"
            "      say: hi\n",
            "proactive.triggers[0].topic.type: a message type is written package/msg/Type",
        ),
        (
            "proactive:\n  triggers:\n    - name: a\n      every: 60\n      say: hi\n    - name: a\n      every: 90\n"
            "      say: ho\n",
            "proactive.triggers[1].name: trigger name 'a' used twice (line 6)",
        ),
        ('memory:\n  portrait_at: "11:30"\n  portrait_at: "12:00"\n', "duplicate key 'portrait_at'"),
    ],
)
def test_a_bad_file_is_refused_with_file_key_and_line(tmp_path, body, expected):
    path = write(tmp_path, body)
    with pytest.raises(ScheduleError) as caught:
        load_schedule(path)
    assert isinstance(caught.value, ConfigError)
    assert str(path.name) in str(caught.value) and expected in str(caught.value), str(caught.value)


def test_bad_values_name_their_line(tmp_path):
    path = write(
        tmp_path,
        """\
        timezone: UTC
        memory:
          portrait_at: "11:30"
          reflection_at: "23:61"
        """,
    )
    with pytest.raises(ScheduleError) as caught:
        load_schedule(path)
    assert str(caught.value).endswith("(got '23:61') (line 4)")


def test_empty_times_mean_never_and_an_empty_file_is_the_defaults(tmp_path):
    assert load_schedule(write(tmp_path, "")).memory.portrait_at == "11:30"
    assert load_schedule(write(tmp_path, 'memory: {portrait_at: ""}\n')).memory.portrait_at == ""


# ---------------------------------------------------------------- time rules
def test_a_daily_time_fires_once_a_day_not_at_start_up():
    triggers = TimeTriggers({"portrait": daily_rule("11:30", UTC)})
    assert triggers.evaluate(at(2026, 1, 1, 11, 40)) == []  # start-up after 11:30: the day is not replayed
    assert triggers.evaluate(at(2026, 1, 1, 23, 0)) == []
    assert triggers.evaluate(at(2026, 1, 2, 11, 29, 59)) == []  # not before
    [firing] = triggers.evaluate(at(2026, 1, 2, 11, 30))
    assert (firing.name, firing.due, firing.skipped) == ("portrait", at(2026, 1, 2, 11, 30), 0)
    assert triggers.evaluate(at(2026, 1, 2, 11, 30, 1)) == []  # not twice
    assert triggers.evaluate(at(2026, 1, 2, 23, 59)) == []
    assert [f.due for f in triggers.evaluate(at(2026, 1, 3, 11, 31))] == [at(2026, 1, 3, 11, 30)]


def test_daily_times_are_wall_clock_times_of_the_zone():
    triggers = TimeTriggers({"evening": daily_rule("23:00", SHANGHAI)})
    triggers.evaluate(at(2026, 1, 1, 14, 0))  # 22:00 in Shanghai
    [firing] = triggers.evaluate(at(2026, 1, 1, 15, 0, 5))
    assert firing.due == at(2026, 1, 1, 23, 0, zone=SHANGHAI) == at(2026, 1, 1, 15, 0)


def test_a_clock_jump_over_several_occurrences_fires_once_with_the_latest():
    triggers = TimeTriggers({"daily": daily_rule("08:00", UTC), "hourly": CronRule("0 * * * *", UTC)})
    triggers.evaluate(at(2026, 1, 1, 7, 30))
    firings = triggers.evaluate(at(2026, 1, 4, 9, 30))  # three days later
    assert [(f.name, f.due, f.skipped) for f in firings] == [
        ("daily", at(2026, 1, 4, 8, 0), 3),
        ("hourly", at(2026, 1, 4, 9, 0), 73),
    ]
    assert triggers.evaluate(at(2026, 1, 4, 9, 59)) == []
    assert [f.name for f in triggers.evaluate(at(2026, 1, 4, 10, 0))] == ["hourly"]


def test_very_many_skipped_occurrences_are_not_walked_one_by_one():
    triggers = TimeTriggers({"every": IntervalRule(1.0)})
    triggers.evaluate(at(2026, 1, 1))
    [firing] = triggers.evaluate(at(2026, 3, 1, 0, 0, 0) + 0.5)
    assert firing.due == at(2026, 3, 1) and firing.skipped == 1000  # counted up to the cap
    assert triggers.next_due()["every"] == at(2026, 3, 1, 0, 0, 1)


def test_an_interval_counts_from_the_first_look_at_the_clock():
    triggers = TimeTriggers({"water": IntervalRule(7200.0)})
    triggers.evaluate(at(2026, 1, 1, 8, 17))
    assert triggers.evaluate(at(2026, 1, 1, 10, 16, 59)) == []
    assert [f.due for f in triggers.evaluate(at(2026, 1, 1, 10, 17))] == [at(2026, 1, 1, 10, 17)]
    assert triggers.next_due() == {"water": at(2026, 1, 1, 12, 17)}


def test_cron_weekdays():
    triggers = TimeTriggers({"lunch": CronRule("0 12 * * 1-5", UTC)})
    triggers.evaluate(at(2026, 1, 2, 13, 0))  # a Friday, after lunch
    assert triggers.next_due() == {"lunch": at(2026, 1, 5, 12, 0)}  # Monday, not the weekend
    assert triggers.evaluate(at(2026, 1, 4, 12, 30)) == []  # Sunday
    assert [f.due for f in triggers.evaluate(at(2026, 1, 5, 12, 0, 1))] == [at(2026, 1, 5, 12, 0)]


def test_a_small_step_back_is_waited_out_and_fires_nothing_twice():
    triggers = TimeTriggers({"morning": daily_rule("08:30", UTC)})
    triggers.evaluate(at(2026, 1, 1, 8, 0))
    assert len(triggers.evaluate(at(2026, 1, 1, 8, 30, 1))) == 1
    assert triggers.evaluate(at(2026, 1, 1, 8, 29, 58)) == []  # an NTP correction of 3 s
    assert triggers.evaluate(at(2026, 1, 1, 8, 30, 0)) == []  # the same occurrence again: not twice
    assert triggers.evaluate(at(2026, 1, 1, 8, 30, 2)) == []


def test_a_big_step_back_is_a_new_start():
    """Sim time reset (a bag played again): nothing fires for the jump, later occurrences do."""
    triggers = TimeTriggers({"morning": daily_rule("08:30", UTC)})
    triggers.evaluate(at(2026, 1, 5, 7, 0))
    assert len(triggers.evaluate(at(2026, 1, 5, 9, 0))) == 1
    assert triggers.evaluate(at(2026, 1, 1, 8, 0)) == []  # back four days
    assert triggers.next_due() == {"morning": at(2026, 1, 1, 8, 30)}
    assert [f.due for f in triggers.evaluate(at(2026, 1, 1, 8, 31))] == [at(2026, 1, 1, 8, 30)]


def test_a_reload_does_not_replay_the_past():
    triggers = TimeTriggers({"a": daily_rule("08:30", UTC)})
    triggers.evaluate(at(2026, 1, 1, 9, 0))
    triggers.set_rules({"a": daily_rule("08:30", UTC), "b": daily_rule("08:45", UTC), "c": daily_rule("09:30", UTC)})
    assert triggers.evaluate(at(2026, 1, 1, 9, 10)) == []  # b's 08:45 was before the reload
    assert [f.name for f in triggers.evaluate(at(2026, 1, 1, 9, 30))] == ["c"]


def test_daylight_saving_time_a_daily_time_fires_once_a_day():
    """Europe/Berlin: 2024-03-31 02:00 → 03:00 (02:30 never shows), 2024-10-27 03:00 → 02:00
    (02:30 shows twice)."""
    triggers = TimeTriggers({"night": daily_rule("02:30", BERLIN), "morning": daily_rule("08:30", BERLIN)})
    triggers.evaluate(at(2024, 3, 30, 12, 0, zone=BERLIN))
    night = triggers.evaluate(at(2024, 3, 31, 3, 0, 1, zone=BERLIN))
    assert [f.due for f in night] == [at(2024, 3, 31, 3, 0, zone=BERLIN)]  # fires when the clock jumps over it
    assert [f.due for f in triggers.evaluate(at(2024, 3, 31, 8, 30, zone=BERLIN))] == [
        at(2024, 3, 31, 8, 30, zone=BERLIN)
    ]  # 23 h after the day before's 08:30, still 08:30 on the wall

    triggers = TimeTriggers({"night": daily_rule("02:30", BERLIN)})
    triggers.evaluate(at(2024, 10, 26, 12, 0, zone=BERLIN))
    first = at(2024, 10, 27, 0, 30)  # 02:30 CEST
    assert [f.due for f in triggers.evaluate(first + 1)] == [first]
    assert repeated_wall_time(first + 3600, BERLIN)  # 02:30 CET: the same wall time again
    assert triggers.evaluate(first + 3601) == []  # not twice
    assert triggers.next_due() == {"night": at(2024, 10, 28, 2, 30, zone=BERLIN)}


def test_daylight_saving_time_a_wildcard_hour_fires_in_both_hours():
    triggers = TimeTriggers({"quarter": CronRule("*/30 * * * *", BERLIN)})
    triggers.evaluate(at(2024, 10, 27, 0, 10))  # 02:10 CEST
    fired = [f.due for t in range(0, 7200, 600) for f in triggers.evaluate(at(2024, 10, 27, 0, 20) + t)]
    assert fired == [
        at(2024, 10, 27, 0, 30),
        at(2024, 10, 27, 1, 0),
        at(2024, 10, 27, 1, 30),
        at(2024, 10, 27, 2, 0),
    ]  # 02:30 CEST, 02:00 CET, 02:30 CET, 03:00 CET: 30 min apart


# ---------------------------------------------------------------- the gate
def verdict(settings=None, *, now, due=None, kind="daily", speaking=False, last_heard=None, history=()):
    settings = settings or schedule().proactive
    return gate(
        now=now,
        due=now if due is None else due,
        kind=kind,
        settings=settings,
        zone=UTC,
        speaking=speaking,
        last_heard=now - 60 if last_heard is None else last_heard,
        history=list(history),
    )


def test_quiet_hours_spanning_midnight():
    quiet = schedule(quiet_hours="22:00-07:00").proactive.quiet
    assert not in_quiet_hours(at(2026, 1, 1, 21, 59, 59), quiet, UTC)
    assert in_quiet_hours(at(2026, 1, 1, 22, 0), quiet, UTC)
    assert in_quiet_hours(at(2026, 1, 2, 3, 0), quiet, UTC)
    assert in_quiet_hours(at(2026, 1, 2, 6, 59, 59), quiet, UTC)
    assert not in_quiet_hours(at(2026, 1, 2, 7, 0), quiet, UTC)
    daytime = schedule(quiet_hours="12:00-14:00").proactive.quiet
    assert in_quiet_hours(at(2026, 1, 1, 13, 0), daytime, UTC)
    assert not in_quiet_hours(at(2026, 1, 1, 23, 0), daytime, UTC)
    assert in_quiet_hours(at(2026, 1, 1, 14, 30), quiet, SHANGHAI)  # 22:30 in Shanghai
    settings = schedule(quiet_hours="22:00-07:00").proactive
    assert verdict(settings, now=at(2026, 1, 1, 23, 0)).reason == "quiet_hours"


def test_absent_applies_to_time_triggers_only():
    settings = schedule(absent_after=3600).proactive
    now = at(2026, 1, 1, 9, 0)
    assert verdict(settings, now=now, last_heard=now - 3601).reason == "absent"
    assert verdict(settings, now=now, last_heard=now - 3600).action == "speak"
    assert (
        gate(
            now=now, due=now, kind="cron", settings=settings, zone=UTC, speaking=False, last_heard=None, history=[]
        ).reason
        == "absent"
    )  # nobody heard since start
    assert verdict(settings, now=now, kind="topic", last_heard=now - 86400).action == "speak"
    assert verdict(schedule(absent_after=0).proactive, now=now, last_heard=now - 86400).action == "speak"


def test_rate_limit_per_user_gap_and_day():
    settings = schedule(min_gap=1800, max_per_day=2).proactive
    now = at(2026, 1, 1, 15, 0)
    assert verdict(settings, now=now, history=[now - 1799]).reason == "rate_limit"
    assert verdict(settings, now=now, history=[now - 1800]).action == "speak"
    assert verdict(settings, now=now, history=[at(2026, 1, 1, 9, 0), at(2026, 1, 1, 12, 0)]).reason == "rate_limit"
    assert verdict(settings, now=now, history=[at(2025, 12, 31, 20, 0), at(2026, 1, 1, 12, 0)]).action == "speak"


def test_speech_makes_a_line_wait_up_to_max_delay():
    settings = schedule(max_delay=120).proactive
    due = at(2026, 1, 1, 9, 0)
    assert verdict(settings, now=due + 5, due=due, speaking=True).action == "wait"
    assert verdict(settings, now=due + 120, due=due, speaking=True).action == "wait"
    assert verdict(settings, now=due + 121, due=due, speaking=True).reason == "late"
    assert verdict(settings, now=due + 121, due=due).reason == "late"  # first seen that late (a clock jump)


# ---------------------------------------------------------------- the planner
def test_a_daily_line_is_said_once_a_day_to_the_last_user_heard():
    planner = ProactivePlanner(schedule(triggers=[{"name": "gm", "daily": "08:30", "say": "Good morning!"}]))
    assert planner.tick(at(2026, 1, 1, 8, 0)) == []
    planner.heard("alice", at(2026, 1, 1, 8, 10))
    [decision] = planner.tick(at(2026, 1, 1, 8, 30, 1))
    assert (decision.action, decision.trigger, decision.user, decision.say) == ("speak", "gm", "alice", "Good morning!")
    assert planner.tick(at(2026, 1, 1, 8, 30, 2)) == []
    planner.heard("alice", at(2026, 1, 2, 8, 0))
    assert [d.action for d in planner.tick(at(2026, 1, 2, 8, 30, 1))] == ["speak"]


def test_quiet_hours_suppress_a_daily_line():
    planner = ProactivePlanner(
        schedule(
            quiet_hours="22:00-07:00",
            absent_after=0,
            triggers=[{"name": "late", "daily": "23:15", "prompt": "say good night"}],
        )
    )
    planner.tick(at(2026, 1, 1, 23, 0))
    [decision] = planner.tick(at(2026, 1, 1, 23, 15))
    assert (decision.action, decision.reason, decision.user) == ("drop", "quiet_hours", "")


def test_a_line_waits_while_the_robot_speaks_then_goes_out():
    planner = ProactivePlanner(schedule(triggers=[{"name": "gm", "daily": "08:30", "say": "hi", "user": "bob"}]))
    planner.tick(at(2026, 1, 1, 8, 0))
    planner.heard("alice", at(2026, 1, 1, 8, 29))
    assert planner.tick(at(2026, 1, 1, 8, 30), robot_speaking=True) == []
    assert planner.tick(at(2026, 1, 1, 8, 30, 30), user_speaking=True) == []
    [decision] = planner.tick(at(2026, 1, 1, 8, 31))
    assert (decision.action, decision.user, decision.due) == ("speak", "bob", at(2026, 1, 1, 8, 30))


def test_a_line_blocked_longer_than_max_delay_is_dropped():
    planner = ProactivePlanner(schedule(max_delay=60, triggers=[{"name": "gm", "daily": "08:30", "say": "hi"}]))
    planner.tick(at(2026, 1, 1, 8, 0))
    planner.heard("alice", at(2026, 1, 1, 8, 29))
    assert planner.tick(at(2026, 1, 1, 8, 30, 30), robot_speaking=True) == []
    [decision] = planner.tick(at(2026, 1, 1, 8, 31, 1), robot_speaking=True)
    assert (decision.action, decision.reason) == ("drop", "late")


def test_two_lines_due_together_the_second_hits_the_rate_limit():
    planner = ProactivePlanner(
        schedule(
            triggers=[{"name": "a", "daily": "08:30", "say": "one"}, {"name": "b", "cron": "30 8 * * *", "say": "two"}]
        )
    )
    planner.tick(at(2026, 1, 1, 8, 0))
    planner.heard("alice", at(2026, 1, 1, 8, 10))
    decisions = planner.tick(at(2026, 1, 1, 8, 30, 1))
    assert [(d.trigger, d.action, d.reason) for d in decisions] == [("a", "speak", ""), ("b", "drop", "rate_limit")]


def test_silence_fires_once_per_turn_after_nobody_spoke():
    planner = ProactivePlanner(schedule(triggers=[{"name": "quiet", "silence": 45, "prompt": "ask a follow-up"}]))
    planner.tick(at(2026, 1, 1, 10, 0))
    assert planner.tick(at(2026, 1, 1, 10, 5)) == []  # no turn yet: nothing to follow up
    planner.heard("alice", at(2026, 1, 1, 10, 10))
    assert planner.tick(at(2026, 1, 1, 10, 10, 20), robot_speaking=True) == []  # the reply is being spoken
    assert planner.tick(at(2026, 1, 1, 10, 11, 0)) == []  # 40 s after the reply ended
    [decision] = planner.tick(at(2026, 1, 1, 10, 11, 5))
    assert (decision.action, decision.kind, decision.user, decision.prompt) == (
        "speak",
        "silence",
        "alice",
        "ask a follow-up",
    )
    assert decision.due == at(2026, 1, 1, 10, 11, 5)
    assert planner.tick(at(2026, 1, 1, 10, 30)) == []  # once per turn
    planner.heard("alice", at(2026, 1, 1, 11, 0))
    assert [d.action for d in planner.tick(at(2026, 1, 1, 11, 0, 46))] == ["speak"]


def test_a_topic_message_fires_its_trigger():
    planner = ProactivePlanner(
        schedule(
            triggers=[
                {"name": "greet", "topic": {"name": "/people/detected", "type": "std_msgs/msg/Bool"}, "say": "Hello!"},
                {"name": "other", "topic": {"name": "/door/open", "type": "std_msgs/msg/Empty"}, "say": "Welcome!"},
            ]
        )
    )
    assert [(t.name, t.type) for t in planner.topics()] == [
        ("/people/detected", "std_msgs/msg/Bool"),
        ("/door/open", "std_msgs/msg/Empty"),
    ]
    planner.tick(at(2026, 1, 1, 10, 0))
    planner.event("/people/detected", at(2026, 1, 1, 10, 0, 1))
    [decision] = planner.tick(at(2026, 1, 1, 10, 0, 1))
    assert (decision.action, decision.trigger, decision.say, decision.user) == ("speak", "greet", "Hello!", "")


def test_disabled_says_nothing_and_replays_nothing_when_enabled_again():
    triggers = [{"name": "gm", "daily": "08:30", "say": "hi"}]
    planner = ProactivePlanner(schedule(enabled=False, triggers=triggers))
    planner.tick(at(2026, 1, 1, 8, 0))
    planner.heard("alice", at(2026, 1, 1, 8, 10))
    assert planner.tick(at(2026, 1, 1, 8, 31)) == []
    planner.set_schedule(schedule(enabled=True, triggers=triggers))
    assert planner.tick(at(2026, 1, 1, 8, 32)) == []
    assert planner.next_due() == {"gm": at(2026, 1, 2, 8, 30)}


def test_a_reload_keeps_the_history_and_forgets_removed_triggers():
    planner = ProactivePlanner(
        schedule(
            triggers=[
                {"name": "a", "daily": "08:30", "say": "one"},
                {"name": "b", "daily": "08:31", "say": "two", "user": "bob"},
            ]
        )
    )
    planner.tick(at(2026, 1, 1, 8, 0))
    planner.heard("alice", at(2026, 1, 1, 8, 10))
    assert [d.action for d in planner.tick(at(2026, 1, 1, 8, 30, 1))] == ["speak"]
    assert planner.tick(at(2026, 1, 1, 8, 31, 1), robot_speaking=True) == []  # b (to bob) waits
    planner.set_schedule(schedule(triggers=[{"name": "c", "daily": "08:59", "say": "three"}]))
    assert planner.tick(at(2026, 1, 1, 8, 31, 2)) == []  # b is gone
    [decision] = planner.tick(at(2026, 1, 1, 8, 59, 1))
    assert (decision.trigger, decision.reason) == ("c", "rate_limit")  # a's line 29 minutes ago still counts


def test_a_big_clock_step_back_forgets_the_history():
    planner = ProactivePlanner(schedule(triggers=[{"name": "gm", "daily": "08:30", "say": "hi"}]))
    planner.tick(at(2026, 1, 5, 8, 0))
    planner.heard("alice", at(2026, 1, 5, 8, 10))
    assert [d.action for d in planner.tick(at(2026, 1, 5, 8, 30, 1))] == ["speak"]
    planner.tick(at(2026, 1, 1, 8, 0))  # sim time reset
    planner.heard("alice", at(2026, 1, 1, 8, 10))
    assert [d.action for d in planner.tick(at(2026, 1, 1, 8, 30, 1))] == ["speak"]  # no gap from a future line
