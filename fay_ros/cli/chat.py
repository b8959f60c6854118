"""`fay-ros chat ["TEXT"]`: dialogue in the terminal, the reply printed as it streams.

For trying a persona, a qa table or an endpoint without ROS. With TEXT it runs one turn;
without it, a conversation: one line in, the streamed reply out, the history kept across
turns (one engine for the whole session). Without --base-url it uses the embedded offline
model: the running `fay-ros llm` if there is one, else it starts one in this process (once).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from pydantic import ValidationError

from ..common.paths import config_file
from ..common.urls import safe_url
from ..dialogue.settings import EngineConfig, EngineSettings, engine_settings
from ..llm.client import ApiKeyError, key_from_env
from ..llm.embedded import EMBEDDED_BASE_URL, EMBEDDED_MODEL
from ..llm.local_servers import LlmChoiceError, apply_llm_choice

if TYPE_CHECKING:
    from ..dialogue.engine import DialogueEngine
    from ..dialogue.persona import Persona
    from ..dialogue.qa import QaTable
    from ..dialogue.reply import ReplyPiece

PROMPT = "you> "
_DEFAULTS = EngineConfig.model_validate({})  # the node's defaults: every option not given here keeps them
QUIT_COMMANDS = ("/quit", "/exit")

_CONVERSATION_HELP = """\
Without TEXT: a conversation. Each line of stdin is one turn; the reply is printed as it
streams, one sentence per line, and the history of earlier turns goes to the model.
On a terminal there is a prompt (`you> `, line editing and history via readline) and a
banner on stderr; with piped stdin only the replies are printed (for scripts).

  Ctrl-D (end of input), /quit or /exit   end the conversation
  Ctrl-C while a reply streams            cancel that reply, back to the prompt
  Ctrl-C at the prompt                    leave at once (exit code 130)

A turn whose LLM call fails prints the spoken apology, the reason on stderr, and the
conversation goes on. Exit code: 0, or 1 if any turn failed (also for one TEXT);
2 for a bad persona, qa table or key; 130 after Ctrl-C at the prompt.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "chat",
        help="dialogue in the terminal: one turn for TEXT, else a conversation (try a persona or endpoint)",
        description="Run the dialogue engine (qa.csv -> judge -> tools -> reply) without ROS and print the "
        "streamed reply.",
        epilog=_CONVERSATION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "text",
        nargs="?",
        default=None,
        help="what the user says (one turn); omit it for a conversation read from stdin",
    )
    p.add_argument(
        "--base-url", default="", help=f"OpenAI-compatible endpoint (default: embedded, {EMBEDDED_BASE_URL})"
    )
    p.add_argument(
        "--llm",
        default="",
        metavar="SERVER",
        help="a local LLM server in one option: ollama:MODEL (OLLAMA_HOST or 127.0.0.1:11434), lmstudio[:MODEL], "
        "llamacpp[:MODEL] or embedded (the bring-up's llm:=); refused beside a different --base-url",
    )
    p.add_argument("--model", default="", help=f"model name (default {EMBEDDED_MODEL} for the embedded endpoint)")
    p.add_argument("--api-key-env", default="", help="NAME of the environment variable that holds the API key")
    p.add_argument("--big-model", default="", help="big model for the tool loop (dual-model mode)")
    p.add_argument("--persona", default=str(config_file("persona.yaml")), help="persona YAML")
    p.add_argument("--qa", default=str(config_file("qa.csv")), help="qa.csv ('none' = no table)")
    p.add_argument("--user", default="user", help="user id of the session (all turns)")
    p.add_argument("--language", default="", help="language of what the user says (en, zh; default: guessed per turn)")
    p.add_argument(
        "--profile",
        default=_DEFAULTS.model_profile,
        choices=["auto", "tiny", "capable"],
        help="dialogue flow for the model (as the node's model_profile): tiny = one call, facts first "
        "(the embedded model); capable = judge, tools, reply; auto picks by endpoint and model",
    )
    p.add_argument("--no-judge", action="store_true", help="skip the chat judge: answer directly")
    p.add_argument("--judge-format", default=_DEFAULTS.judge_format, choices=["none", "json_object", "json_schema"])
    p.add_argument(
        "--max-tokens", type=int, default=_DEFAULTS.max_tokens, help="most tokens per LLM answer (as the node)"
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the first token")
    p.add_argument("--verbose", action="store_true", help="show the engine's log (path, tool calls)")
    p.add_argument(
        "--reminders-db",
        default="",
        help="memory database whose reminders the chat sets, lists and cancels in words (a file, sqlite:/// "
        "or postgresql://; e.g. the companion's ~/.local/share/fay_ros/memory.db: the running companion "
        "says them when due). Default: none (reminder requests go to the model like any words)",
    )
    p.add_argument(
        "--knowledge-db",
        default="",
        help="knowledge base of your documents (`fay-ros knowledge add`; a file, sqlite:/// or postgresql://) "
        "the chat answers questions about the place from, as the dialogue node's knowledge_db. Default: none",
    )
    p.set_defaults(func=run)


def _reachable(base_url: str) -> bool:
    url = urlparse(base_url)
    try:
        with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout=0.5):
            return True
    except OSError:
        return False


