"""Statements about oneself read by rules (`fay_ros.memory.self_facts`), and the memory
policy that confirms a `user_confirmed` write only when the user's own words state it."""

from __future__ import annotations

import datetime

import pytest

from fay_ros.memory.model import CANDIDATE, CONFIRMED
from fay_ros.memory.policy import RememberRequest, decide_remember
from fay_ros.memory.self_facts import (
    extract_self_facts,
    name_from_content,
    render_fact,
    second_person,
    states_fact,
    taste_from_content,
)


def facts(text: str) -> list[tuple[str, str]]:
    return [(f.key, f.content) for f in extract_self_facts(text)]


# -- English statements --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # names
        ("My name is Tom.", [("name", "User's name is Tom.")]),
        ("Hi, I'm Tom.", [("name", "User's name is Tom.")]),
        ("Hello I'm Tom", [("name", "User's name is Tom.")]),
        ("Hey, I'm Tom, nice to meet you.", [("name", "User's name is Tom.")]),
        ("I'm Tom", [("name", "User's name is Tom.")]),
        ("Call me Tom.", [("name", "User's name is Tom.")]),
        ("Please call me Tommy!", [("name", "User's name is Tommy.")]),
        ("My name is Mary Ann.", [("name", "User's name is Mary Ann.")]),
        ("My name is Tom and I'm happy.", [("name", "User's name is Tom.")]),
        ("my name is tom", [("name", "User's name is Tom.")]),  # ASR (vosk) writes lowercase
        ("my name's tom and i like tea", [("name", "User's name is Tom."), ("taste:tea", "User likes tea.")]),
        ("I'm sorry, my name is Tom.", [("name", "User's name is Tom.")]),
        ("Remember that my name is Tom.", [("name", "User's name is Tom.")]),
        ("My name is Tom, but my friends call me Tommy.", [("name", "User's name is Tom.")]),
        # a statement followed by a question in the same sentence
        ("My name is Tom, what's yours?", [("name", "User's name is Tom.")]),
        ("Hi, I'm Anna, what's your name?", [("name", "User's name is Anna.")]),
        ("I'm Tom, and you?", [("name", "User's name is Tom.")]),
        ("I like tea, do you?", [("taste:tea", "User likes tea.")]),
        ("Do you like tea? I like tea.", [("taste:tea", "User likes tea.")]),
        # likes and dislikes
        ("I like hiking and coffee.", [("taste:hiking", "User likes hiking."), ("taste:coffee", "User likes coffee.")]),
        (
            "I like tea, cake and jazz.",
            [("taste:tea", "User likes tea."), ("taste:cake", "User likes cake."), ("taste:jazz", "User likes jazz.")],
        ),
        (
            "I like hiking, coffee, and reading.",
            [
                ("taste:hiking", "User likes hiking."),
                ("taste:coffee", "User likes coffee."),
                ("taste:reading", "User likes reading."),
            ],
        ),
        ("I love both cats and dogs.", [("taste:cats", "User likes cats."), ("taste:dogs", "User likes dogs.")]),
        (
            "I love cooking, especially pasta.",
            [("taste:cooking", "User likes cooking."), ("taste:pasta", "User likes pasta.")],
        ),
        ("I don't like coffee anymore.", [("taste:coffee", "User no longer likes coffee.")]),
        ("I do not like coffee.", [("taste:coffee", "User does not like coffee.")]),
        ("I hate mornings.", [("taste:mornings", "User does not like mornings.")]),
        ("I can't stand loud music.", [("taste:loud_music", "User does not like loud music.")]),
        ("I really enjoy reading books.", [("taste:reading_books", "User likes reading books.")]),
        ("I'm into jazz.", [("taste:jazz", "User likes jazz.")]),
        ("I like cooking for my mom.", [("taste:cooking_for_their_mom", "User likes cooking for their mom.")]),
        (
            "I love hiking but I hate running.",
            [("taste:running", "User does not like running."), ("taste:hiking", "User likes hiking.")],
        ),
        ("I am Tom and I like hiking.", [("name", "User's name is Tom."), ("taste:hiking", "User likes hiking.")]),
        # favourites
        ("My favorite color is blue.", [("favorite:color", "User's favorite color is blue.")]),
        ("My favourite food is pizza.", [("favorite:food", "User's favorite food is pizza.")]),
        # family and pets
        ("My sister is called Anna.", [("family:sister", "User's sister is called Anna.")]),
        ("My sister's name is Anna.", [("family:sister", "User's sister is called Anna.")]),
        ("I have a sister named Anna.", [("family:sister", "User's sister is called Anna.")]),
        ("My dad's name is John.", [("family:father", "User's dad is called John.")]),
        ("I have a dog called Max.", [("family:dog", "User's dog is called Max.")]),
        ("I have two brothers.", [("family:brother", "User has two brothers.")]),
        # plans
        # (a plan on a day: test_a_plan_on_a_day_names_its_date)
        ("I'm feeling tired tonight.", []),
        # no junk: "it" and a place are not tastes; a hobby taken up as people say it
        ("it's been quieter since the move but I like it, nearer the sea", []),
        ("I've took up the birdwatching proper now.", [("taste:birdwatching", "User likes birdwatching.")]),
        ("I like walking when it rains.", [("taste:walking", "User likes walking.")]),
    ],
)
def test_english_statements_about_oneself(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("I'm going to Paris tomorrow.", "plan:tomorrow", "User is going to Paris on Saturday, 6 March 2027."),
        (
            "Tomorrow I'm going to visit my mom.",
            "plan:tomorrow",
            "User will visit their mom on Saturday, 6 March 2027.",
        ),
        ("I will see my doctor on Friday.", "plan:on_friday", "User will see their doctor on Friday, 5 March 2027."),
        ("I'm going to Rome next Friday.", "plan:next_friday", "User is going to Rome on Friday, 12 March 2027."),
        ("I'm flying to Rome next Friday.", "plan:next_friday", "User is flying to Rome on Friday, 12 March 2027."),
        ("我明天要去北京。", "plan:明天", "用户2027年3月6日（星期六）要去北京。"),
        ("明天我要去北京。", "plan:明天", "用户2027年3月6日（星期六）要去北京。"),
        ("我下周五要去上海出差", "plan:下周五", "用户2027年3月12日（星期五）要去上海出差。"),
        # today's words and spans keep the day they were said on, so they pass as days do
        (
            "I'm gonna watch a movie tonight.",
            "plan:tonight",
            "User is going to watch a movie tonight (Friday, 5 March 2027).",
        ),
        (
            "I am planning to visit Rome next week.",
            "plan:next_week",
            "User is planning to visit Rome in the week of 8 March 2027.",
        ),
        (
            "Next week I'm visiting my mum in Leeds.",
            "plan:next_week",
            "User is visiting their mum in Leeds in the week of 8 March 2027.",
        ),
        (
            "This weekend, I'm going hiking.",
            "plan:this_weekend",
            "User is going hiking on the weekend of 6 March 2027.",
        ),
        ("我周末打算去爬山。", "plan:周末", "用户2027年3月6日开始的那个周末要去爬山。"),
    ],
)
def test_a_plan_on_a_day_names_its_date(text, key, content):
    # said on Friday 5 March 2027: read back a week later, "tomorrow" would name the wrong day
    friday = datetime.datetime(2027, 3, 5, 10, 0)
    assert [(f.key, f.content) for f in extract_self_facts(text, friday)] == [(key, content)]
    assert states_fact([text], key, content)


