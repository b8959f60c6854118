""" "The user asked to remember": one rule (`fay_ros.memory.policy.is_explicit_request`), used by
the memory policy on heard words and by the dialogue's memory_remember tool on the question.

The tool used to have its own substring check, which took questions ("do you remember my
name?") and reminiscing ("I remember when...") for requests and missed "keep in mind",
"记下", "不要忘"; the policy's rule won, with the cases both missed added (marked "new")."""

from __future__ import annotations

import asyncio

import pytest

from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import MemoryResult, ToolContext
from fay_ros.memory.model import CANDIDATE, CONFIRMED
from fay_ros.memory.policy import RememberRequest, is_explicit_request
from fay_ros.memory.service import build_service

ASKS = [
    "Remember that I don't eat coriander",
    "remember, I'm vegetarian",
    "Please remember my sister is called Ann",
    "Help me remember to take my pills",
    "Don't forget my birthday is in May",
    "Don\u2019t forget my birthday is in May",  # new: a typographic apostrophe, as phones type it
    "do not forget the milk",
    "Please note I'm allergic to nuts",  # new
    "please note that I'm allergic to nuts",
    "Keep in mind I work nights",
    "From now on call me Lin",
    "\uff32\uff45\uff4d\uff45\uff4d\uff42\uff45\uff52 I'm vegetarian",  # new: full-width letters
    "记住我不吃香菜",
    "記住我不吃香菜",  # new: traditional characters
    "记下来：我周三加班",
    "别忘了明天给妈妈打电话",
    "不要忘了吃药",
    "不许忘了我的生日",  # new: 许 as well as 許
    "以后叫我小林",
    "从现在起每天提醒我喝水",
    "帮我记住车停在B2",
]
DOES_NOT_ASK = [
    "I remember when we went to the beach",
    "I remember that summer in Rome",  # new: the user reminiscing, not asking
    "I'll remember that",  # new
    "I don't remember",  # new
    "Do you remember my name?",
    "Do you still remember me?",  # new
    "Don't you remember?",  # new
    "Remember when we met?",
    "Remembering names is hard",
    "I like coffee",
    "",
    "我记得那天下雨",
    "我会记住的",  # new: the user's own memory
    "你还记得我吗？",
    "你记住了吗？",
    "记得吗",
    "我喜欢咖啡",
]


@pytest.mark.parametrize("text", ASKS)
def test_asking_to_remember(text):
    assert is_explicit_request(text)


@pytest.mark.parametrize("text", DOES_NOT_ASK)
def test_not_asking_to_remember(text):
    assert not is_explicit_request(text)


class ServiceGateway:
    """The dialogue's MemoryGateway over a real MemoryService in this process."""

    def __init__(self, service) -> None:
        self.service = service

    async def remember(
        self, owner, content, *, node_type="", user_confirmed=False, tags=(), key="", source_session="", source_turn=0
    ):
        out = self.service.remember(
            RememberRequest(
                owner=owner,
                content=content,
                node_type=node_type,
                user_confirmed=user_confirmed,
                tags=list(tags),
                key=key,
                source_session=source_session,
                source_turn=source_turn,
            )
        )
        return MemoryResult(out.success, out.message)


@pytest.mark.parametrize(
    "question, model_says_asked, status",
    [
        ("Remember that I'm vegetarian", True, CONFIRMED),
        ("记住我是素食者", True, CONFIRMED),
        ("Don\u2019t forget I'm vegetarian", True, CONFIRMED),
        ("Do you remember I'm vegetarian?", True, CANDIDATE),  # a question: the old check confirmed it
        ("I remember when I became vegetarian", True, CANDIDATE),  # reminiscing: the old check confirmed it
        ("Keep in mind I'm vegetarian", True, CONFIRMED),  # the old check stored a candidate
        ("Remember that I'm vegetarian", False, CANDIDATE),  # the model did not say the user asked
    ],
)
def test_the_remember_tool_confirms_only_what_the_rule_calls_a_request(
    tmp_path, clock, question, model_says_asked, status
):
    service = build_service(tmp_path / "memory.db", embedder="hashed", clock=clock)
    ctx = ToolContext(owner="alice", question=question, conversation_id="c1", turn=1, memory=ServiceGateway(service))
    asyncio.run(
        builtin_tools().run("memory_remember", {"content": "Alice is vegetarian", "user_asked": model_says_asked}, ctx)
    )
    [stored] = service.store.list("alice", statuses=[CONFIRMED, CANDIDATE])
    assert (stored.content, stored.status) == ("Alice is vegetarian", status)
    service.store.close()
