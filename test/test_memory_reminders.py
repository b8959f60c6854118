"""The reminder store (issue 36): reminders and commitments on both backends, real stores,
injected times (no sleeps)."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from fay_ros.cli import main as cli_main
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.migrate import migrate
from fay_ros.memory.reminder_book import (
    FollowupPolicy,
    ReminderBook,
    ReminderError,
    followup_verdict,
)

LONDON = ZoneInfo("Europe/London")
SHANGHAI = ZoneInfo("Asia/Shanghai")


def at(text: str, where: ZoneInfo = LONDON) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=where).timestamp()


@pytest.fixture
def opened(memory_location, clock):
    stores = []

    def open_book(**kwargs):
        store = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
        stores.append(store)
        return store, ReminderBook(store.reminder_tables(), clock=clock, **kwargs)

    yield open_book
    for store in stores:
        try:
            store.close()
        except Exception:
            pass


def test_add_list_cancel_snooze_acknowledge(opened, clock):
    clock.t = at("2026-03-02T08:00:00", SHANGHAI)
    _store, book = opened()
    tea = book.add("alice", "Asia/Shanghai", "2026-03-02T15:00", "", "喝茶", "下午三点提醒我喝茶", "t1")
    pills = book.add("alice", "Asia/Shanghai", "2026-03-02T09:00", "FREQ=DAILY", "吃药")
    assert tea.start_local == "2026-03-02T15:00:00" and tea.status == "scheduled"
    assert tea.next_due_utc == at("2026-03-02T15:00:00", SHANGHAI)
    assert [r.text for r in book.list("alice")] == ["吃药", "喝茶"]  # by due time
    assert book.get("alice", tea.id) == tea
    assert tea.as_json() == {
        "id": tea.id,
        "text": "喝茶",
        "due": "2026-03-02T15:00:00",
        "tz": "Asia/Shanghai",
        "repeat": "",
        "status": "scheduled",
    }

    later = at("2026-03-02T16:30:00", SHANGHAI)
    snoozed = book.snooze("alice", tea.id, later)
    assert snoozed is not None and snoozed.next_due_utc == later and snoozed.snoozed_until_utc == later
    assert book.get("alice", tea.id).due_local == "2026-03-02T16:30:00"

    clock.t = at("2026-03-02T09:00:00", SHANGHAI)
    assert [r.id for r in book.due(clock.t)] == [pills.id]
    acked = book.acknowledge("alice", pills.id)  # a repeat moves on to tomorrow
    assert acked is not None and acked.status == "scheduled" and acked.due_local == "2026-03-03T09:00:00"
    assert book.due(clock.t) == []

    assert book.acknowledge("alice", tea.id).status == "acknowledged"
    assert [r.text for r in book.list("alice")] == ["吃药"]
    assert book.cancel("alice", pills.id) is True
    assert book.cancel("alice", pills.id) is False  # no longer active
    assert book.list("alice") == []
    assert {r.status for r in book.list("alice", include_done=True)} == {"acknowledged", "cancelled"}
    assert book.snooze("alice", pills.id, later) is None and book.acknowledge("alice", pills.id) is None


def test_add_refuses_what_cannot_be_kept(opened, clock):
    clock.t = at("2026-03-02T08:00:00")
    _store, book = opened()
    for args in (
        ("", "Europe/London", "2026-03-02T09:00", "", "x"),  # a guest
        ("alice", "Mars/Olympus", "2026-03-02T09:00", "", "x"),
        ("alice", "Europe/London", "tomorrow", "", "x"),
        ("alice", "Europe/London", "2026-03-02T09:00", "FREQ=SOMETIMES", "x"),
        ("alice", "Europe/London", "2026-03-01T09:00", "", "x"),  # a one-shot in the past
        ("alice", "Europe/London", "2026-03-02T09:00", "", "  "),
    ):
        with pytest.raises(ReminderError):
            book.add(*args)
    assert book.list("alice", include_done=True) == []


def test_a_daily_repeat_stays_at_0730_across_the_october_change(opened, clock):
    # Europe/London leaves summer time on Sunday 25 October 2026 (02:00 BST -> 01:00 GMT)
    clock.t = at("2026-10-22T12:00:00")
    _store, book = opened()
    r = book.add("alice", "Europe/London", "2026-10-23T07:30", "FREQ=DAILY", "walk the dog")
    seen = []
    for _day in range(5):
        (fired,) = book.due(r.next_due_utc)
        clock.t = fired.next_due_utc
        seen.append((fired.due_local, datetime.fromtimestamp(fired.next_due_utc, ZoneInfo("UTC")).hour))
        r = book.acknowledge("alice", fired.id)
    assert seen == [
        ("2026-10-23T07:30:00", 6),
        ("2026-10-24T07:30:00", 6),
        ("2026-10-25T07:30:00", 7),
        ("2026-10-26T07:30:00", 7),
        ("2026-10-27T07:30:00", 7),
    ]
    # advance (said, not acknowledged, the says used up) also keeps the wall-clock time
    clock.t = r.next_due_utc
    for _say in range(3):
        r = book.advance(r, clock.t)
        clock.t = r.next_due_utc if r.status == "due" else clock.t
    assert r.status == "scheduled" and r.due_local == "2026-10-29T07:30:00"


def test_a_one_shot_said_n_times_without_acknowledgement_is_missed(opened, clock):
    clock.t = at("2026-05-01T10:00:00")
    _store, book = opened(resay_after=300, max_says=3)
    r = book.add("alice", "Europe/London", "2026-05-01T10:30", "", "关火")
    now = r.next_due_utc
    states = []
    for _ in range(3):
        (fired,) = book.due(now)
        r = book.advance(fired, now)
        states.append((r.status, r.attempts))
        if r.status == "due":
            assert book.due(now) == [] and r.next_due_utc == now + 300
            now = r.next_due_utc
    assert states == [("due", 1), ("due", 2), ("missed", 3)]
    assert book.due(now + 3600) == [] and book.list("alice") == []
    assert book.get("alice", r.id).status == "missed"


def test_overdue_summary_after_a_restart(opened, clock):
    clock.t = at("2026-05-01T08:00:00")
    store, book = opened()
    call = book.add("alice", "Europe/London", "2026-05-01T09:00", "", "call mum")
    pills = book.add("alice", "Europe/London", "2026-05-01T08:30", "FREQ=DAILY", "take the pills")
    later = book.add("alice", "Europe/London", "2026-05-10T09:00", "", "dentist")
    down_since = clock.t
    store.close()

    clock.t = at("2026-05-03T12:00:00")  # two days and a bit later
    _store, book = opened()
    summary = book.overdue_summary("alice", down_since, clock.t)
    items = {i.reminder.id: i for i in summary.items}
    assert set(items) == {call.id, pills.id}
    assert items[call.id].times == 1 and items[pills.id].times == 3  # 1, 2 and 3 May at 08:30
    assert items[pills.id].last_due_utc == at("2026-05-03T08:30:00")
    line = summary.text()
    assert "2 reminders" in line and "call mum" in line and "take the pills (3 times)" in line
    # said once: nothing fires one by one afterwards, nothing is dropped
    assert book.due(clock.t) == []
    assert book.get("alice", call.id).status == "missed"
    assert book.get("alice", pills.id).due_local == "2026-05-04T08:30:00"
    assert book.get("alice", later.id).status == "scheduled"
    assert not book.overdue_summary("alice", down_since, clock.t)  # a second look finds nothing


def test_owners_are_isolated_and_a_guest_has_nothing(opened, clock):
    clock.t = at("2026-05-01T08:00:00")
    store, book = opened()
    a = book.add("alice", "Europe/London", "2026-05-01T09:00", "", "alice's")
    b = book.add("bob", "Europe/London", "2026-05-01T09:00", "", "bob's")
    guest_row = {**a.row(), "id": "guestrow", "owner": ""}
    store.reminder_tables().insert("reminders", guest_row)  # never written by the book; ignored if there
    assert [r.id for r in book.list("alice")] == [a.id]
    assert [r.id for r in book.list("bob")] == [b.id]
    assert book.list("") == [] and book.get("", "guestrow") is None
    assert book.get("bob", a.id) is None
    assert book.cancel("bob", a.id) is False and book.snooze("bob", a.id, clock.t) is None
    assert book.acknowledge("bob", a.id) is None and book.cancel("", "guestrow") is False
    assert book.get("alice", a.id).status == "scheduled"
    assert {r.id for r in book.due(at("2026-05-01T09:00:00"))} == {a.id, b.id}
    bobs = book.overdue_summary("bob", 0, at("2026-05-01T10:00:00"), consume=False)
    assert [i.reminder.id for i in bobs.items] == [b.id]
    book.add_commitment("alice", "我明天给牙医打电话")
    assert book.commitments("bob") == [] and book.commitments("") == []
    assert book.cancel_open("bob") == 0 and len(book.commitments("alice")) == 1
    with pytest.raises(ReminderError):
        book.add_commitment("", "x")


def test_a_corrupt_row_is_skipped_with_its_id_reported(opened, clock):
    clock.t = at("2026-05-01T08:00:00")
    reported = []
    store, book = opened(report=lambda rid, why: reported.append(rid))
    good = book.add("alice", "Europe/London", "2026-05-01T09:00", "FREQ=DAILY", "good")
    tables = store.reminder_tables()
    tables.insert("reminders", {**good.row(), "id": "badzone", "tz": "Mars/Olympus"})
    tables.insert("reminders", {**good.row(), "id": "badrule", "rrule": "FREQ=WHENEVER"})
    tables.insert("reminders", {**good.row(), "id": "badstart", "start_local": "soon"})
    assert [r.id for r in book.list("alice")] == [good.id]
    assert set(book.corrupt) == {"badzone", "badrule", "badstart"}
    assert "Mars/Olympus" in book.corrupt["badzone"]
    assert [r.id for r in book.due(at("2026-05-01T09:00:00"))] == [good.id]
    summary = book.overdue_summary("alice", 0, at("2026-05-01T10:00:00"))
    assert [i.reminder.id for i in summary.items] == [good.id]
    assert set(reported) == {"badzone", "badrule", "badstart"}
    assert tables.count("reminders", "alice") == 4  # skipped, not deleted


def test_commitments_add_list_done_and_clearing_cancels_the_open_ones(opened, clock):
    clock.t = at("2026-05-01T08:00:00")
    _store, book = opened()
    dentist = book.add_commitment(
        "alice", "我明天给牙医打电话", due_hint_utc=at("2026-05-02T09:00:00"), source_turn="t7"
    )
    report = book.add_commitment("alice", "交周报")
    assert sorted(c.text for c in book.commitments("alice")) == ["交周报", "我明天给牙医打电话"]
    assert book.commitment_done("alice", report.id) is True and book.commitment_done("alice", report.id) is False
    assert book.cancel_open("alice") == 1
    assert book.commitments("alice") == []
    assert {c.id: c.status for c in book.commitments("alice", include_closed=True)} == {
        dentist.id: "cancelled",
        report.id: "done",
    }


def test_followup_rate_limit_cooldown_and_quiet_hours():
    policy = FollowupPolicy.from_config(quiet_hours="22:00-07:00", timezone="Europe/London")
    noon = at("2026-05-01T12:00:00")
    assert followup_verdict(noon, [], 0, policy) == ""
    assert followup_verdict(noon, [noon - 3000, noon - 2000, noon - 1000], 0, policy) == "rate_limit"
    assert followup_verdict(noon, [noon - 3700, noon - 2000, noon - 1000], 0, policy) == ""  # one left the hour
    assert followup_verdict(noon, [noon - 2999], noon - 2999, policy) == "cooldown"  # ~50 min
    assert followup_verdict(noon, [noon - 3000], noon - 3000, policy) == ""
    assert followup_verdict(at("2026-05-01T23:30:00"), [], 0, policy) == "quiet_hours"
    assert followup_verdict(at("2026-05-01T06:59:00"), [], 0, policy) == "quiet_hours"
    assert followup_verdict(at("2026-05-01T07:00:00"), [], 0, policy) == ""
    assert followup_verdict(at("2026-05-01T23:30:00"), [], 0, FollowupPolicy()) == ""  # no quiet hours


def test_followup_candidates_respect_the_limit(opened, clock):
    clock.t = at("2026-05-01T08:00:00")
    _store, book = opened()
    policy = FollowupPolicy()
    items = [book.add_commitment("alice", f"承诺{i}") for i in range(5)]
    book.add_commitment("alice", "以后再说", due_hint_utc=at("2026-05-09T08:00:00"))
    now = at("2026-05-01T12:00:00")
    first = book.followup_candidates("alice", now, policy)
    assert len(first) == 3 and {c.id for c in first} <= {c.id for c in items}  # 3 an hour, none not due yet
    for c in first:
        assert book.record_followup("alice", c.id, now)
    assert book.followup_candidates("alice", now + 60, policy) == []
    # an hour later the window is free again and the cooldown (~50 min) has passed
    later = book.followup_candidates("alice", now + 3601, policy)
    assert len(later) == 3
    assert sorted(c.followups for c in book.commitments("alice")) == [0, 0, 0, 1, 1, 1]


def test_migrate_carries_reminders_and_commitments(memory_location, tmp_path, clock):
    clock.t = at("2026-05-01T08:00:00")
    source = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
    book = ReminderBook(source.reminder_tables(), clock=clock)
    r = book.add(
        "alice", "Europe/London", "2026-05-01T09:00", "FREQ=WEEKLY;BYDAY=MO,FR", "倒垃圾", "每周一五提醒我倒垃圾", "t3"
    )
    c = book.add_commitment("bob", "call the dentist", source_turn="t9")
    target = open_store(tmp_path / "copy.db", HashedNgramEmbedder(), clock=clock)
    try:
        report = migrate(source, target)
        assert report.reminders_copied == 2 and "2 reminders and commitments" in report.summary()
        copied = ReminderBook(target.reminder_tables(), clock=clock)
        assert copied.list("alice") == [r] and copied.commitments("bob") == [c]
        assert migrate(source, target).reminders_copied == 0  # idempotent
    finally:
        target.close()
        source.close()


def test_migrate_into_postgresql(tmp_path, postgres_url, clock):
    clock.t = at("2026-05-01T08:00:00")
    source = open_store(tmp_path / "m.db", HashedNgramEmbedder(), clock=clock)
    book = ReminderBook(source.reminder_tables(), clock=clock)
    r = book.add("alice", "Europe/London", "2026-05-01T09:00", "", "x")
    target = open_store(postgres_url, HashedNgramEmbedder(), clock=clock)
    try:
        assert migrate(source, target).reminders_copied == 1
        assert ReminderBook(target.reminder_tables(), clock=clock).list("alice") == [r]
    finally:
        target.close()
        source.close()


def test_cli_add_list_json_cancel(memory_location, capsys):
    assert cli_main(["reminders", "add", "--owner", "alice", "--db", memory_location, "--at", "2099-01-02T07:30",
                     "--tz", "Europe/London", "--rrule", "FREQ=DAILY", "喝水", "--json"]) == 0  # fmt: skip
    (added,) = json.loads(capsys.readouterr().out)
    assert cli_main(["reminders", "list", "--owner", "alice", "--db", memory_location, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {
            "id": added["id"],
            "text": "喝水",
            "due": "2099-01-02T07:30:00",
            "tz": "Europe/London",
            "repeat": "FREQ=DAILY",
            "status": "scheduled",
        }
    ]
    assert cli_main(["reminders", "list", "--owner", "bob", "--db", memory_location, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert cli_main(["reminders", "cancel", "--owner", "bob", "--db", memory_location, added["id"]]) == 1
    assert cli_main(["reminders", "cancel", "--owner", "alice", "--db", memory_location, added["id"]]) == 0
    capsys.readouterr()
    assert cli_main(["reminders", "list", "--owner", "alice", "--db", memory_location, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    bad = ["reminders", "add", "--owner", "alice", "--db", memory_location, "--at", "2099-01-02T07:30"]
    assert cli_main([*bad, "--tz", "Nowhere/Land", "x"]) == 2
    assert "unknown time zone" in capsys.readouterr().err


def test_cli_add_reads_a_request_in_words_and_refuses_to_guess(memory_location, capsys):
    base = ["reminders", "add", "--owner", "alice", "--db", memory_location, "--tz", "Asia/Shanghai", "--json"]
    assert cli_main([*base, "每天早上七点提醒我吃药"]) == 0
    (added,) = json.loads(capsys.readouterr().out)
    assert added["text"] == "吃药" and added["due"].endswith("T07:00:00") and "FREQ=DAILY" in added["repeat"]
    # no time of day, or no request at all: nothing is added, and the reason is said
    assert cli_main([*base, "remind me tomorrow to call mum"]) == 2
    assert "no time of day" in capsys.readouterr().err
    assert cli_main([*base, "不用提醒我了"]) == 2
    assert "not a reminder request" in capsys.readouterr().err
    assert cli_main(["reminders", "list", "--owner", "alice", "--db", memory_location, "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [added["id"]]


def test_a_0005_database_gains_the_reminder_tables_with_a_backup(tmp_path, clock):
    import sqlite3

    import sqlite_utils

    from fay_ros.memory import schema

    path = tmp_path / "m.db"
    conn = sqlite3.connect(path)
    schema.migrations.apply(sqlite_utils.Database(conn), stop_before="0006_reminders")
    conn.execute("INSERT INTO turns (owner, turn_id, time, speaker, text) VALUES ('alice', 't1', 1, 'user', '你好')")
    conn.commit()
    conn.close()
    clock.t = at("2026-05-01T08:00:00")
    store = open_store(path, HashedNgramEmbedder(), clock=clock)
    try:
        assert schema.schema_version(store.db)[-1] == "0006_reminders"
        book = ReminderBook(store.reminder_tables(), clock=clock)
        assert book.add("alice", "Europe/London", "2026-05-01T09:00", "", "x").status == "scheduled"
    finally:
        store.close()
    assert len(list(tmp_path.glob("m.db.before-0006_reminders-*"))) == 1


def test_wall_clock_edges_spring_gap_autumn_repeat_and_utc_until(opened, clock):
    # Europe/London: 01:00 GMT -> 02:00 BST on 29 March 2026; 02:00 BST -> 01:00 GMT on 25 October
    clock.t = at("2026-03-27T12:00:00")
    _store, book = opened()
    r = book.add("alice", "Europe/London", "2026-03-28T01:30", "FREQ=DAILY", "spring")
    utc = ZoneInfo("UTC")
    seen = []
    for _ in range(3):
        seen.append(datetime.fromtimestamp(r.next_due_utc, utc).strftime("%m-%d %H:%M"))
        clock.t = r.next_due_utc
        r = book.acknowledge("alice", r.id)
    # 01:30 does not exist on the 29th: said when the clock jumps over it (01:30 GMT = 02:30 BST)
    assert seen == ["03-28 01:30", "03-29 01:30", "03-30 00:30"]

    clock.t = at("2026-10-24T12:00:00")
    r = book.add("alice", "Europe/London", "2026-10-25T01:30", "FREQ=DAILY", "autumn")
    assert datetime.fromtimestamp(r.next_due_utc, utc).strftime("%m-%d %H:%M") == "10-25 00:30"  # the first 01:30
    clock.t = r.next_due_utc
    r = book.acknowledge("alice", r.id)  # 01:30 comes again an hour later: said once
    assert datetime.fromtimestamp(r.next_due_utc, utc).strftime("%m-%d %H:%M") == "10-26 01:30"

    clock.t = at("2026-05-01T08:00:00")
    r = book.add("alice", "Asia/Shanghai", "2026-05-02T07:30", "FREQ=DAILY;UNTIL=20260502T235959Z", "两次")
    clock.t = r.next_due_utc
    r = book.acknowledge("alice", r.id)
    assert r.due_local == "2026-05-03T07:30:00"  # UNTIL is 05-03 07:59:59 in Shanghai
    clock.t = r.next_due_utc
    assert book.acknowledge("alice", r.id).status == "done"


# ----------------------------------------------------------------------------- the service's dispatch
def desk_on(book):
    from fay_ros.memory.reminder_service import ReminderDesk

    return ReminderDesk(book, "Asia/Shanghai")


def test_the_service_dispatch_answers_every_action_and_refuses_in_words(opened, clock):
    from fay_ros.memory.reminder_service import ReminderRequest as R

    clock.t = at("2026-03-02T08:00:00", SHANGHAI)
    _store, book = opened()
    desk = desk_on(book)
    added = desk.handle(R("add", "alice", text="喝茶", start_local="2026-03-02T15:00:00"))
    assert added.success and added.reminders[0].tz == "Asia/Shanghai"  # the node's zone by default
    rid = added.reminders[0].id
    assert [r.id for r in desk.handle(R("list", "alice")).reminders] == [rid]
    assert desk.handle(R("list", "bob")).reminders == ()  # one owner never sees another's
    assert not desk.handle(R("cancel", "bob", rid)).success  # nor cancels them
    # refusals are answers in words, never exceptions
    guest = desk.handle(R("add", "", text="x", start_local="2026-03-02T15:00:00"))
    assert not guest.success and "guest" in guest.message
    past = desk.handle(R("add", "alice", text="x", start_local="2026-03-01T15:00:00"))
    assert not past.success and "past" in past.message
    unknown = desk.handle(R("fly", "alice"))
    assert not unknown.success and "unknown action" in unknown.message
    # change: a new time keeps the text; a new text keeps the time
    moved = desk.handle(R("change", "alice", rid, start_local="2026-03-02T16:30:00", repeat="-"))
    assert moved.success and moved.reminders[0].due_local == "2026-03-02T16:30:00"
    renamed = desk.handle(R("change", "alice", rid, text="喝绿茶", repeat="-"))
    assert renamed.reminders[0].text == "喝绿茶" and renamed.reminders[0].due_local == "2026-03-02T16:30:00"
    assert not desk.handle(R("change", "alice", rid, start_local="2026-03-01T10:00:00", repeat="-")).success
    # due, said (again later), acknowledged
    clock.t = at("2026-03-02T16:30:05", SHANGHAI)
    assert [r.id for r in desk.handle(R("due")).reminders] == [rid]
    said = desk.handle(R("said", "alice", rid))
    assert said.success and said.reminders[0].status == "due" and said.reminders[0].attempts == 1
    assert desk.handle(R("due")).reminders == ()  # not again before resay_after
    snoozed = desk.handle(R("snooze", "alice", rid, at=clock.t + 600))
    assert snoozed.reminders[0].next_due_utc == clock.t + 600
    assert desk.handle(R("acknowledge", "alice", rid)).reminders[0].status == "acknowledged"
    # commitments: commit, follow-ups under the limit, done, clear
    c1 = desk.handle(R("commit", "alice", text="给牙医打电话", at=0.0)).commitments[0]
    desk.handle(R("commit", "alice", text="写报告", at=clock.t + 3600))
    assert [c.id for c in desk.handle(R("followups", "alice")).commitments] == [c1.id]  # c2's time has not come
    assert desk.handle(R("followed_up", "alice", c1.id)).success
    assert desk.handle(R("followups", "alice")).commitments == ()  # cooldown
    assert desk.handle(R("commitment_done", "alice", c1.id)).success
    assert not desk.handle(R("commitment_done", "alice", c1.id)).success  # closed already
    assert desk.handle(R("clear", "alice")).message.startswith("1 ")  # c2 cancelled
    assert desk.handle(R("commitments", "alice")).commitments == ()
    assert {c.status for c in desk.handle(R("commitments", "alice", include_done=True)).commitments} == {
        "done",
        "cancelled",
    }


def test_overdue_answers_one_summary_and_consumes(opened, clock):
    from fay_ros.memory.reminder_service import ReminderRequest as R

    clock.t = at("2026-03-02T08:00:00", SHANGHAI)
    _store, book = opened()
    desk = desk_on(book)
    desk.handle(R("add", "alice", text="喝茶", start_local="2026-03-02T09:00:00"))
    desk.handle(R("add", "alice", text="吃药", start_local="2026-03-02T08:30:00", repeat="FREQ=HOURLY"))
    clock.t = at("2026-03-02T11:45:00", SHANGHAI)  # down since 08:00
    answer = desk.handle(R("overdue", "alice", at=at("2026-03-02T08:00:00", SHANGHAI)))
    assert answer.success and sorted(zip((r.text for r in answer.reminders), answer.times)) == [
        ("吃药", 4),  # 08:30, 09:30, 10:30, 11:30
        ("喝茶", 1),
    ]
    assert "2 reminders" in answer.summary
    assert desk.handle(R("due")).reminders == ()  # consumed: nothing fires one by one
    assert desk.handle(R("overdue", "alice")).reminders == ()  # said once