def test_an_age_is_an_age_not_a_name():
    # (its day is the day it was said: test_dialogue_personal_facts has them against a fixed clock)
    assert [key for key, _ in facts("My name is Tom and I'm 30.")] == ["name", "age"]
    assert [key for key, _ in facts("I'm 30 years old.")] == ["age"]


@pytest.mark.parametrize(
    "text",
    [
        # not names
        "I'm tired.",
        "I'm Tired.",
        "I'm glad.",
        "I am Happy.",
        "I'm Chinese.",
        # not plans of one's own: they involve the companion
        "I will call you tomorrow.",
        "Tomorrow I will tell you a story.",
        "I'm not Tom.",
        "I am not a robot.",
        "I'm Tom's friend.",
        "My name is not Bob.",
        "my name is difficult to spell",
        "my name is a secret",
        "call me tomorrow",
        "call me later",
        # not tastes: about the companion, a pronoun, a wish, the past
        "I like it.",
        "I love you",
        "I love you too!",
        "I like that.",
        "I don't like it.",
        "I like your voice.",
        "I like talking to you.",
        "I like him.",
        "I like her.",
        "I like us.",
        "I'd like a coffee.",
        "I would like to go home.",
        "I used to like coffee.",
        "I will always love you.",
        "I don't know.",
        "I have an idea.",
        "I have a question.",
        # questions
        "What is my name?",
        "Who am I?",
        "Do I like tea?",
        "Am I tired?",
        "What do I like?",
        "Is my name Tom?",
        "Do you know, my name is Tom?",
        "Why do I like tea.",
        # hypotheticals and other people's words
        "If my name were Bob, would you like it?",
        "If my name were Bob...",
        "Imagine I like cats.",
        "He said his name is Bob.",
        "She said I like cats.",
        "He likes tea.",  # (a relative's taste is theirs: family:<relation>:likes)
    ],
)
def test_english_sentences_that_state_nothing_about_oneself(text):
    assert facts(text) == []


