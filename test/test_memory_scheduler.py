"""The memory node's background scheduling without ROS (`fay_ros.memory.scheduler`): which job
runs next, one waiting job per owner and kind (and no write lost to it), back-off after an LLM failure,
scheduled reflection and portraits (the jobs, and the timetable of daily times and the period),
portraits without an LLM. Real MemoryService on SQLite, a real LLM endpoint
(a loopback server, or a port nothing listens on), and the manual clock."""

from __future__ import annotations

import itertools
import json
from datetime import UTC

import pytest
from werkzeug import Response

from fay_ros.llm.client import ChatClient, Endpoint
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.scheduler import LLM_BACKOFF_SECONDS, PROFILE, REFLECT, BackgroundScheduler, Job
from fay_ros.memory.service import build_service

NOTHING_LISTENS = "http://127.0.0.1:9/v1"  # the discard port: connection refused at once


def make_service(tmp_path, clock, base_url="", threshold=12.0):
    llm = ChatClient(Endpoint(base_url, "fake", connect_timeout=2, first_token_timeout=2)) if base_url else None
    return build_service(
        tmp_path / "memory.db",
        embedder="hashed",
        clock=clock,
        llm=llm,
        reflection={"threshold": threshold},
        profile={"min_evidence": 2, "min_interval": 0.0},
    )


@pytest.fixture
def unreachable(tmp_path, clock):
    service = make_service(tmp_path, clock, NOTHING_LISTENS)
    yield service
    service.store.close()


_turns = itertools.count(1)


def write(service, owner, *contents, importance=5.0):
    """Confirmed memories, each from a turn of its own (distinct evidence for the portrait)."""
    for content in contents:
        out = service.remember(
            RememberRequest(
                owner=owner,
                content=content,
                importance=importance,
                user_confirmed=True,
                source_session="s",
                source_turn=next(_turns),
            )
        )
        assert out.success, out.message


def test_a_due_reflection_is_queued_once_per_owner(unreachable, clock):
    scheduler = BackgroundScheduler(unreachable, clock=clock)
    write(unreachable, "alice", "我不吃香菜")
    assert scheduler.after_write("alice") == []  # importance 5 of 12: not due yet
    write(unreachable, "alice", "我住在上海", "我喜欢爬山")
    assert scheduler.after_write("alice") == [Job(REFLECT, "alice")]
    assert scheduler.after_write("alice") == []  # already waiting for the worker
    write(unreachable, "bob", "I live in Leeds", "I like tea", "I walk to work")
    assert scheduler.after_write("bob") == [Job(REFLECT, "bob")]  # another owner is not held back


def test_an_llm_failure_backs_off_that_owners_llm_jobs_for_a_minute(unreachable, clock):
    scheduler = BackgroundScheduler(unreachable, clock=clock)
    write(unreachable, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    write(unreachable, "bob", "I live in Leeds", "I like tea", "I walk to work")
    [job] = scheduler.after_write("alice")

    report = scheduler.run(job)

    assert report.level == "warning"
    assert report.message.startswith(f"reflect for owner='alice' skipped: unreachable: cannot reach {NOTHING_LISTENS}")
    assert unreachable.reflection_due("alice") and unreachable.store.count("alice") == 3  # nothing lost
    assert scheduler.after_write("alice") == []
    assert scheduler.profile_requested("alice") == []  # every LLM job of that owner waits
    assert scheduler.after_write("bob") == [Job(REFLECT, "bob")]
    clock.t += LLM_BACKOFF_SECONDS - 0.5
    assert scheduler.after_write("alice") == []
    clock.t += 0.5
    assert scheduler.after_write("alice") == [Job(REFLECT, "alice")]


def test_a_failure_that_is_not_the_llms_is_reported_without_back_off(unreachable, clock):
    scheduler = BackgroundScheduler(unreachable, clock=clock)
    report = scheduler.run(Job("summarise", "alice"))
    assert (report.level, report.message) == ("error", "unknown job 'summarise' for owner='alice'")
    write(unreachable, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    assert scheduler.after_write("alice") == [Job(REFLECT, "alice")]


def chat_completion(answer: dict) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)},
            }
        ],
    }


