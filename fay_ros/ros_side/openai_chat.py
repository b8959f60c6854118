"""The ROS side of `fay-ros openai`: each HTTP request is one goal of the dialogue node's `chat`
action (fay_msgs/action/Chat), sent from a client node spinning on its own executor thread;
the HTTP server (fay_ros.web.openai_api) runs on the asyncio loop of the main thread and awaits
rclpy futures through `service_call.await_ros_future`, so no rclpy callback ever waits.

`RosCompanion.turn(text, user_id)` yields the reply's sentences from the action's feedback as
they come, then a TurnEnd from the result (a sentence whose feedback had not arrived when the
result did is yielded from the result's reply). Closing the iterator before the end (the HTTP
client left) cancels the goal, also one still being accepted.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator
from typing import Any

from rcl_interfaces.srv import GetParameters

from fay_msgs.action import Chat
from fay_msgs.srv import GetActiveRules

from ..common import qos, topics
from ..common.masking import mask_text
from ..web.openai_api import DialogueUnavailable, TurnEnd
from .client_node import ClientNode
from .ros_tools import ThreadSafeActionClient
from .service_call import ServiceCallError, await_ros_future, call_service

DIALOGUE_NODE = "dialogue"
MEMORY_SERVICES = (topics.SRV_RECALL, topics.SRV_REMEMBER, topics.SRV_PROFILE)
PARAMETER_WAIT = 1.0  # seconds /health waits for the dialogue's `model` parameter
MEMORY_NODE = "memory"
DATABASE_WAIT = 2.0  # seconds /health waits for the memory database to answer a read
# The owner of /health's database read: no person's id, and it has no rules (an empty answer
# read from the database proves the database answers).
HEALTH_OWNER = "__health__"


def _cancel_when_accepted(send_future: Any) -> None:
    """Cancel the goal of `send_future` as soon as (if) it is accepted."""

    def cancel(f: Any) -> None:  # runs in the executor
        try:
            handle = f.result()
            if handle is not None and handle.accepted:
                handle.cancel_goal_async()
        except Exception:  # noqa: BLE001 - a failed send has no goal to cancel
            pass

    send_future.add_done_callback(cancel)


class RosCompanion(ClientNode):
    """The endpoint's client node (`client_node.ClientNode`) and its `chat` action client."""

    def __init__(self, ros_args: list[str], namespace: str = topics.DEFAULT_NAMESPACE) -> None:
        super().__init__("openai", ros_args, namespace)
        self._chat = ThreadSafeActionClient(
            self.node, Chat, topics.ACTION_CHAT, feedback_sub_qos_profile=qos.ACTION_REQUESTS, **qos.ACTION_QOS
        )
        self._parameters = self.node.create_client(GetParameters, f"{DIALOGUE_NODE}/get_parameters")
        self._memory_parameters = self.node.create_client(GetParameters, f"{MEMORY_NODE}/get_parameters")
        self._rules = self.node.create_client(GetActiveRules, topics.SRV_ACTIVE_RULES)

    def dialogue_ready(self) -> bool:
        return bool(self._chat.server_is_ready())

    def wait_for_dialogue(self, timeout: float) -> bool:
        """Block (a worker thread) until the chat action server is discovered, or `timeout`."""
        return bool(self._chat.wait_for_server(timeout_sec=timeout))

    async def turn(self, text: str, user_id: str) -> AsyncGenerator[str | TurnEnd, None]:
        if not self.dialogue_ready():
            raise DialogueUnavailable(
                f"the dialogue node is not running: no `chat` action server in namespace {self.namespace} "
                "(start the companion, e.g. `fay-ros up`)"
            )
        loop = asyncio.get_running_loop()
        sentences: asyncio.Queue[tuple[int, str]] = asyncio.Queue()

        def feedback(msg: Any) -> None:  # in the executor: hand over, never wait
            fb = msg.feedback
            loop.call_soon_threadsafe(sentences.put_nowait, (int(fb.seq), str(fb.sentence)))

        sent = self._chat.send_goal_async(
            Chat.Goal(text=text, user_id=user_id, language=""), feedback_callback=feedback
        )
        handle = None
        finished = False
        try:
            handle = (await await_ros_future(sent)).result()
            if handle is None or not handle.accepted:
                finished = True
                raise DialogueUnavailable("the dialogue refused the turn")
            result = asyncio.ensure_future(await_ros_future(handle.get_result_async()))
            said: list[str] = []
            getting: asyncio.Future[tuple[int, str]] | None = None
            try:
                while True:
                    getting = asyncio.ensure_future(sentences.get())
                    await asyncio.wait({getting, result}, return_when=asyncio.FIRST_COMPLETED)
                    if getting.done():
                        said.append(getting.result()[1])
                        yield said[-1]
                        continue
                    break
            finally:
                for pending in (getting, result):
                    if pending is not None and not pending.done():
                        pending.cancel()
            while not sentences.empty():  # feedback that came with the result
                said.append(sentences.get_nowait()[1])
                yield said[-1]
            answer = result.result().result().result
            finished = True
            reply = str(answer.reply)
            joined = " ".join(said)
            if len(reply) > len(joined) and reply.startswith(joined):
                rest = reply[len(joined) :].strip()
                if rest:
                    yield rest
            yield TurnEnd(reply, bool(answer.completed), str(answer.reason))
        finally:
            if not finished:
                if handle is not None:
                    handle.cancel_goal_async()
                else:  # still being accepted (or just accepted): cancel it once it is
                    _cancel_when_accepted(sent)

    async def health(self) -> dict[str, Any]:
        services = {name for name, _types in self.node.get_service_names_and_types()}
        memory = {name: f"{self.namespace.rstrip('/')}/{name}" in services for name in MEMORY_SERVICES}
        dialogue = self.dialogue_ready()
        return {
            "dialogue": {"chat_action": dialogue, "namespace": self.namespace},
            "memory": {"services": memory, "reachable": all(memory.values())},
            "model": await self._model() if dialogue else None,
            "database": await self._database(),
            "ros_graph": self._graph(),
        }

    async def _database(self) -> dict[str, Any]:
        """The memory node's database: its backend and location (credentials masked) from the
        node's parameters, and whether it answers a read now (memory/active_rules)."""
        report: dict[str, Any] = {"backend": None, "location": None, "answers": False}
        if self._memory_parameters.service_is_ready():
            future = self._memory_parameters.call_async(GetParameters.Request(names=["db_url", "db_path"]))
            try:
                done = await asyncio.wait_for(await_ros_future(future), PARAMETER_WAIT)
                url, path = (str(v.string_value) for v in done.result().values)
                report["backend"] = "postgresql" if url.startswith("postgres") else "sqlite"
                report["location"] = mask_text(url) if url else path
            except (TimeoutError, ValueError):
                self._memory_parameters.remove_pending_request(future)
        if self._rules.service_is_ready():
            future = self._rules.call_async(GetActiveRules.Request(owner=HEALTH_OWNER))
            try:
                done = await asyncio.wait_for(await_ros_future(future), DATABASE_WAIT)
                report["answers"] = bool(done.result().success)
            except TimeoutError:
                self._rules.remove_pending_request(future)
        return report

    def _graph(self) -> dict[str, Any]:
        """The ROS graph as this process sees it: the domain and the companion's nodes."""
        namespace = self.namespace.rstrip("/") or "/"
        nodes = sorted(name for name, ns in self.node.get_node_names_and_namespaces() if ns == namespace)
        return {"domain_id": int(os.environ.get("ROS_DOMAIN_ID", "0") or 0), "namespace": namespace, "nodes": nodes}

    async def _model(self) -> str | None:
        """The dialogue's `model` parameter, or None when it does not answer in time."""
        try:  # no wait for discovery: the health answer says what is there now
            response = await call_service(
                self._parameters,
                GetParameters.Request(names=["model"]),
                discover_until=time.monotonic(),
                timeout=PARAMETER_WAIT,
            )
        except ServiceCallError:
            return None
        values = response.values
        return str(values[0].string_value) or None if values else None

    def destroy_clients(self) -> None:
        self._chat.destroy()