# -- Chinese statements --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我叫林。", [("name", "用户的名字是林。")]),
        ("我叫林，很高兴认识你。", [("name", "用户的名字是林。")]),
        ("我叫林，你呢？", [("name", "用户的名字是林。")]),
        ("我的名字是小明", [("name", "用户的名字是小明。")]),
        ("我的名字叫林小雨。", [("name", "用户的名字是林小雨。")]),
        ("叫我小明就好", [("name", "用户的名字是小明。")]),
        ("你可以叫我阿林吧", [("name", "用户的名字是阿林。")]),
        ("我叫Tom。", [("name", "用户的名字是Tom。")]),
        ("我喜欢咖啡。", [("taste:咖啡", "用户喜欢咖啡。")]),
        ("我不喜欢咖啡。", [("taste:咖啡", "用户不喜欢咖啡。")]),
        ("我很喜欢爬山和咖啡。", [("taste:爬山", "用户喜欢爬山。"), ("taste:咖啡", "用户喜欢咖啡。")]),
        ("我喜欢吃火锅", [("taste:火锅", "用户喜欢火锅。")]),
        ("我不吃香菜", [("taste:香菜", "用户不喜欢香菜。")]),
        ("我不太喜欢运动。", [("taste:运动", "用户不喜欢运动。")]),
        ("我讨厌下雨。", [("taste:下雨", "用户不喜欢下雨。")]),
        ("我最喜欢的颜色是蓝色。", [("favorite:颜色", "用户最喜欢的颜色是蓝色。")]),
        ("我最爱的电影是泰坦尼克号", [("favorite:电影", "用户最喜欢的电影是泰坦尼克号。")]),
        ("我女儿叫小雨。", [("family:daughter", "用户的女儿叫小雨。")]),
        ("我妈妈叫李华。", [("family:mother", "用户的妈妈叫李华。")]),
        ("我有一个女儿。", [("family:daughter", "用户有一个女儿。")]),
        ("我有两只猫。", [("family:cat", "用户有两只猫。")]),
        ("我叫林，我喜欢咖啡。", [("name", "用户的名字是林。"), ("taste:咖啡", "用户喜欢咖啡。")]),
    ],
)
def test_chinese_statements_about_oneself(text, expected):
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "我叫什么名字？",
        "我叫什么",
        "我喜欢什么？",
        "我喜欢吗？",
        "我是不是叫林？",
        "如果我叫小明呢",
        "要是我叫小明就好了",
        "假如我喜欢咖啡",
        "妈妈说我喜欢吃糖",
        "他说我叫小明",
        "他说他叫小明。",
        "我喜欢你。",
        "我爱你",
        "我喜欢这个",
        "我喜欢你的声音",
        "我喜欢和你聊天",
        "我喜欢的东西很多",
        "我最喜欢吃的是火锅",
        "我今天很累。",
        "我不知道",
        "我不想去北京。",
        "我爸爸不喜欢咖啡。",
        "我想叫你小美。",
    ],
)
def test_chinese_sentences_that_state_nothing_about_oneself(text):
    assert facts(text) == []