def test_after_a_reflection_the_next_runs_when_new_importance_gathers(tmp_path, clock, httpserver):
    answer = {"insights": [{"insight": "她住在上海，喜欢户外", "sources": [2, 3]}]}
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(chat_completion(answer))
    service = make_service(tmp_path, clock, httpserver.url_for("/v1"))
    scheduler = BackgroundScheduler(service, clock=clock)
    write(service, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    [job] = scheduler.after_write("alice")

    report = scheduler.run(job)

    assert (report.level, report.message) == ("info", "reflection for owner='alice': 1 insights stored")
    assert scheduler.after_write("alice") == []  # the reflected memories no longer count
    clock.t += 1.0
    write(service, "alice", "我周三加班", "我养了一只猫", "我在学日语")
    assert scheduler.after_write("alice") == [Job(REFLECT, "alice")]  # the finished job left the queue
    service.store.close()


def test_a_scheduled_reflection_queues_every_owner_with_enough_new_memories(tmp_path, clock):
    service = make_service(tmp_path, clock, NOTHING_LISTENS, threshold=1000.0)
    scheduler = BackgroundScheduler(service, clock=clock)
    write(service, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    write(service, "carol", "I like jazz")
    assert scheduler.after_write("alice") == []  # far below the threshold
    assert scheduler.scheduled(REFLECT) == [Job(REFLECT, "alice")]  # carol has one memory: too few to reflect on
    assert scheduler.scheduled(REFLECT) == []  # alice's job still waits for the worker
    scheduler.run(Job(REFLECT, "alice"))  # the LLM is unreachable: back-off
    assert scheduler.scheduled(REFLECT) == []
    clock.t += LLM_BACKOFF_SECONDS
    assert scheduler.scheduled(REFLECT) == [Job(REFLECT, "alice")]
    service.store.close()


def test_no_scheduled_reflection_without_an_llm(tmp_path, clock):
    service = make_service(tmp_path, clock)
    write(service, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    assert BackgroundScheduler(service, clock=clock).scheduled(REFLECT) == []
    service.store.close()


def test_a_scheduled_portrait_queues_the_owners_whose_portrait_is_due(tmp_path, clock):
    service = make_service(tmp_path, clock)  # no LLM: the plain portrait, on the worker
    scheduler = BackgroundScheduler(service, clock=clock)
    write(service, "alice", "我不吃香菜", "我是老师")
    write(service, "bob", "I like tea")  # one turn of evidence: not due
    assert scheduler.scheduled(PROFILE) == [Job(PROFILE, "alice")]
    assert scheduler.run(Job(PROFILE, "alice")).level == "info"
    assert "我是老师" in service.profile("alice")[1].portrait
    assert scheduler.scheduled(PROFILE) == []  # nothing new since
    service.store.close()


def test_the_timetable_runs_daily_jobs_and_the_period_on_the_given_clock():
    from datetime import datetime

    from fay_ros.memory.scheduler import PORTRAIT_AT, REFLECTION_AT, REFLECTION_PERIOD, SCHEDULED_KINDS, MemoryTimetable
    from fay_ros.schedule.config import MemorySchedule

    def at(*parts):
        return datetime(*parts, tzinfo=UTC).timestamp()

    timetable = MemoryTimetable(
        MemorySchedule(portrait_at="11:30", reflection_at="23:00"), UTC, reflection_period=3600.0
    )
    assert timetable.due(at(2026, 1, 1, 11, 0)) == []  # start-up
    assert [f.name for f in timetable.due(at(2026, 1, 1, 11, 30))] == [PORTRAIT_AT]
    assert [f.name for f in timetable.due(at(2026, 1, 1, 12, 0))] == [REFLECTION_PERIOD]
    assert [f.name for f in timetable.due(at(2026, 1, 1, 23, 0))] == [REFLECTION_AT, REFLECTION_PERIOD]
    assert {SCHEDULED_KINDS[n] for n in (REFLECTION_AT, REFLECTION_PERIOD)} == {REFLECT}
    timetable.set_schedule(MemorySchedule(portrait_at="", reflection_at="22:00"), UTC)
    assert timetable.next_due() == {REFLECTION_AT: at(2026, 1, 2, 22, 0), REFLECTION_PERIOD: at(2026, 1, 2, 0, 0)}


def test_without_an_llm_a_due_portrait_is_rebuilt_at_once(tmp_path, clock):
    service = make_service(tmp_path, clock)
    scheduler = BackgroundScheduler(service, clock=clock)
    write(service, "alice", "我不吃香菜")
    assert scheduler.profile_requested("alice") == []
    assert service.profile("alice")[1].portrait == ""  # one turn of evidence: not due
    write(service, "alice", "我是老师")
    assert scheduler.profile_requested("alice") == []  # nothing for the worker...
    assert "我是老师" in service.profile("alice")[1].portrait  # ...because it is done
    service.store.close()


def test_with_an_llm_a_due_portrait_goes_to_the_worker_once(unreachable, clock):
    scheduler = BackgroundScheduler(unreachable, clock=clock)
    write(unreachable, "alice", "我不吃香菜", "我是老师")
    assert scheduler.profile_requested("alice") == [Job(PROFILE, "alice")]
    assert scheduler.profile_requested("alice") == []
    assert unreachable.profile("alice")[1].portrait == ""  # the answer never waits for the LLM


def test_a_write_while_the_job_runs_is_asked_again_when_it_ends(tmp_path, clock, httpserver):
    """The running reflection read the owner's memories before these writes; they must not be
    lost to the one-job-per-owner rule."""
    answer = {"insights": [{"insight": "她喜欢上海的生活", "sources": [1, 2, 3]}]}
    service = make_service(tmp_path, clock, httpserver.url_for("/v1"))
    scheduler = BackgroundScheduler(service, clock=clock)
    asked_during_the_run = []

    def llm_answers_while_the_user_goes_on(request):
        clock.t += 1.0
        write(service, "alice", "我周三加班", "我养了一只猫", "我在学日语")
        asked_during_the_run.append(scheduler.after_write("alice"))
        return Response(json.dumps(chat_completion(answer)), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
        llm_answers_while_the_user_goes_on
    )
    write(service, "alice", "我不吃香菜", "我住在上海", "我喜欢爬山")
    [job] = scheduler.after_write("alice")

    report = scheduler.run(job)

    assert asked_during_the_run == [[]]  # one job per owner at a time...
    assert report.message == "reflection for owner='alice': 1 insights stored"
    assert report.follow_up == (Job(REFLECT, "alice"),)  # ...and the new memories get theirs next
    assert scheduler.after_write("alice") == []  # the follow-up waits for the worker
    service.store.close()
