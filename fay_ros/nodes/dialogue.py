"""dialogue: Fay's judge → tools → reply flow (fay_ros.dialogue.engine) as a ROS node.

In:  speech/final, text_input (chat turns), observation (record, no reply) — all
     fay_msgs/Transcript; interrupt (std_msgs/Empty); reply with source "say" (what the tts
     node spoke verbatim: recorded as the companion's words in that user's history);
     action_cue (collected for the chat action's result); robot_speaking (fay_msgs/SpeechState:
     a spoken input's answer has reached the user once the voice begins it; until then the
     user's next words join that turn's, as when it had said nothing).
Out: reply (fay_msgs/Utterance), one message per sentence as soon as it exists; reply/cancel
     (std_msgs/String, a conversation id) when a chat goal is cancelled: that turn and its
     voice stop, other users' turns go on.
Action: chat (fay_msgs/action/Chat): one chat turn held by a robot program, answered like a
     text_input message; feedback per sentence, result the whole reply and its cues.
Uses: memory/recall, memory/remember, memory/forget, memory/active_rules when they run
(call_async with a timeout; without them the dialogue works without memory), and
memory/reminders: reminders and commitments set, listed, cancelled or snoozed in words
(dialogue.reminder_talk), said when due and followed up at the proactive tick
(dialogue.reminder_runner; events on dialogue/proactive).
Knowledge: the user's documents (knowledge_db, dialogue.knowledge_talk) answer questions about
the place, and the node serves them to robot programs as knowledge/search (KnowledgeSearch.srv).
Several people (people_file, dialogue.people and dialogue.room): each spoken utterance is
decided first (direct / chime_in / ignore, with its reason, on dialogue/decision; answered ones
on dialogue/addressed), and each speaker's tools are those of their role, enforced when the
tool list is built and when a call runs (fay_ros.ros_side.room_gate).
Files: the persona, qa.csv and the people file are re-read when they change (checked every second on the steady
clock; the admin page's editor saves them): the next turn uses them. A bad edit is refused
with file and line (`fay/dialogue: files` on /diagnostics, and the log); the last good one
stays in use.

The engine runs on its own asyncio loop thread; ROS callbacks only hand work to it, so an
LLM stream never blocks the executor, and an interrupt is handled while a stream runs. The
chat action's execute callback is a coroutine that awaits the turn held on the engine's loop
(`_on_engine`), so no executor thread waits for a turn either.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from diagnostic_msgs.msg import DiagnosticStatus
from pydantic import Field, field_validator
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.task import Future as RosFuture
from std_msgs.msg import Empty, String

from fay_msgs.action import Chat
from fay_msgs.msg import ActionCue, LlmLatency, SpeechState, Transcript, Utterance

from ..agent.mcp_config import McpConfigError
from ..agent.tool_config import ToolsFileError, load_tools_file
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher, event_status, health
from ..common.ids import conversation_of
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.paths import config_file
from ..common.reloading import ReloadingTable
from ..common.rostime import node_seconds, to_time_msg
from ..dialogue.chat_turn import CANCELLED, FAILED, ChatTurn, Outcome
from ..dialogue.engine import CHAT, OBSERVATION, SAY_SOURCE, DialogueEngine
from ..dialogue.knowledge_talk import KnowledgeDesk
from ..dialogue.people import People, PeopleFileError
from ..dialogue.persona import Persona, PersonaError
from ..dialogue.qa import QaTable, QaTableError
from ..dialogue.reminder_runner import ReminderRunner
from ..dialogue.reminder_talk import ReminderTalk
from ..dialogue.reply import ReplyPiece
from ..dialogue.room import Room
from ..dialogue.settings import EngineConfig, engine_settings
from ..dialogue.speculation import SpeculativeClient
from ..dialogue.style import StyleError, StyleTable
from ..dialogue.tasks import TaskProgress
from ..dialogue.toolbox import builtin_tools
from ..llm.client import ApiKeyError, ChatClient, Endpoint
from ..llm.embedded import EMBEDDED_BASE_URL, EMBEDDED_MODEL
from ..llm.profiles import TINY
from ..ros_side.knowledge import knowledge_desk, serve_knowledge
from ..ros_side.memory_gateway import RosMemoryGateway
from ..ros_side.proactive_talk import ProactiveTalk
from ..ros_side.reminders import RosReminders
from ..ros_side.room_gate import RoomGate
from ..ros_side.ros_tools import RosTools
from ..schedule.config import zone_name
from ..schedule.proactive import Decision


class DialogueConfig(EngineConfig):
    """The node's parameters: the engine's own (`EngineConfig`, written once there) and the
    endpoints, files and wiring that only the node has."""

    base_url: str = Field(
        EMBEDDED_BASE_URL,
        description="OpenAI-compatible endpoint of the (small) chat model; "
        "default: the embedded offline model served by `fay-ros llm`",
    )
    model: str = Field(EMBEDDED_MODEL, description="model name at base_url")
    api_key_env: str = Field(
        "",
        description="name of the environment variable holding the API key "
        "('' = no key, e.g. the embedded model); the key itself is never a parameter",
    )
    big_base_url: str = Field("", description="endpoint of the big model for the tool loop ('' = base_url)")
    big_model: str = Field("", description="big model for the tool loop; '' = single-model mode")
    big_api_key_env: str = Field("", description="environment variable with the big model's key ('' = api_key_env)")
    persona_file: str = Field("", description="persona YAML ('' = config/persona.yaml)")
    qa_file: str = Field(
        "", description="qa.csv (问题,答案,脚本) answered before the LLM ('' = config/qa.csv, 'none' = no table)"
    )
    voice_examples_file: str = Field(
        "",
        description="voice examples by scene and relation (YAML; issue 39) put in the system prompt "
        "('' = config/voice_examples.yaml, 'none' = no examples)",
    )
    qa_threshold: float = Field(0.9, gt=0.0, le=1.0, description="fuzzy-match score needed for a qa.csv hit")
    tools_file: str = Field(
        "",
        description="every tool the agent may use, in one YAML: the built-in tools, MCP "
        "servers (their allow-listed tools become mcp_<server>_<tool>, offered once listed) and "
        "the ROS 2 allow-list (ros_call_*, ros_action_*, ros_read_*, ros_publish_*) ('' = "
        "config/tools.yaml: the built-in tools; see config/tools.example.yaml)",
    )
    people_file: str = Field(
        "",
        description="who is who, each role's tools and when to speak to spoken input with several people "
        "present ('' = config/people.yaml; 'none' = every speaker may use every tool and every utterance is "
        "answered); see docs/several_people.md",
    )
    connect_timeout: float = Field(3.0, gt=0.0, description="seconds to connect to the LLM endpoint")
    first_token_timeout: float = Field(20.0, gt=0.0, description="seconds until the first streamed chunk")
    idle_timeout: float = Field(10.0, gt=0.0, description="seconds allowed between two streamed chunks")
    memory: bool = Field(True, description="use the memory/* services when they are running")
    speculative_reply: bool = Field(
        True,
        description="start the model on speech/speculative (the recogniser's "
        "early text of a turn it judges complete) and use that answer when the final "
        "says the same; a guess the user talked on after is discarded unsaid",
    )
    schedule_file: str = Field(
        "",
        description="the schedule (YAML) whose proactive: section says when the "
        "companion speaks first: daily times, intervals, cron, a topic message, silence after "
        "a turn ('' = config/schedule.yaml, where no trigger is set: proactive talk is opt-in; "
        "every option: config/schedule.example.yaml). Re-read when it changes.",
    )
    chat_cue_grace: float = Field(
        0.5,
        ge=0.0,
        le=10.0,
        description="seconds the chat action waits after the "
        "turn's last sentence for action_semantics' cues of its sentences (then it "
        "returns the cues that came; none without action_semantics)",
    )

    knowledge_db: str = Field(
        "",
        description="the knowledge base of the user's documents (`fay-ros knowledge add`): a file, "
        "sqlite:///PATH or postgresql://... ('' = the default file $XDG_DATA_HOME/fay_ros/knowledge.db "
        "when it exists, else no documents; 'none' = no documents). Also serves knowledge/search.",
    )
    knowledge_bases: str = Field(
        "", description="knowledge bases the conversation searches, comma-separated ('' = every one in knowledge_db)"
    )
    knowledge_embedder: Literal["auto", "use", "hashed"] = Field(
        "auto", description="embedding model the knowledge base was indexed with (`fay-ros knowledge add --embedder`)"
    )
    knowledge_prestart: bool = Field(
        True,
        description="capable profile: the best passages and their sources go into the prompt before the "
        "one model call (Fay's prestart route); the tiny profile always answers from the documents",
    )
    knowledge_k: int = Field(3, ge=1, le=20, description="passages per question (prompt, tool, service default)")
    knowledge_threshold: float = Field(
        0.3, ge=0.0, le=1.0, description="fused score (0..1) a passage needs to count as found; below it: I don't know"
    )

    @field_validator("knowledge_bases")
    @classmethod
    def _kb_names(cls, value: str) -> str:
        names = [v.strip() for v in value.split(",")] if value.strip() else []
        if any(not n for n in names):
            raise ValueError(f"an empty knowledge base name in {value!r} (names separated by commas)")
        return ",".join(names)

    @field_validator("base_url", "big_base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")


# Applied from the next turn on (the engine reads its settings per turn); the endpoints, keys,
# files and the memory wiring are taken at start-up and are read-only.
LIVE_PARAMETERS = frozenset(
    {
        "model_profile",
        "judge",
        "judge_format",
        "native_tools",
        "max_tool_steps",
        "tool_timeout",
        "max_tokens",
        "temperature",
        "frequency_penalty",
        "default_language",
        "sentence_min_chars",
        "background_tasks",
        "route_timeout",
        "route_min_confidence",
        "new_task",
        "fact_check",
        "chat_cue_grace",
        "speculative_reply",
    }
)
RELOAD_SECONDS = 1.0  # steady-clock period of the persona / qa.csv file check
# Live parameters that are not engine settings of the same name.
_NODE_ONLY = frozenset({"model_profile", "chat_cue_grace", "speculative_reply"})


def _config_file(value: str, default_name: str) -> Path:
    return Path(value).expanduser() if value else config_file(default_name)


MEMORY_STATUS = "memory"


def _memory_health(memory: RosMemoryGateway) -> tuple[str, str, dict[str, str]]:
    missing = memory.undiscovered()
    if not missing:
        return "ok", "memory reachable", {}
    return "warning", "memory not reachable (yet): " + ", ".join(missing), {"missing": ", ".join(missing)}


class _RosLogHandler(logging.Handler):
    """Forward the engine's Python log records to the node's ROS logger."""

    def __init__(self, logger: Any) -> None:
        super().__init__()
        self._logger = logger

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        if record.levelno >= logging.ERROR:
            self._logger.error(text)
        elif record.levelno >= logging.WARNING:
            self._logger.warning(text)
        elif record.levelno >= logging.INFO:
            self._logger.info(text)
        else:
            self._logger.debug(text)


class DialogueNode(Node):
    def __init__(self) -> None:
        super().__init__("dialogue", namespace=topics.DEFAULT_NAMESPACE)
        self.config = c = declare_config(self, DialogueConfig, live=LIVE_PARAMETERS, apply=self._apply_config)
        try:
            self._persona_file = ReloadingTable(_config_file(c.persona_file, "persona.yaml"), Persona.load)
            threshold = c.qa_threshold
            self._qa_file = (
                None
                if c.qa_file.lower() == "none"
                else ReloadingTable(_config_file(c.qa_file, "qa.csv"), lambda path: QaTable.load(path, threshold))
            )
            self._people_file = (
                None
                if c.people_file.lower() == "none"
                else ReloadingTable(_config_file(c.people_file, "people.yaml"), People.load)
            )
            self._style_file = (
                None
                if c.voice_examples_file.lower() == "none"
                else ReloadingTable(_config_file(c.voice_examples_file, "voice_examples.yaml"), StyleTable.load)
            )
        except (PersonaError, QaTableError, PeopleFileError, StyleError) as exc:
            raise ConfigError(str(exc)) from None
        persona = self._persona_file.table
        qa = self._qa_file.table if self._qa_file else None
        try:
            tools = load_tools_file(_config_file(c.tools_file, "tools.yaml"))
        except ToolsFileError as exc:
            raise ConfigError(f"parameter 'tools_file': {exc}") from None
        registry = builtin_tools()
        unknown = [t for t in [*tools.builtin, *c.qa_script_tools] if registry.get(t) is None]
        if unknown:
            raise ConfigError(
                f"parameter 'tools_file' (builtin) / 'qa_script_tools': unknown built-in tool(s) "
                f"{unknown}; available: {registry.names()}"
            )
        ros_tools = RosTools(self, tools.ros, source="tools_file") if tools.ros.entries() else None
        for tool in ros_tools.tools if ros_tools else []:
            try:
                registry.add(tool)
            except ValueError as exc:
                raise ConfigError(f"parameter 'tools_file': {exc}") from None
        self._mcp = self._mcp_client(tools.mcp, registry)

        def endpoint(base_url: str, model: str, key_param: str) -> Endpoint:
            try:
                return Endpoint.from_env(
                    base_url,
                    model,
                    getattr(c, key_param),
                    connect_timeout=c.connect_timeout,
                    first_token_timeout=c.first_token_timeout,
                    idle_timeout=c.idle_timeout,
                )
            except ApiKeyError as exc:  # the named key variable is not set
                raise ConfigError(f"parameter '{key_param}': {exc}") from None

        small = endpoint(c.base_url, c.model, "api_key_env")
        big = None
        if c.big_model:
            big = endpoint(
                c.big_base_url or c.base_url, c.big_model, "big_api_key_env" if c.big_api_key_env else "api_key_env"
            )
        settings = engine_settings(
            c,
            base_url=c.base_url,
            model=c.model,
            # the tools file is the choice: every tool it lists is offered (MCP tools once listed)
            llm_tools=(*tools.builtin, *(t.name for t in (ros_tools.tools if ros_tools else []))),
        )
        profile = settings.profile

        if self._mcp is not None and settings.llm_tools is not None:
            settings.llm_tools = (*settings.llm_tools, *self._mcp.tool_names())

        self._log_handler = _RosLogHandler(self.get_logger())
        engine_log = logging.getLogger("fay_ros.dialogue")
        engine_log.addHandler(self._log_handler)
        engine_log.setLevel(logging.INFO)
        engine_log.propagate = False

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dialogue-engine", daemon=True)
        self._thread.start()
        memory = RosMemoryGateway(self, self._loop, c.memory_timeout) if c.memory else None
        self.publisher = self.create_publisher(Utterance, topics.REPLY, qos.EVENTS)
        # The LLM's time to first token per reply, for latency_monitor's per-stage latency.
        self.llm_latency = self.create_publisher(LlmLatency, topics.LLM_LATENCY, qos.EVENTS)
        # Background task progress: DiagnosticStatus (typed level + key/values, already used on
        # /diagnostics, shown by rqt and passed by rosbridge) instead of a new fay_msgs type.
        self.task_progress = self.create_publisher(DiagnosticStatus, topics.TASK_PROGRESS, qos.EVENTS)

        def build() -> DialogueEngine:
            return DialogueEngine(
                persona,
                SpeculativeClient(small),
                self._publish,
                big=ChatClient(big) if big else None,
                qa=qa,
                tools=registry,
                memory=memory,
                settings=settings,
                progress=self._publish_progress,
            )

        try:
            self.engine = asyncio.run_coroutine_threadsafe(_call(build), self._loop).result(10)
        except ValueError as exc:  # e.g. a persona prestart naming an unknown tool
            self.close()
            raise ConfigError(str(exc)) from None
        # Several people (issue 39): tools by role, and the first layer for spoken input.
        self.room_gate: RoomGate | None = None
        if self._people_file is not None:
            people = self._people_file.table
            self._warn_unknown_tools(people)
            self.engine.people = people
            room = Room(people.speaking, (persona.name,))
            people_file = self._people_file
            self.room_gate = RoomGate(self, self._loop, room, lambda: people_file.table, self._start_spoken)
        self.engine.style = self._style_file.table if self._style_file else None
        # Reminders and commitments (issue 36): kept by the memory node (memory/reminders), said
        # in words through reminder_talk, said when due by the runner at the proactive tick.
        self.reminders = RosReminders(self) if c.memory else None
        self.reminder_runner: ReminderRunner | None = None
        try:
            self.proactive = ProactiveTalk(
                self, c.schedule_file, self._speak_first, self._reminder_tick if self.reminders else None
            )
        except ConfigError:
            self.close()
            raise
        if self.reminders is not None:
            talk = ReminderTalk(
                self.reminders, zone_name(self.proactive.planner.schedule.timezone), lambda: node_seconds(self)
            )
            talk.names = lambda: (self.engine.persona.name,)  # (the persona file may be edited live)
            self.engine.reminder_talk = talk
            self.reminder_runner = ReminderRunner(
                self.reminders, talk, self._say_reminder, busy=self.engine.turn_running
            )
        # The knowledge base (issue 41): the conversation's documents and knowledge/search.
        try:
            self.knowledge = knowledge_desk(self, c)
        except ConfigError:
            self.close()
            raise
        if self.knowledge is not None:
            desk = self.knowledge
            asyncio.run_coroutine_threadsafe(_call(lambda: setattr(self.engine, "knowledge", desk)), self._loop).result(
                5
            )
            asyncio.run_coroutine_threadsafe(self._open_knowledge(desk), self._loop)
        self._knowledge_service = serve_knowledge(
            self,
            self._on_engine,
            self.knowledge.search if self.knowledge is not None else None,
            "no knowledge base here: the dialogue's knowledge_db is 'none' or the file does not exist "
            "(add documents with `fay-ros knowledge add`)",
        )
        # The words of each chat goal, for those that record what users said (memory).
        self.chat_heard = self.create_publisher(Transcript, topics.CHAT_HEARD, qos.EVENTS)

        group = ReentrantCallbackGroup()
        for topic, kind in ((topics.SPEECH_FINAL, CHAT), (topics.TEXT_INPUT, CHAT), (topics.OBSERVATION, OBSERVATION)):
            spoken = topic == topics.SPEECH_FINAL
            self.create_subscription(
                Transcript, topic, self._text_callback(kind, spoken), qos.EVENTS, callback_group=group
            )
        # What the voice says (a spoken input's answer counts once it is heard; proactive talk
        # waits while it speaks)
        self.create_subscription(
            SpeechState, topics.ROBOT_SPEAKING, self._on_robot_speaking, qos.LATCHED, callback_group=group
        )
        self.create_subscription(
            Transcript, topics.SPEECH_SPECULATIVE, self._on_speculative, qos.EVENTS, callback_group=group
        )
        self.create_subscription(Empty, topics.INTERRUPT, self._on_interrupt, qos.EVENTS, callback_group=group)
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS, callback_group=group)

        # The chat action: goals by goal id (executor threads: execute, cancel); the turns being
        # held by conversation id (engine loop only: pieces, cues).
        self._chat_goals: dict[bytes, ChatTurn] = {}
        self._held: dict[str, ChatTurn] = {}
        # A cancelled goal's voice stops alone (reply/cancel, its conversation id): `interrupt`
        # would stop every user's turn and whatever the robot is saying.
        self.reply_cancel = self.create_publisher(String, topics.REPLY_CANCEL, qos.EVENTS)
        self.create_subscription(ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS, callback_group=group)
        self._chat_server = ActionServer(
            self,
            Chat,
            topics.ACTION_CHAT,
            execute_callback=self._execute_chat,
            goal_callback=self._accept_chat,
            cancel_callback=self._cancel_chat,
            callback_group=group,
            feedback_pub_qos_profile=qos.ACTION_REQUESTS,
            **qos.ACTION_QOS,
        )
        mode = f"dual-model (tool loop: {big.model} at {big.where})" if big else "single-model"
        flow = (
            "tiny profile (one call, no judge)"
            if profile == TINY
            else f"capable profile, judge {'on' if c.judge else 'off'}"
        )
        self.get_logger().info(
            f"dialogue ready: {c.model} at {small.where}, {flow}, {mode}, "
            f"qa {len(qa.entries) if qa else 0} rows, memory {'on' if c.memory else 'off'}"
        )
        if self._mcp is not None:  # list the MCP servers' tools in the background, on the engine's loop
            # each outcome on /diagnostics too: when a server's tools are offered, and why not
            mcp_status = StatusPublisher(self, "mcp")

            def listed(server: str, ok: bool, message: str) -> None:
                mcp_status.publish("info" if ok else "warning", message, server=server)

            mcp = self._mcp
            asyncio.run_coroutine_threadsafe(_call(lambda: mcp.start(listed)), self._loop)
        # make the model clients now, and prime the model server's prompt cache (tiny profile)
        asyncio.run_coroutine_threadsafe(self.engine.warm_up(), self._loop)
        self._files_status = StatusPublisher(self, "files")
        if memory is not None:
            # whether this node can call memory now: until it can, a turn answers without the
            # user's facts (a question about them is told memory is out of reach)
            health(self).add(MEMORY_STATUS, functools.partial(_memory_health, memory))
        self.create_timer(RELOAD_SECONDS, self._reload_files, clock=Clock(clock_type=ClockType.STEADY_TIME))

    async def _open_knowledge(self, desk: KnowledgeDesk) -> None:
        """Open the store (and load its embedder) now, so the first question does not wait."""
        try:
            await desk.open()
        except Exception as exc:  # noqa: BLE001 - said once here; each search says it again
            self.get_logger().error(f"knowledge base {self.config.knowledge_db or 'default'}: {exc}")

    def _reload_files(self) -> None:
        """Hand an edited persona, qa.csv, people file or voice examples file to the engine (on
        its loop); refuse a bad edit."""
        engine = self.engine

        def set_style(style: StyleTable) -> None:
            engine.style = style

        tables: list[tuple[Any, Callable[[Any], None]]] = [
            (self._persona_file, engine.set_persona),
            (self._qa_file, engine.set_qa),
            (self._people_file, self._use_people),
            (self._style_file, set_style),
        ]
        for table, use in tables:
            if table is None:
                continue
            result = table.poll()
            if result.error:
                self.get_logger().error(result.message)
                self._files_status.publish("error", result.message, file=str(table.path))
                continue
            if not result.changed:
                continue
            try:
                asyncio.run_coroutine_threadsafe(_call(functools.partial(use, result.table)), self._loop).result(5)
            except ValueError as exc:  # e.g. a prestart naming an unknown tool
                message = f"{table.path}: NOT reloaded, keeping the last good one:\n{exc}"
                self.get_logger().error(message)
                self._files_status.publish("error", message, file=str(table.path))
                continue
            message = f"{table.path}: reloaded, used from the next turn"
            self.get_logger().info(message)
            self._files_status.publish("info", message, file=str(table.path))
            if table is self._persona_file:  # the tiny profile's cached prompt prefix changed
                asyncio.run_coroutine_threadsafe(engine.warm_up(), self._loop)
                if self.room_gate is not None and self._people_file is not None:  # the companion's name
                    people_file = self._people_file
                    self._loop.call_soon_threadsafe(self._use_people, people_file.table)

    def _use_people(self, people: People) -> None:
        """On the engine's loop: an edited people file, used from the next utterance and turn."""
        self.engine.people = people
        if self.room_gate is not None:
            self.room_gate.room.configure(people.speaking, (self.engine.persona.name,))
        self._warn_unknown_tools(people)

    @staticmethod
    def _mcp_client(servers: Any, registry: Any) -> Any:
        """The MCP client of the tools file's servers (None without any), its tools registered by
        name (a prestart may use one). The SDK is imported only when there are servers (~1 s)."""
        if not servers.servers:
            return None
        from ..agent.mcp_client import McpClient

        try:
            client = McpClient(servers)
            missing = client.missing_environment()
            if missing:
                raise ConfigError(f"environment variable(s) named in the file are not set: {missing}")
            for tool in client.tools():
                registry.add(tool)
        except (McpConfigError, ConfigError, ValueError) as exc:
            raise ConfigError(f"parameter 'tools_file' (mcp): {exc}") from None
        return client

    def _on_speculative(self, msg: Transcript) -> None:
        """The recogniser's early text of a turn it judges complete ("" = withdrawn: the user
        went on). The model starts on it; the final decides whether its answer is used."""
        if not self.config.speculative_reply:
            return
        if self.room_gate is not None:
            self.room_gate.speculate(msg, self.engine.speculate)
        else:
            self._loop.call_soon_threadsafe(self.engine.speculate, msg.user_id, msg.text, msg.language)

    def _text_callback(self, kind: str, spoken: bool) -> Callable[[Transcript], None]:
        return lambda msg: self._on_text(msg, kind, spoken)

    def _on_text(self, msg: Transcript, kind: str, spoken: bool = False) -> None:
        if kind == CHAT and not msg.text.strip():
            return
        if kind == CHAT:
            self.proactive.heard(msg.user_id)
        if kind == CHAT and spoken and self.room_gate is not None:
            self.room_gate.heard(msg)  # answered or not: the room decides (on the engine's loop)
            return
        self._loop.call_soon_threadsafe(
            functools.partial(self.engine.submit, msg.user_id, msg.text, msg.language, kind, spoken=spoken)
        )

    def _on_robot_speaking(self, msg: SpeechState) -> None:
        self.proactive.robot_speaking(bool(msg.speaking))
        conversation = conversation_of(msg.utterance_id) if msg.speaking else ""

        def tell() -> None:
            self.engine.voice = True
            if conversation:
                self.engine.heard(conversation)

        self._loop.call_soon_threadsafe(tell)

    def _on_interrupt(self, _msg: Empty) -> None:
        def interrupt() -> None:
            n = self.engine.interrupt()
            self.get_logger().info(f"interrupt: cancelled {n} running turn(s)")

        self._loop.call_soon_threadsafe(interrupt)

    def _start_spoken(self, msg: Transcript) -> str:
        """On the engine's loop: the turn of a spoken utterance the room answers; its reply's
        conversation id."""
        turn = self.engine.start(msg.user_id, msg.text, msg.language, CHAT, spoken=True)
        return turn.conversation_id if turn is not None else ""

    def _warn_unknown_tools(self, people: People) -> None:
        """A role naming a tool that is not registered gets nothing for it (it may come later,
        e.g. the knowledge tool): said once per load, with the file."""
        known = set(self.engine.tools.names())
        for role, names in people.named_tools().items():
            unknown = [n for n in names if n not in known]
            if unknown:
                self.get_logger().warning(
                    f"{people.path}: tools.{role}: {unknown} are not configured tools; registered: {sorted(known)}"
                )

    def _on_reply(self, msg: Utterance) -> None:
        if msg.source == SAY_SOURCE:  # the tts node spoke it verbatim: the companion's words
            self._loop.call_soon_threadsafe(
                self.engine.record_said, msg.user_id, msg.conversation_id, msg.text, msg.is_end
            )

    # -- the chat action ------------------------------------------------------------------
    def _accept_chat(self, goal: Chat.Goal) -> GoalResponse:
        if not goal.text.strip():
            self.get_logger().warning("chat goal rejected: its text is empty")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _cancel_chat(self, goal_handle: Any) -> CancelResponse:
        held = self._chat_goals.get(bytes(goal_handle.goal_id.uuid))
        if held is None:
            return CancelResponse.REJECT

        def cancel() -> None:  # on the engine's loop, where the held turn's fields are set
            held.cancel_requested = True  # before the turn ends: its reason is "cancelled"
            if held.task is None:  # not started yet: _hold_chat starts nothing
                self.get_logger().info("chat goal cancelled before its turn started")
                return
            stopped = self.engine.cancel(held.task)
            # its sentences may still be queued or playing in the tts even when the turn ended
            self.reply_cancel.publish(String(data=held.conversation_id))
            self.get_logger().info(
                f"chat goal cancelled: {held.conversation_id} "
                + ("cancelled, its voice stopped" if stopped else "had ended, its voice stopped")
            )

        self._loop.call_soon_threadsafe(cancel)
        return CancelResponse.ACCEPT

    async def _execute_chat(self, goal_handle: Any) -> Chat.Result:
        key = bytes(goal_handle.goal_id.uuid)
        held = self._chat_goals[key] = ChatTurn()
        goal = goal_handle.request
        self.proactive.heard(goal.user_id)
        heard = Transcript(text=goal.text, is_final=True, user_id=goal.user_id, language=goal.language)
        heard.header.stamp = self.get_clock().now().to_msg()
        heard.header.frame_id = "chat"
        self.chat_heard.publish(heard)  # before the turn: memory checks stated facts against what it heard

        def said(piece: ReplyPiece) -> None:  # on the engine's loop, right after the piece is on `reply`
            sentence = held.on_piece(piece)
            if sentence is not None:
                goal_handle.publish_feedback(Chat.Feedback(seq=sentence[0], sentence=sentence[1]))

        try:
            await self._on_engine(self._hold_chat(held, goal.user_id, goal.text, goal.language, said))
        except Exception as exc:  # noqa: BLE001 - a bug in holding the turn still answers the client
            self.get_logger().error(f"chat goal failed: {type(exc).__name__}: {exc}")
            held.outcome = Outcome(False, f"{FAILED}: {type(exc).__name__}")
        finally:
            del self._chat_goals[key]
        outcome = held.outcome or Outcome(False, f"{FAILED}: the turn did not end")
        if outcome.achieved:
            goal_handle.succeed()
        elif outcome.reason == CANCELLED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:  # interrupted or failed (or cancelled before the cancel request was recorded)
            goal_handle.abort()
        return Chat.Result(
            reply=held.reply,
            conversation_id=held.conversation_id,
            cues=held.cues,
            completed=outcome.completed,
            reason=outcome.reason,
        )

    async def _hold_chat(
        self, held: ChatTurn, user_id: str, text: str, language: str, said: Callable[[ReplyPiece], None]
    ) -> None:
        """One chat turn on the engine's loop, like a text_input message's, until it has ended
        and its cues came (or the grace passed)."""
        if held.cancel_requested:
            held.cancel_before_start()
            return
        turn = self.engine.start(user_id, text, language, CHAT, observer=said)
        if turn is None:  # the goal callback refuses an empty text
            raise ValueError("empty chat text")
        held.conversation_id, held.task = turn.conversation_id, turn.task
        self._held[turn.conversation_id] = held
        try:
            await asyncio.wait({turn.task})
            held.finish(turn.task)
            await held.cues_in(self.config.chat_cue_grace)
        finally:
            del self._held[turn.conversation_id]

    def _on_cue(self, cue: ActionCue) -> None:
        if self._chat_goals:  # only while a chat goal runs
            self._loop.call_soon_threadsafe(self._chat_cue, cue)

    def _chat_cue(self, cue: ActionCue) -> None:
        for held in self._held.values():
            if held.add_cue(cue.utterance_id, cue):
                return

    async def _on_engine(self, coroutine: Any) -> Any:
        """Await, in an rclpy coroutine, a coroutine run on the engine's loop; the executor
        thread serves other callbacks meanwhile."""
        done = RosFuture(executor=self.executor)
        # a done callback makes completing the future wake the executor, which then resumes
        # the coroutine waiting on it (an rclpy Future without callbacks wakes nobody)
        done.add_done_callback(lambda _future: None)
        running = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        running.add_done_callback(done.set_result)
        finished = await done
        return finished.result()

    def _apply_config(self, config: DialogueConfig, changed: frozenset[str]) -> None:
        """A live parameter change (validated by DialogueConfig): the engine's settings are
        changed on its loop, between turns' reads; the next turn uses them."""
        updates = {name: getattr(config, name) for name in changed - _NODE_ONLY}
        if "model_profile" in changed:
            # resolved as at start-up (engine_settings), so a live change picks the same flow
            updates["profile"] = engine_settings(config, base_url=config.base_url, model=config.model).profile

        def apply() -> None:
            for name, value in updates.items():
                setattr(self.engine.settings, name, value)

        asyncio.run_coroutine_threadsafe(_call(apply), self._loop).result(5)
        self.config = config
        if changed:
            self.get_logger().info(f"parameters changed: {', '.join(sorted(changed))}")

    def _speak_first(self, decision: Decision) -> str:
        """A proactive line the schedule's gate let through: started on the engine's loop; the
        conversation id of its reply, or "" when the user's own turn is running."""

        def start() -> str:
            turn = self.engine.speak_first(decision.user, line=decision.say, prompt=decision.prompt)
            return turn.conversation_id if turn is not None else ""

        return asyncio.run_coroutine_threadsafe(_call(start), self._loop).result(5)

    def _reminder_tick(self, now: float, speaking: bool, present: str) -> None:
        """The proactive tick (node clock, a timer thread): the runner looks on the engine's loop;
        its events go out on dialogue/proactive when it is done. Never waits here."""
        runner = self.reminder_runner
        if runner is None:
            return
        future = asyncio.run_coroutine_threadsafe(runner.tick(now, speaking=speaking, present=present), self._loop)

        def report(done: Any) -> None:
            if done.cancelled():
                return
            if (exc := done.exception()) is not None:
                self.get_logger().error(f"reminders: the look failed: {type(exc).__name__}: {exc}")
                return
            for event in done.result():
                self.proactive.publish_reminder_event(
                    event.event,
                    f"{event.event} {event.user or ''} {' '.join(event.ids)} {event.reason}".strip(),
                    now,
                    user=event.user,
                    reminders=",".join(event.ids),
                    conversation_id=event.conversation_id,
                    reason=event.reason,
                )

        future.add_done_callback(report)

    def _say_reminder(self, user: str, line: str) -> str:
        """On the engine's loop: a reminder's line, said like proactive talk."""
        turn = self.engine.speak_first(user, line=line)
        return turn.conversation_id if turn is not None else ""

    def _publish(self, piece: ReplyPiece) -> None:
        msg = Utterance(
            user_id=piece.user_id,
            conversation_id=piece.conversation_id,
            seq=piece.seq,
            text=piece.text,
            is_first=piece.is_first,
            is_end=piece.is_end,
            replace=piece.replace,
            source=piece.source,
            replaces=piece.replaces,
        )
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "dialogue"
        if piece.is_first:
            # Before the sentence: the latency monitor attaches it to the turn the sentence
            # answers, and topics are not ordered against each other (under load the sentence's
            # first audio could otherwise be seen before the LLM timing arrived).
            self._publish_llm_latency(piece.conversation_id)
        self.publisher.publish(msg)
        if self.room_gate is not None:
            self.room_gate.said(piece)

    def _publish_progress(self, p: TaskProgress) -> None:
        if not self.context.ok():  # shutting down: the last "cancelled" has nowhere to go
            return
        level = {"failed": "error", "cancelled": "warning"}.get(p.state, "ok")
        values = {
            "user": p.user_id,
            "task_id": p.task_id,
            "conversation_id": p.conversation_id,
            "state": p.state,
            "step": str(p.step),
            "tool": p.tool,
            "elapsed_s": f"{p.elapsed:.1f}",
        }
        message = f"{p.state}{': ' + p.detail if p.detail else ''}"
        self.task_progress.publish(event_status(self, "task", level, message, **values))

    def _publish_llm_latency(self, conversation_id: str) -> None:
        trace = next((t for t in reversed(self.engine.traces) if t.conversation_id == conversation_id), None)
        ttft = trace.llm_time_to_first_token if trace is not None else None
        if trace is None or ttft is None:  # qa hit, broadcast or fallback: no LLM token in this reply
            return
        msg = LlmLatency(
            conversation_id=conversation_id,
            time_to_first_token=float(ttft),
            context_seconds=float(trace.context_seconds),
        )
        # stamped when the first token came (the trace keeps monotonic times), so the latency
        # monitor can place it among the turn's other moments
        msg.header.stamp = to_time_msg(node_seconds(self) - (time.monotonic() - trace.first_token_at))
        msg.header.frame_id = "dialogue"
        self.llm_latency.publish(msg)

    def close(self) -> None:
        loop = getattr(self, "_loop", None)
        if loop is None or not loop.is_running():
            return

        async def shutdown() -> None:
            engine = getattr(self, "engine", None)
            if engine is not None:
                engine.interrupt()
                engine.cancel_tasks()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(engine.settle(), 1.0)  # memory writes of the last turn
                for client in filter(None, (engine.small, engine.big)):
                    await client.close()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(3)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
        knowledge = getattr(self, "knowledge", None)
        if knowledge is not None:
            with contextlib.suppress(Exception):
                knowledge.close()
        mcp = getattr(self, "_mcp", None)
        if mcp is not None:  # stop the MCP servers (a stdio server's process group ends with it)
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(mcp.close(), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(3)
        logging.getLogger("fay_ros.dialogue").removeHandler(self._log_handler)


async def _call(fn: Any) -> Any:
    return fn()


def main(args: list[str] | None = None) -> int:
    return run_node(DialogueNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