def test_a_nickname_from_friends_is_not_a_friend_called_me():
    assert facts("我朋友叫我小林。") == [("name", "用户的名字是小林。")]


def test_the_last_statement_with_a_key_wins_and_tags_say_the_users_own_words():
    [fact] = extract_self_facts("I like coffee. Actually, I don't like coffee anymore.")
    assert (fact.kind, fact.key, fact.value, fact.content, fact.language) == (
        "preference",
        "taste:coffee",
        "coffee",
        "User no longer likes coffee.",
        "en",
    )
    assert fact.tags == ("kind:preference", "source:user")
    [name] = extract_self_facts("我叫林。")
    assert name.tags == ("kind:fact", "source:user") and name.language == "zh" and name.value == "林"
    [plan] = extract_self_facts("I'm going to Paris tomorrow.")
    assert plan.tags[0] == "kind:event"


# -- states_fact: did the user say this? ------------------------------------------------------------


@pytest.mark.parametrize(
    "texts, key, content, stated",
    [
        (["My name is Tom."], "name", "User's name is Tom.", True),
        (["my name is tom"], "name", "User's name is Tom.", True),
        (["My name is Tom."], "name", "The user is called Tom.", True),
        (["My name is Tom."], "name", "User's name is Bob.", False),
        (["My name is Tom."], "name", "User's name is Tommy.", False),  # not the value said
        (["我叫林。"], "name", "用户的名字是林。", True),
        (["我叫林。"], "name", "用户的名字是林小雨。", False),
        (["I like tea."], "taste:tea", "User likes tea.", True),
        (["I like tea."], "taste:tea", "User does not like tea.", False),  # the opposite of what was said
        (["I don't like tea."], "taste:tea", "User does not like tea.", True),
        (["我不吃香菜"], "taste:香菜", "用户不喜欢香菜。", True),
        (["我不吃香菜"], "taste:香菜", "用户喜欢香菜。", False),
        (["I like tea."], "taste:coffee", "User likes coffee.", False),
        (["I like tea."], "name", "User's name is tea.", False),
        (["My name is Tom."], "", "User's name is Tom.", False),
        (["What is my name? Is it Tom?"], "name", "User's name is Tom.", False),
        (["hello", "I'm going to Paris tomorrow."], "plan:tomorrow", "User is going to Paris tomorrow.", True),
        ([], "name", "User's name is Tom.", False),
    ],
)
def test_states_fact(texts, key, content, stated):
    assert states_fact(texts, key, content) is stated


# -- saying facts back ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, name, rendered",
    [
        ("User likes hiking.", "Tom", "Tom likes hiking."),
        ("User's sister is called Anna.", "Tom", "Tom's sister is called Anna."),
        ("User's name is Tom.", "Tom", "User's name is Tom."),
        ("用户喜欢咖啡。", "林", "林喜欢咖啡。"),
        ("用户的名字是林。", "林", "用户的名字是林。"),
        ("User likes hiking.", "", "User likes hiking."),
        ("Loves the sea.", "Tom", "Loves the sea."),
    ],
)
def test_render_fact_names_the_user_for_a_prompt(content, name, rendered):
    assert render_fact(content, name) == rendered