class _Printer:
    """Prints reply pieces: one line per sentence, the reply's last line ended at is_end."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.first = True  # nothing of the current reply printed yet

    def __call__(self, piece: ReplyPiece) -> None:
        if piece.text:
            tag = f"[{piece.source}] " if self.verbose else ""
            print(("" if self.first else "\n") + tag + piece.text, end="", flush=True)
            self.first = False
        if piece.is_end:
            print(flush=True)
            self.first = True

    def end_line(self) -> None:
        """End a reply that was cut off mid-line (no is_end piece came)."""
        if not self.first:
            print(flush=True)
            self.first = True


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The engine settings of these options: the node's defaults (`EngineConfig`) with what
    the command line exposes set from it; ValidationError for an out-of-range value."""
    return EngineConfig.model_validate(
        {
            "model_profile": args.profile,
            "judge": not args.no_judge,
            "judge_format": args.judge_format,
            "max_tokens": args.max_tokens,
        }
    )


def settings_for(args: argparse.Namespace, base_url: str, model: str) -> EngineSettings:
    """What the engine of `fay-ros chat` runs with, made as the dialogue node makes its own."""
    return engine_settings(engine_config(args), base_url=base_url, model=model)


def _build_engine(
    args: argparse.Namespace,
    persona: Persona,
    qa: QaTable | None,
    base_url: str,
    model: str,
    key: str,
    emit: Callable[[ReplyPiece], None],
) -> DialogueEngine:
    """The engine of both modes (its clients are engine.small / engine.big; close them)."""
    from ..dialogue.engine import DialogueEngine
    from ..dialogue.toolbox import builtin_tools
    from ..llm.client import ChatClient, Endpoint

    endpoint = Endpoint(base_url, model, key, first_token_timeout=args.timeout)
    big = (
        ChatClient(Endpoint(base_url, args.big_model, key, first_token_timeout=args.timeout))
        if args.big_model
        else None
    )
    engine = DialogueEngine(
        persona,
        ChatClient(endpoint),
        emit,
        big=big,
        qa=qa,
        tools=builtin_tools(),
        settings=settings_for(args, base_url, model),
    )
    if args.reminders_db:
        engine.reminder_talk = _reminder_talk(args.reminders_db)
    if args.knowledge_db:
        from ..dialogue.knowledge_talk import KnowledgeDesk
        from ..knowledge.base import KnowledgeBase, KnowledgeSettings

        settings = KnowledgeSettings(db=args.knowledge_db)
        engine.knowledge = KnowledgeDesk(lambda: KnowledgeBase(settings))
    return engine


def _reminder_talk(db: str):
    """Reminder turns on the reminders of `db`, in-process (the running companion says them)."""
    import time
    from pathlib import Path

    from ..dialogue.reminder_talk import ReminderTalk
    from ..memory.backend import open_store
    from ..memory.embeddings import HashedNgramEmbedder
    from ..memory.reminder_book import ReminderBook
    from ..memory.reminder_service import LocalReminders, ReminderDesk
    from ..schedule.config import local_zone_name

    location = db if "://" in db else str(Path(db).expanduser())
    store = open_store(location, HashedNgramEmbedder(), clock=time.time)  # reminders need no embedding model
    tz = local_zone_name()
    return ReminderTalk(LocalReminders(ReminderDesk(ReminderBook(store.reminder_tables()), tz)), tz)


async def _close(engine: DialogueEngine) -> None:
    for client in (engine.small, engine.big):
        if client is not None:
            await client.close()
    if engine.knowledge is not None:
        engine.knowledge.close()