@pytest.mark.parametrize(
    "content, said",
    [
        ("User likes hiking.", "You like hiking."),
        ("User does not like coffee.", "You don't like coffee."),
        ("User's sister is called Anna.", "Your sister is called Anna."),
        ("User's name is Tom.", "Your name is Tom."),
        ("User is going to Paris tomorrow.", "You are going to Paris tomorrow."),
        ("User has two brothers.", "You have two brothers."),
        ("User will visit their mom tomorrow.", "You will visit your mom tomorrow."),
        ("User's favorite color is blue.", "Your favorite color is blue."),
        ("用户喜欢咖啡。", "你喜欢咖啡。"),
        ("用户的名字是林。", "你叫林。"),
        ("用户的女儿叫小雨。", "你的女儿叫小雨。"),
        ("Something else.", "Something else."),
    ],
)
def test_second_person_says_a_fact_back_to_the_user(content, said):
    assert second_person(content) == said


@pytest.mark.parametrize(
    "content, name",
    [
        ("User's name is Tom.", "Tom"),
        ("User's name is Mary Ann.", "Mary Ann"),
        ("用户的名字是林。", "林"),
        ("  User's name is Tom  ", "Tom"),
        ("User likes Tom.", ""),
        ("", ""),
    ],
)
def test_name_from_content(content, name):
    assert name_from_content(content) == name


def test_every_extracted_fact_round_trips_through_states_fact():
    for text in [
        "My name is Tom.",
        "I like hiking and coffee.",
        "I don't like tea.",
        "My sister is called Anna.",
        "I'm going to Paris tomorrow.",
        "我叫林。",
        "我不吃香菜",
        "我女儿叫小雨。",
        "我明天要去北京。",
    ]:
        found = extract_self_facts(text)
        assert found, text
        for fact in found:
            assert states_fact([text], fact.key, fact.content), (text, fact)


# -- the memory policy ---------------------------------------------------------------------------------------


def request(key: str, content: str, confirmed: bool = True, kind: str = "fact") -> RememberRequest:
    return RememberRequest(
        owner="tom",
        content=content,
        node_type="observation",
        key=key,
        tags=[f"kind:{kind}", "source:user"],
        user_confirmed=confirmed,
    )


@pytest.mark.parametrize(
    "key, content, kind, heard, stated, status",
    [
        # the user's own statement confirms it, without "remember"
        ("name", "User's name is Tom.", "fact", ["My name is Tom."], [], CONFIRMED),
        ("name", "User's name is Tom.", "fact", ["how are you"], ["my name is tom"], CONFIRMED),
        ("taste:hiking", "User likes hiking.", "preference", ["I like hiking and coffee."], [], CONFIRMED),
        ("taste:香菜", "用户不喜欢香菜。", "preference", ["我不吃香菜"], [], CONFIRMED),
        ("plan:tomorrow", "User is going to Paris tomorrow.", "event", ["I'm going to Paris tomorrow."], [], CONFIRMED),
        # a value the user did not say stays a candidate
        ("name", "User's name is Bob.", "fact", ["My name is Tom."], [], CANDIDATE),
        ("name", "User's name is Tommy.", "fact", ["My name is Tom."], [], CANDIDATE),
        ("taste:tea", "User does not like tea.", "preference", ["I like tea."], [], CANDIDATE),
        # a key the words do not state stays a candidate (a model's conclusion)
        ("taste:outdoors", "User likes the outdoors.", "preference", ["I like hiking."], [], CANDIDATE),
        ("name", "User's name is Tom.", "fact", ["What is my name? Is it Tom?"], [], CANDIDATE),
        # an explicit request still confirms
        (
            "taste:outdoors",
            "User likes the outdoors.",
            "preference",
            ["Remember that I love the outdoors."],
            [],
            CONFIRMED,
        ),
        # nothing heard: the flag is trusted (an app or agent without a conversation)
        ("name", "User's name is Bob.", "fact", [], ["My name is Tom."], CONFIRMED),
        ("name", "User's name is Bob.", "fact", None, [], CONFIRMED),
    ],
)
def test_policy_confirms_what_the_user_said_about_themselves(key, content, kind, heard, stated, status):
    decision = decide_remember(request(key, content, kind=kind), heard, stated_texts=stated)
    assert decision.status == status, decision.reason
    if status == CONFIRMED and heard and not any("emember" in t for t in heard):
        assert "said it about themselves" in decision.reason
    if status == CANDIDATE:
        assert "no explicit request" in decision.reason


def test_policy_never_confirms_an_unflagged_write_or_a_guest():
    decision = decide_remember(request("name", "User's name is Tom.", confirmed=False), ["My name is Tom."])
    assert decision.status == CANDIDATE
    with pytest.raises(PermissionError):
        decide_remember(
            RememberRequest(owner="", content="User's name is Tom.", key="name", user_confirmed=True),
            ["My name is Tom."],
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a new taste after a comma is its own statement, and a flip keeps one value per thing
        (
            "I don't like cola anymore, I like coffee now.",
            [("taste:cola", "User no longer likes cola."), ("taste:coffee", "User likes coffee.")],
        ),
        ("Actually I prefer tea these days.", [("taste:tea", "User likes tea.")]),
        ("I don't play games any more.", [("taste:games", "User no longer plays games.")]),
        ("I stopped drinking soda.", [("taste:soda", "User no longer drinks soda.")]),
        # (and a food the tables know is one to keep out of suggestions)
        (
            "I no longer eat meat.",
            [("taste:meat", "User no longer eats meat."), ("health:avoid:meat", "User does not eat meat.")],
        ),
        ("I quit smoking last year.", [("taste:smoking", "User gave up smoking.")]),
        ("I gave up on that idea.", []),
        ("我不喝可乐了。", [("taste:可乐", "用户不喜欢可乐。")]),
        ("我不玩游戏了", [("taste:游戏", "用户不喜欢游戏。")]),
        ("我不喜欢可乐了，现在喜欢咖啡。", [("taste:可乐", "用户不喜欢可乐。"), ("taste:咖啡", "用户喜欢咖啡。")]),
        ("我最近爱上了喝茶。", [("taste:茶", "用户喜欢茶。")]),
        # a taste taken up again, or switched to
        ("Honestly I'm back to cola now.", [("taste:cola", "User likes cola.")]),
        ("I switched to green tea last month.", [("taste:green_tea", "User likes green tea.")]),
        ("I'm back to work tomorrow.", []),
        ("I switched to a new phone.", []),
        ("我又开始喝可乐了。", [("taste:可乐", "用户喜欢可乐。")]),
        ("我现在换成喝茶了，挺好的", [("taste:茶", "用户喜欢茶。")]),
        # a habit said as current, in a new clause after a comma
        (
            "I don't like coffee any more, I drink tea now.",
            [("taste:coffee", "User no longer likes coffee."), ("taste:tea", "User drinks tea now.")],
        ),
        ("I mostly eat fish these days.", [("taste:fish", "User eats fish these days.")]),
        # no junk: "it" and a place are not tastes; a hobby taken up as people say it
        ("it's been quieter since the move but I like it, nearer the sea", []),
        ("I've took up the birdwatching proper now.", [("taste:birdwatching", "User likes birdwatching.")]),
        ("I like walking when it rains.", [("taste:walking", "User likes walking.")]),
    ],
)
def test_tastes_that_change(text, expected):
    assert [(f.key, f.content) for f in extract_self_facts(text)] == expected


def test_a_habit_given_up_reads_back_as_a_taste_that_is_no_longer_current():
    [fact] = extract_self_facts("I don't listen to jazz anymore.")
    assert taste_from_content(fact.content) == ("jazz", False)
    assert second_person(fact.content) == "You no longer listen to jazz."
    [habit] = extract_self_facts("I drink tea every morning.")
    assert taste_from_content(habit.content) == ("tea", True)
    assert second_person(habit.content) == "You drink tea every morning."