def run(args: argparse.Namespace) -> int:
    from ..dialogue.persona import Persona, PersonaError
    from ..dialogue.qa import QaTable, QaTableError
    from ..llm.embedded import LocalLlmError, LocalLlmServer

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR, format="[%(levelname)s] %(message)s", stream=sys.stderr
    )
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # the HTTP library under openai logs each request
    try:
        key = key_from_env(args.api_key_env)
    except ApiKeyError as exc:
        print(f"fay-ros chat: {exc}", file=sys.stderr)
        return 2
    try:
        engine_config(args)
    except ValidationError as exc:
        options = {"model_profile": "profile", "judge": "no-judge"}  # fields named unlike their option
        problems = "; ".join(
            f"--{options.get(str(e['loc'][0]), str(e['loc'][0]).replace('_', '-'))}: {e['msg']}" for e in exc.errors()
        )
        print(f"fay-ros chat: {problems}", file=sys.stderr)
        return 2
    try:
        persona = Persona.load(args.persona)
        qa = None if args.qa.lower() == "none" else QaTable.load(args.qa)
    except (PersonaError, QaTableError) as exc:
        print(f"fay-ros chat: {exc}", file=sys.stderr)
        return 2
    try:
        chosen = apply_llm_choice({"llm": args.llm, "llm_base_url": args.base_url, "llm_model": args.model})
    except LlmChoiceError as exc:
        words = str(exc)
        for setting, option in (("llm_base_url:=", "--base-url "), ("llm_model:=", "--model "), ("llm:=", "--llm ")):
            words = words.replace(setting, option)
        print(f"fay-ros chat: {words}", file=sys.stderr)
        return 2
    local = None
    base_url, model = chosen["llm_base_url"], chosen["llm_model"]
    if not base_url:
        base_url, model = EMBEDDED_BASE_URL, model or EMBEDDED_MODEL
        if not _reachable(base_url):
            try:
                local = LocalLlmServer(port=0)
            except LocalLlmError as exc:
                print(f"fay-ros chat: {exc}", file=sys.stderr)
                return 2
            base_url = local.base_url
    printer = _Printer(args.verbose)

    def make_engine() -> DialogueEngine:
        return _build_engine(args, persona, qa, base_url, model, key, printer)

    async def turn() -> int:
        engine = make_engine()
        trace = await engine.run_turn(args.user, args.text, args.language)
        await _close(engine)
        if trace.error:
            print(f"fay-ros chat: the LLM failed ({trace.error})", file=sys.stderr)
            return 1
        return 0

    try:
        if args.text is not None:
            return asyncio.run(turn())
        where = (
            "embedded model, started in this process"
            if local is not None
            else "embedded model"
            if not chosen["llm_base_url"]
            else "endpoint"
        )
        banner = (
            f"fay-ros chat: model {model or 'default'} at {safe_url(base_url)} ({where}). "
            "Ctrl-D to quit, Ctrl-C cancels a reply."
        )
        return _conversation(args, make_engine, printer, banner)
    finally:
        if local is not None:
            local.close()


def _reader(interactive: bool) -> Callable[[], str | None]:
    """A function that returns the next line of stdin (None at its end)."""
    if not interactive:

        def read_piped() -> str | None:
            line = sys.stdin.readline()
            return line if line else None

        return read_piped
    try:
        import readline  # noqa: F401 - input() gets line editing and history
    except ImportError:
        pass
    prompt_on_stdout = sys.stdout.isatty()  # never mix the prompt into redirected replies

    def read_tty() -> str | None:
        try:
            if prompt_on_stdout:
                return input(PROMPT)
            print(PROMPT, end="", file=sys.stderr, flush=True)
            return input()
        except EOFError:
            print(file=sys.stderr)  # the shell's prompt on a line of its own
            return None

    return read_tty


def _conversation(
    args: argparse.Namespace, make_engine: Callable[[], DialogueEngine], printer: _Printer, banner: str
) -> int:
    interactive = sys.stdin.isatty()
    read = _reader(interactive)
    if interactive:
        print(banner, file=sys.stderr, flush=True)
    loop = asyncio.new_event_loop()

    async def build() -> DialogueEngine:
        engine = make_engine()
        engine.prepare_clients()  # the first answer does not wait for the SDK's import
        return engine

    engine = loop.run_until_complete(build())

    async def one_turn(text: str):
        task = engine.submit(args.user, text, args.language)
        if task is None:  # an empty line starts no turn (the loop below skips those anyway)
            return None
        await asyncio.wait([task])
        return None if task.cancelled() else task.result()

    failed = False
    try:
        while True:
            try:
                line = read()
            except KeyboardInterrupt:  # Ctrl-C at the prompt: leave now
                print(file=sys.stderr)
                return 130
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.lower() in QUIT_COMMANDS:
                break
            try:  # Ctrl-C during the turn cancels the reply, not the program
                loop.add_signal_handler(signal.SIGINT, engine.interrupt)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
            try:
                trace = loop.run_until_complete(one_turn(text))
            finally:
                try:
                    loop.remove_signal_handler(signal.SIGINT)
                except (NotImplementedError, RuntimeError, ValueError):
                    pass
            if trace is None:
                printer.end_line()
                print("(reply cancelled)", file=sys.stderr, flush=True)
            elif trace.error:
                failed = True
                print(f"fay-ros chat: the LLM failed ({trace.error})", file=sys.stderr, flush=True)
        return 1 if failed else 0
    except KeyboardInterrupt:  # between a prompt and a turn
        print(file=sys.stderr)
        return 130
    finally:
        _shutdown(loop, engine)


def _shutdown(loop: asyncio.AbstractEventLoop, engine: DialogueEngine) -> None:
    """Close the clients, then the loop as asyncio.run does (pending tasks, async generators)."""
    try:
        loop.run_until_complete(_close(engine))
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
