"""Personal facts beyond names and tastes (issue 35): occupation, home, family ages and
birthdays, allergies, health conditions and medication, read by rules from the user's own
words in English and Chinese (`fay_ros.memory.self_facts`), answered from the facts
(`fay_ros.dialogue.fact_answers`, with ages counted to an injected clock), kept in every
prompt, and guarded: a reply never offers what the user is allergic to (`guard`, `health`).
"""

from __future__ import annotations

import datetime
import re

import pytest

from fay_ros.dialogue import fact_answers, food_ideas, prompts
from fay_ros.dialogue.guard import ReplyGuard
from fay_ros.dialogue.tools import Memory
from fay_ros.memory import health
from fay_ros.memory.self_facts import (
    asks_something,
    extract_self_facts,
    is_safety_key,
    name_from_content,
    pronoun_context,
    relatives_known,
    safety_facts,
    second_person,
    states_fact,
)
from fay_ros.text import when

# A Friday; its Sunday is 6 December 2026, the Sunday of next week 13 December.
FRIDAY = datetime.datetime(2026, 12, 4, 18, 30)


def keys(text: str, now: datetime.datetime = FRIDAY) -> dict[str, str]:
    return {f.key: f.content for f in extract_self_facts(text, now)}


def learn(lines: list[str], now: datetime.datetime = FRIDAY) -> dict[str, str]:
    """What a session knows after the user said `lines` (later statements win), as the
    dialogue keeps it."""
    facts: dict[str, str] = {}
    before = ""
    for line in lines:
        said_before, before = before, pronoun_context(before, line)
        for fact in extract_self_facts(line, now, before=said_before):
            facts.pop(fact.key, None)
            facts[fact.key] = fact.content
    return facts


# -- numbers and days ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("9", 9),
        ("nine", 9),
        ("Eleven", 11),
        ("forty-two", 42),
        ("ninety nine", 99),
        ("九", 9),
        ("十", 10),
        ("十五", 15),
        ("二十", 20),
        ("三十八", 38),
        ("两", 2),
        ("一百零五", 105),
        ("二〇一九", 2019),
        ("banana", None),
        ("十x", None),
    ],
)
def test_numbers_in_words_digits_and_chinese_numerals(text, value):
    assert when.number(text) == value


@pytest.mark.parametrize("n", [0, 1, 7, 10, 13, 20, 21, 58, 99])
def test_number_words_read_back(n):
    assert when.number(when.en_words(n)) == n
    assert when.number(when.zh_words(n)) == n


@pytest.mark.parametrize(
    "text, day",
    [
        ("today", datetime.date(2026, 12, 4)),
        ("tomorrow", datetime.date(2026, 12, 5)),
        ("on Saturday", datetime.date(2026, 12, 5)),
        ("Sunday", datetime.date(2026, 12, 6)),
        ("this Friday", datetime.date(2026, 12, 4)),
        ("on Monday", datetime.date(2026, 12, 7)),
        ("next Sunday", datetime.date(2026, 12, 13)),
        ("next Wednesday", datetime.date(2026, 12, 9)),
        ("on March 3", datetime.date(2027, 3, 3)),
        ("the 25th of December", datetime.date(2026, 12, 25)),
        ("December 4th", datetime.date(2026, 12, 4)),
        ("明天", datetime.date(2026, 12, 5)),
        ("后天", datetime.date(2026, 12, 6)),
        ("周日", datetime.date(2026, 12, 6)),
        ("星期天", datetime.date(2026, 12, 6)),
        ("下周日", datetime.date(2026, 12, 13)),
        ("下个星期二", datetime.date(2026, 12, 8)),
        ("三月三号", datetime.date(2027, 3, 3)),
        ("12月31日", datetime.date(2026, 12, 31)),
        ("someday", None),
        ("2月30日", None),
    ],
)
def test_a_day_is_resolved_against_the_moment_it_was_said(text, day):
    assert when.resolve_day(text, FRIDAY) == day


def test_ages_count_whole_years_to_the_birthday():
    born = datetime.date(2019, 12, 6)
    assert when.years_between(born, datetime.date(2026, 12, 5)) == 6
    assert when.years_between(born, datetime.date(2026, 12, 6)) == 7
    # 29 February is kept on 28 February in other years
    assert when.next_anniversary(2, 29, datetime.date(2027, 1, 1)) == datetime.date(2027, 2, 28)
    assert when.parse_date(when.format_date(born, zh=False)) == born
    assert when.parse_date(when.format_date(born, zh=True)) == born


# -- reading the statements -----------------------------------------------------------------

STATEMENTS = [
    # occupation and workplace
    ("I'm a dentist.", "occupation", "User is a dentist."),
    ("I am an electrician.", "occupation", "User is an electrician."),
    ("I'm a primary school teacher in Bristol.", "occupation", "User is a primary school teacher in Bristol."),
    (
        "I work as a paramedic for the ambulance service.",
        "occupation",
        "User works as a paramedic for the ambulance service.",
    ),
    ("I teach history at a secondary school.", "occupation", "User teaches history at a secondary school."),
    ("I'm an accountant by trade.", "occupation", "User is an accountant."),
    ("I'm retired now.", "occupation", "User is retired."),
    ("Morning! I'm David, I drive buses in Glasgow.", "occupation", "User drives buses in Glasgow."),
    ("I run a small bakery.", "occupation", "User runs a small bakery."),
    # the user's own age (as of the day it was said)
    ("I'm 34.", "age", "User is 34 (as of 4 December 2026)."),
    ("I am thirty-four years old and my son is 3.", "age", "User is 34 (as of 4 December 2026)."),
    ("我今年三十四岁。", "age", "用户34岁（2026年12月4日时）。"),
    ("My job is driving buses.", "occupation", "User's job is driving buses."),
    ("I do plumbing for a living.", "occupation", "User does plumbing for a living."),
    ("我当厨师。", "occupation", "用户是厨师。"),
    ("I work for Siemens.", "workplace", "User works for Siemens."),
    ("I work in a bakery.", "workplace", "User works in a bakery."),
    ("我是一名律师。", "occupation", "用户是律师。"),
    ("我是数学老师", "occupation", "用户是数学老师。"),
    ("我在银行当会计。", "occupation", "用户在银行当会计。"),
    ("我在一家工厂做电工", "occupation", "用户在一家工厂做电工。"),
    ("我的工作是送快递。", "occupation", "用户的工作是送快递。"),
    ("我教英语。", "occupation", "用户教英语。"),
    ("我已经退休了。", "occupation", "用户已经退休了。"),
    ("我在学校上班。", "workplace", "用户在学校工作。"),
    # home
    ("I live in Glasgow.", "home", "User lives in Glasgow."),
    ("I live in a small village near York.", "home", "User lives in a small village near York."),
    ("I'm based in Lisbon.", "home", "User lives in Lisbon."),
    ("I moved to Dublin last year.", "home", "User lives in Dublin."),
    ("I live near Manchester.", "home", "User lives near Manchester."),
    ("We live in Berlin.", "home", "User lives in Berlin."),
    ("我们住在广州。", "home", "用户住在广州。"),
    ("I'm currently working as a waiter.", "occupation", "User is a waiter."),
    ("我做会计工作。", "occupation", "用户做会计工作。"),
    ("My son just turned 10.", "family:son:age", "User's son is 10 (as of 4 December 2026)."),
    ("I'm gluten intolerant.", "health:avoid:gluten", "User cannot eat gluten."),
    ("I must avoid sugar.", "health:avoid:sugar", "User cannot eat sugar."),
    ("I take 20mg of atorvastatin at night.", "health:medication:statin", "User takes 20mg of atorvastatin at night."),
    ("I'm on blood thinners.", "health:medication:blood_thinner", "User is on blood thinners."),
    ("我血压高。", "health:condition:high_blood_pressure", "用户有高血压。"),
    ("我每天早上吃一片阿司匹林。", "health:medication:aspirin", "用户每天早上吃一片阿司匹林。"),
    ("我住在成都。", "home", "用户住在成都。"),
    ("我家在南京。", "home", "用户住在南京。"),
    ("我现在住在深圳南山区", "home", "用户住在深圳南山区。"),
    # ages and birthdays (said on Friday 4 December 2026)
    ("My son Max turns ten tomorrow.", "family:son:age", "User's son Max turns 10 on Saturday, 5 December 2026."),
    (
        "My granddaughter... no. My daughter will be 3 next Sunday.",
        "family:daughter:age",
        "User's daughter turns 3 on Sunday, 13 December 2026.",
    ),
    ("My mum is 81.", "family:mother:age", "User's mum is 81 (as of 4 December 2026)."),
    (
        "My girlfriend's thirtieth birthday is next Saturday.",
        "family:girlfriend:age",
        "User's girlfriend turns 30 on Saturday, 12 December 2026.",
    ),
    ("My son's 3rd birthday is on Monday.", "family:son:age", "User's son turns 3 on Monday, 7 December 2026."),
    ("我儿子这个星期天就满八岁了", "family:son:age", "用户的儿子在2026年12月6日（星期日）满8岁。"),
    ("My husband is fifty-two years old.", "family:husband:age", "User's husband is 52 (as of 4 December 2026)."),
    ("I have a 4-year-old son.", "family:son:age", "User's son is 4 (as of 4 December 2026)."),
    ("My dad's birthday is on the 9th of July.", "family:father:birthday", "User's dad's birthday is 9 July."),
    ("My wife was born on June 2, 1985.", "family:wife:birthday", "User's wife was born on 2 June 1985."),
    ("我儿子下周六满九岁。", "family:son:age", "用户的儿子在2026年12月12日（星期六）满9岁。"),
    ("我女儿今年四岁。", "family:daughter:age", "用户的女儿4岁（2026年12月4日时）。"),
    ("我爸爸今年六十八岁了", "family:father:age", "用户的爸爸68岁（2026年12月4日时）。"),
    ("我妈妈的生日是十月一号。", "family:mother:birthday", "用户的妈妈的生日是10月1日。"),
    ("我老公的生日在5月20日", "family:husband:birthday", "用户的老公的生日是5月20日。"),
    # pets
    ("I've got a cat named Luna.", "family:cat", "User's cat is called Luna."),
    ("我家的狗叫旺财。", "family:dog", "用户的狗叫旺财。"),
    ("我养了一只猫叫花花。", "family:cat", "用户的猫叫花花。"),
    # allergies, foods to avoid, conditions, medication
    ("I'm severely allergic to shellfish.", "health:allergy:shellfish", "User is allergic to shellfish."),
    ("I have a peanut allergy.", "health:allergy:peanut", "User is allergic to peanuts."),
    ("I have an allergy to kiwi fruit.", "health:allergy:kiwi_fruit", "User is allergic to kiwi fruit."),
    ("I'm allergic to bee stings.", "health:allergy:bee_stings", "User is allergic to bee stings."),
    ("I cannot drink milk, it makes me ill.", "health:avoid:milk", "User cannot drink milk."),
    ("I'm diabetic.", "health:condition:diabetes", "User has diabetes."),
    ("I suffer from asthma.", "health:condition:asthma", "User has asthma."),
    ("I have high blood pressure.", "health:condition:high_blood_pressure", "User has high blood pressure."),
    ("I take warfarin twice a day.", "health:medication:warfarin", "User takes warfarin twice a day."),
    ("I'm on insulin.", "health:medication:insulin", "User is on insulin."),
    (
        "I take my blood pressure pills every evening.",
        "health:medication:blood_pressure_medication",
        "User takes blood pressure pills every evening.",
    ),
    ("我对芝麻过敏。", "health:allergy:sesame", "用户对芝麻过敏。"),
    ("我海鲜过敏", "health:allergy:seafood", "用户对海鲜过敏。"),
    ("我不能吃麸质。", "health:avoid:gluten", "用户不能吃麸质。"),
    ("我有高血压。", "health:condition:high_blood_pressure", "用户有高血压。"),
    ("我是哮喘病人", "health:condition:asthma", "用户有哮喘。"),
    ("我每天早上吃二甲双胍。", "health:medication:metformin", "用户每天早上吃二甲双胍。"),
    ("我每天晚上都要吃降糖药", "health:medication:diabetes_medication", "用户每天晚上都要吃降糖药。"),
]


@pytest.mark.parametrize("text, key, content", STATEMENTS)
def test_statements_about_oneself_become_keyed_facts(text, key, content):
    found = keys(text)
    assert found.get(key) == content, found


@pytest.mark.parametrize("text, key, content", STATEMENTS)
def test_each_statement_round_trips_through_the_memory_policys_check(text, key, content):
    # the memory node confirms a self-fact only when the user's words state it
    assert states_fact([text], key, content)
    assert not states_fact(["I like tea."], key, content)


def test_one_key_per_allergen_whichever_language_it_was_said_in():
    assert set(keys("I'm allergic to sesame and shellfish.")) == {"health:allergy:sesame", "health:allergy:shellfish"}
    english, chinese = keys("I am allergic to peanuts."), keys("我对花生过敏。")
    assert list(english) == list(chinese) == ["health:allergy:peanut"]
    # a new value supersedes where one value holds: the same key
    assert list(keys("I'm a nurse.")) == list(keys("我是程序员。")) == ["occupation"]
    assert list(keys("my daughter is 6")) == list(keys("我女儿今年六岁")) == ["family:daughter:age"]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "My son Oliver is allergic to peanuts.",
            {"health:allergy:peanut:son": "User's son Oliver is allergic to peanuts."},
        ),
        ("my wife has a gluten allergy", {"health:allergy:gluten:wife": "User's wife is allergic to gluten."}),
        (
            "My dad can't eat shellfish or eggs.",
            {
                "health:avoid:shellfish:father": "User's father cannot eat shellfish.",
                "health:avoid:egg:father": "User's father cannot eat eggs.",
            },
        ),
        (
            "I'm allergic to peanuts and my son is allergic to eggs.",
            {
                "health:allergy:peanut": "User is allergic to peanuts.",
                "health:allergy:egg:son": "User's son is allergic to eggs.",
            },
        ),
        ("我儿子对花生过敏", {"health:allergy:peanut:son": "用户的儿子对花生过敏。"}),
        ("我女儿朵朵对花生过敏。", {"health:allergy:peanut:daughter": "用户的女儿朵朵对花生过敏。"}),
        ("我老婆海鲜过敏", {"health:allergy:seafood:wife": "用户的老婆对海鲜过敏。"}),
        ("我爸爸不能吃虾", {"health:avoid:shellfish:father": "用户的爸爸不能吃虾。"}),
    ],
)
def test_a_household_members_allergy_is_theirs_not_the_users(text, expected):
    found = {k: v for k, v in keys(text).items() if k.startswith("health:")}
    assert found == expected
    assert all(is_safety_key(k) for k in found), "kept in every prompt like the user's own"


@pytest.mark.parametrize(
    "text", ["I'm 5 minutes away.", "I'm 100% sure.", "I drive to work.", "I run marathons.", "我八岁吗？"]
)
def test_no_age_or_job_where_none_is_said(text):
    assert not {k for k in keys(text) if k in ("age", "occupation")}


def test_how_old_am_i_is_what_they_told_never_a_guess():
    assert fact_answers.answer("How old am I?", {}) == "You haven't told me how old you are."
    assert fact_answers.answer("我多大了？", {}, "zh") == "你还没告诉我你多大。"
    facts = learn(["I'm 34.", "My son is 3."])
    assert fact_answers.answer("How old am I?", facts, now=FRIDAY) == "You told me you're thirty-four."
    assert fact_answers.answer("How old is my son?", facts, now=FRIDAY) == "Your son is three."
    later = FRIDAY + datetime.timedelta(days=400)
    assert (
        fact_answers.answer("what's my age", facts, now=later) == "You told me you were thirty-four on 4 December 2026."
    )
    assert fact_answers.answer("我几岁了？", learn(["我今年三十四岁"]), "zh", FRIDAY) == "你告诉过我你三十四岁。"
    assert fact_answers.acknowledgement(extract_self_facts("I'm 34.", FRIDAY), zh=False) == (
        "Got it — you're 34. I'll keep that in mind."
    )


def test_an_age_said_with_a_pronoun_after_the_name_is_that_members():
    assert keys("My daughter is called Leela, she's nine.")["family:daughter:age"] == (
        "User's daughter Leela is 9 (as of 4 December 2026)."
    )
    assert keys("我女儿叫朵朵，今年六岁。")["family:daughter:age"] == "用户的女儿朵朵6岁（2026年12月4日时）。"
    assert fact_answers.answer(
        "How old is Leela?", learn(["My daughter is called Leela, she's nine."]), now=FRIDAY
    ) == ("Leela is nine.")


def test_a_changed_job_a_trip_and_a_partner_are_answered_from_the_latest_facts():
    """The held-out long conversation: a job changed as people say it, a trip asked about in
    three ways, "my partner" for the wife they named, and "which city"."""
    friday = datetime.datetime(2027, 3, 5, 10, 0)
    facts = learn(
        [
            "I'm a pharmacist.",
            "My wife is called Priya.",
            "I live in Bristol.",
            "I also started a new job, I'm a teacher now.",
            "I moved, I live in Manchester now.",
            "I'm going to Rome next Friday.",
        ],
        friday,
    )
    assert fact_answers.answer("What's my job?", facts) == "You are a teacher."
    assert fact_answers.answer("Which city do I live in?", facts) == "You live in Manchester."
    assert fact_answers.answer("What's my partner called?", facts) == "Your wife is called Priya."
    trip = "You are going to Rome on Friday, 12 March 2027."
    for question in ("Where am I going next week?", "When is my trip?", "When am I going to Rome?"):
        assert fact_answers.answer(question, facts, now=friday) == trip, question
    assert fact_answers.answer("When am I going to Paris?", facts, now=friday) == (
        "You haven't told me about a trip to Paris."
    )
    assert fact_answers.answer("What's my partner called?", {}) == "You haven't told me about your partner yet."
    assert keys("I started a new job as a nurse.") == {"occupation": "User works as a nurse."}
    hobby = learn(["I love woodworking."])
    assert fact_answers.answer("What did I tell you about my hobby?", hobby) == "You like woodworking."
    assert (
        fact_answers.answer("Do you know my daughter's name?", facts) == "You haven't told me about your daughter yet."
    )


def test_a_tiny_prompt_carries_no_earlier_value():
    """A superseded memory and a heard turn that said a value since changed are left out of a
    tiny prompt: a 135M model takes them for what is true now ("lives in Bristol")."""
    facts = learn(["I live in Manchester now."])
    earlier = Memory("m1", "User lives in Bristol.", "superseded", 0.9, "observation", key="home")
    said_before = Memory(
        "t1",
        "[2027-02-22] User: I live in Bristol.",
        "",
        0.8,
        "turn",
        text="I live in Bristol.",
        date="2027-02-22",
        said="2027-02-22",
        speaker="user",
    )
    current = Memory(
        "t2",
        "[2027-03-05] User: I love the canals here.",
        "",
        0.7,
        "turn",
        text="I love the canals here.",
        date="2027-03-05",
        said="2027-03-05",
        speaker="user",
    )
    volatile = "\n".join(
        prompts.tiny_volatile([], [earlier, said_before, current], facts, [], "Tom", "", "canals Bristol")
    )
    assert "Bristol" not in volatile and "canals" in volatile


@pytest.mark.parametrize(
    "text, expected",
    [
        # a remark after the list is not an item (the allergy was lost with it)
        ("I'm allergic to penicillin, found out the hard way.", {"health:allergy:penicillin"}),
        ("oh and i'm allergic to shellfish, ended up in hospital once", {"health:allergy:shellfish"}),
        ("I'm allergic to sesame, nearly died from it", {"health:allergy:sesame"}),
        ("the doctor's got me on metformin twice a day", {"health:medication:metformin"}),
        ("They've put me on statins for my cholesterol.", {"health:medication:statin"}),
        (
            "i'm allergic to nuts, eggs and dried fruit",
            {"health:allergy:tree_nut", "health:allergy:egg", "health:allergy:dried_fruit"},
        ),
        ("I can't eat grapefruit, the doctor was very firm about that.", {"health:avoid:grapefruit"}),
        (
            "I've got a heart condition, so I'm on warfarin.",
            {"health:condition:heart_disease", "health:medication:warfarin"},
        ),
        ("I'm vegetarian and lactose intolerant.", {"health:condition:lactose_intolerance", "health:avoid:meat"}),
        # the second clause of a Chinese sentence without a subject of its own
        ("我是退休教师，住在成都", {"occupation", "occupation:former", "home"}),
        (
            "我有高血压，每天吃降压药",
            {"health:condition:high_blood_pressure", "health:medication:blood_pressure_medication"},
        ),
        ("我女儿叫朵朵，她对芝麻过敏", {"family:daughter", "health:allergy:sesame:daughter"}),
        ("我女儿叫朵朵，对芝麻过敏", {"family:daughter", "health:allergy:sesame:daughter"}),
        ("我孙子叫浩浩，今年八岁。", {"family:grandson", "family:grandson:age"}),
        ("Hey! I'm Tomás, nice to meet you.", {"name"}),
        ("My granddaughter Chloe is coming.", {"family:granddaughter"}),
        ("We've been living in Cork for ten years.", {"home"}),
        ("We moved to Manchester last month.", {"home"}),
        ("My better half is called Sam.", {"family:partner"}),
        ("I work nights at the hospital as a porter.", {"occupation", "workplace"}),
    ],
)
def test_what_a_second_sweep_of_new_conversations_found_unread(text, expected):
    assert set(keys(text)) == expected


def test_a_late_wife_is_not_said_to_be_alive_and_past_tense_questions_are_answered():
    facts = learn(["I lost my wife Margaret three years ago.", "I used to be a postman, now I'm a teacher."])
    assert facts["family:wife"] == "User's late wife was called Margaret."
    assert fact_answers.answer("What was my wife's name?", facts) == "Your late wife was called Margaret."
    assert fact_answers.answer("What did I do for a living?", facts) == "You used to be a postman."
    assert fact_answers.answer("What do I do for a living?", facts) == "You are a teacher."
    health_facts = learn(["I've got a heart condition, so I'm on warfarin.", "I'm lactose intolerant."])
    assert fact_answers.answer("What's my heart medication?", health_facts) == "You are on warfarin."
    assert fact_answers.answer("Is there anything I can't eat?", health_facts) == "You can't eat milk."
    assert fact_answers.answer("我现在住在哪个城市？", learn(["我是退休教师，住在成都"]), "zh") == "你住在成都。"


def test_pets_and_family_told_as_we_and_our():
    assert keys("We've got a dog named Rex.") == {"family:dog": "User's dog is called Rex."}
    assert keys("Our cat is called Mimi.") == {"family:cat": "User's cat is called Mimi."}


def test_a_household_allergy_is_avoided_in_suggestions_but_is_not_the_users_own():
    facts = learn(["My name is Sarah.", "My son Oliver is allergic to peanuts.", "I'm allergic to shellfish."])
    assert health.avoided_keys(list(facts)) == ("shellfish",)
    assert health.avoided_keys(list(facts), household=True) == ("peanut", "shellfish")
    assert health.english_safety_line("health:allergy:peanut:son") == "User's son is allergic to peanuts."
    assert fact_answers.answer("What is Oliver allergic to?", facts) == "Your son Oliver is allergic to peanuts."
    assert fact_answers.answer("what's my son allergic to", facts) == "Your son Oliver is allergic to peanuts."
    assert fact_answers.answer("What is he allergic to?", facts) == "Your son Oliver is allergic to peanuts."
    assert fact_answers.answer("What am I allergic to?", facts) == "You're allergic to shellfish."
    assert fact_answers.answer("Does my daughter have any allergies?", facts) == (
        "You haven't told me about any allergies your daughter has."
    )
    zh = learn(["我儿子对花生过敏。"])
    assert fact_answers.answer("我儿子对什么过敏？", zh, "zh") == "你的儿子对花生过敏。"
    assert fact_answers.answer("我女儿对什么过敏？", zh, "zh") == "你还没告诉我你女儿对什么过敏。"
    assert fact_answers.answer("我对什么过敏？", zh, "zh") == "你还没告诉我你对什么过敏。"


def test_a_named_family_member_with_an_age_is_also_known_by_name():
    found = keys("My daughter Rosa turns eight on Tuesday.")
    assert found["family:daughter"] == "User's daughter is called Rosa."
    assert found["family:daughter:age"] == "User's daughter Rosa turns 8 on Tuesday, 8 December 2026."
    found = keys("我儿子小明下周日满十岁。")
    assert found["family:son"] == "用户的儿子叫小明。"


def test_the_day_of_a_birthday_depends_on_when_it_was_said():
    monday = datetime.datetime(2026, 12, 7, 9, 0)
    assert keys("My son turns 5 on Sunday.", monday)["family:son:age"].endswith("13 December 2026.")
    assert keys("My son turns 5 on Sunday.")["family:son:age"].endswith("6 December 2026.")


@pytest.mark.parametrize(
    "text",
    [
        # questions
        "Am I a teacher?",
        "Where do I live?",
        "What am I allergic to?",
        "Can I eat peanuts?",
        "How old is my son?",
        "我是做什么工作的？",
        "我对花生过敏吗？",
        "我住在哪里？",
        "我女儿几岁了？",
        # hypotheticals, wishes, the past, other people's words
        "If I were a nurse I would work nights.",
        "Imagine I live in Paris.",
        "I wish I lived in Rome.",
        "Maybe I'm allergic to cats.",
        "She told me I'm allergic to dust.",
        "I used to live in Leeds.",
        "如果我是医生就好了。",
        "我希望我住在海边。",
        "也许我对花生过敏。",
        # negations and look-alikes
        "I'm not allergic to anything.",
        "I have no allergies.",
        "I don't take any medication.",
        "I'm on holiday.",
        "I live in fear of spiders.",
        "I'm a big fan.",  # (not a job; 'a big fan of jazz' is a taste)
        "I'm a bit tired.",
        "My daughter is one of a kind.",
        "我对花生不过敏。",
        "我没有糖尿病。",
        "我是你的朋友。",
        "I'm a good cook.",
        "I'm a bit of a singer.",
        "I teach my kids to swim.",
        "我在找工作。",
        "我在想工作的事。",
        "我住在这里。",
        "我对你过敏。",
    ],
)
def test_questions_hypotheticals_and_reported_speech_are_never_facts(text):
    assert keys(text) == {}


@pytest.mark.parametrize(
    "text, content",
    [
        # a routine, and nothing else: no job ("take the bus"), no medicine, no taste
        ("I take the bus every morning.", "User takes the bus every morning."),
        ("I take lessons every week.", "User takes lessons every week."),
        ("I take a walk every morning.", "User takes a walk every morning."),
        ("我每天吃苹果。", "用户每天吃苹果。"),
        ("我每天吃薯片。", "用户每天吃薯片。"),
    ],
)
def test_what_one_does_every_day_is_a_routine_and_nothing_else(text, content):
    found = keys(text)
    assert list(found.values()) == [content] and all(k.startswith("routine:") for k in found), found


def test_safety_keys_are_allergies_foods_to_avoid_conditions_and_medication():
    found = learn(
        [
            "I'm a nurse.",
            "I'm allergic to eggs.",
            "I can't eat gluten.",
            "I'm diabetic.",
            "I take metformin daily.",
            "I live in Hull.",
        ]
    )
    assert [k for k in found if is_safety_key(k)] == [
        "health:allergy:egg",
        "health:avoid:gluten",
        "health:condition:diabetes",
        "health:medication:metformin",
    ]
    assert list(safety_facts(found).values()) == [found[k] for k in found if k.startswith("health:")]
    assert not is_safety_key("occupation") and not is_safety_key("family:daughter:age")


def test_a_hedge_or_someone_elses_word_takes_only_its_own_part_of_the_sentence():
    assert keys("I'm allergic to peanuts, maybe shellfish too.") == {
        "health:allergy:peanut": "User is allergic to peanuts."
    }
    assert keys("Hi, I'm Tom, maybe you remember me.") == {"name": "User's name is Tom."}
    assert keys("I live in Hull, my sister thinks I'm a nurse.") == {"home": "User lives in Hull."}
    assert keys("我叫林，也许你记得我。") == {"name": "用户的名字是林。"}


def test_an_occupation_and_a_workplace_in_one_sentence():
    assert keys("I'm a nurse and I work at St Mary's.") == {
        "occupation": "User is a nurse.",
        "workplace": "User works at St Mary's.",
    }
    facts = learn(["I'm a nurse and I work at St Mary's."])
    assert fact_answers.answer("What's my job?", facts, "en", FRIDAY) == "You are a nurse. You work at St Mary's."


def test_several_conditions_in_one_statement_are_one_fact_each():
    assert set(keys("I have asthma and type 2 diabetes.")) == {"health:condition:asthma", "health:condition:diabetes"}
    assert set(keys("我有高血压和糖尿病。")) == {"health:condition:high_blood_pressure", "health:condition:diabetes"}
    assert keys("I live in London now.") == {"home": "User lives in London."}


def test_a_statement_followed_by_a_question_is_both():
    assert asks_something("I'm allergic to peanuts. Can you suggest a snack?")
    assert asks_something("我对花生过敏，有什么零食推荐？")
    assert not asks_something("I'm allergic to peanuts. I live in Leeds.")
    assert list(keys("I'm allergic to peanuts. Can you suggest a snack?")) == ["health:allergy:peanut"]


# -- answers from the facts ------------------------------------------------------------------

TOLD = [
    "I'm a physiotherapist at the city hospital.",
    "My son Leo turns twelve next Monday.",  # the Monday of next week: 7 December 2026
    "I'm allergic to sesame.",
    "I can't eat gluten, I'm coeliac.",
    "I take aspirin every morning.",
    "I live in Cardiff.",
    "I have a parrot called Kiwi.",
]


@pytest.mark.parametrize(
    "question, expected",
    [
        ("What do I do for a living?", "You are a physiotherapist at the city hospital."),
        ("What's my profession?", "You are a physiotherapist at the city hospital."),
        ("Where do I live?", "You live in Cardiff."),
        ("What city do I live in?", "You live in Cardiff."),
        ("What am I allergic to?", "You're allergic to sesame. You can't eat gluten."),
        ("Do I have any allergies?", "You're allergic to sesame. You can't eat gluten."),
        ("Am I allergic to sesame?", "Yes, you're allergic to sesame."),
        ("Am I allergic to tahini?", "Yes, you're allergic to sesame, and tahini usually contains sesame."),
        ("Am I allergic to cats?", "You haven't told me of any allergy to cats."),
        ("Can I eat hummus?", "No, you're allergic to sesame, and hummus usually contains sesame."),
        ("Can I have a bagel?", "No, you can't eat gluten, and bagel usually contains gluten."),
        ("Should I avoid tahini?", "Yes, you're allergic to sesame, and tahini usually contains sesame."),
        ("Is it okay for me to eat toast?", "No, you can't eat gluten, and toast usually contains gluten."),
        ("Do you remember my job?", "You are a physiotherapist at the city hospital."),
        ("How old's my son?", "Leo is eleven; he turns twelve on Monday, 7 December 2026."),
        ("What is Leo's age?", "Leo is eleven; he turns twelve on Monday, 7 December 2026."),
        ("How old is my son turning?", "Leo will be twelve on Monday, 7 December 2026."),
        ("What do I work as?", "You are a physiotherapist at the city hospital."),
        ("Which foods am I allergic to?", "You're allergic to sesame. You can't eat gluten."),
        ("What do I take every morning?", "You take aspirin every morning."),
        ("How old is the universe?", None),
        ("Can I tell you about my job?", None),
        ("Should I take my pills with food?", None),
        ("What are my meds?", "You take aspirin every morning."),
        ("What did I tell you about my job?", "You are a physiotherapist at the city hospital."),
        ("When was Einstein born?", None),
        ("How old is my best friend?", "You haven't told me how old your best friend is or when their birthday is."),
        ("What medication do I take?", "You take aspirin every morning."),
        ("What's my parrot called?", "Your parrot is called Kiwi."),
        ("How old is Leo?", "Leo is eleven; he turns twelve on Monday, 7 December 2026."),
        ("How old will my son be?", "Leo will be twelve on Monday, 7 December 2026."),
        (
            "When is my son's birthday?",
            "Leo's birthday is on 7 December; he turns twelve on Monday, 7 December 2026.",
        ),
        ("When is his birthday?", "Leo's birthday is on 7 December; he turns twelve on Monday, 7 December 2026."),
    ],
)
def test_english_questions_are_answered_from_the_facts(question, expected):
    assert fact_answers.answer(question, learn(TOLD), "en", FRIDAY) == expected


TOLD_ZH = [
    "我在医院当护士。",
    "我女儿小雨下周六满六岁。",  # 2026年12月12日
    "我对花生和虾过敏。",
    "我每天吃降压药。",
    "我住在苏州。",
    "我家的猫叫团团。",
]


@pytest.mark.parametrize(
    "question, expected",
    [
        ("我是做什么工作的？", "你在医院当护士。"),
        ("我的职业是什么？", "你在医院当护士。"),
        ("我住在哪里？", "你住在苏州。"),
        ("我对什么过敏？", "你对花生、虾过敏。"),
        ("我能吃花生酱吗？", "不行，你对花生过敏，花生酱里有花生。"),
        ("我对虾过敏吗？", "是的，你对贝类过敏。"),
        ("我是不是对芝麻过敏？", "你没告诉过我你对芝麻过敏。"),
        ("我女儿几号过生日？", "小雨的生日是12月12日，2026年12月12日（星期六）满六岁。"),
        ("我女儿星期六满几岁？", "小雨在2026年12月12日（星期六）满六岁。"),
        ("我过敏吗？", "你对花生、虾过敏。"),
        ("我需要吃什么药？", "你每天吃降压药。"),
        ("我可以吃龙虾吗？", "不行，你对贝类过敏，龙虾里有贝类。"),
        ("我吃什么药？", "你每天吃降压药。"),
        ("我家的猫叫什么？", "你的猫叫团团。"),
        ("我女儿几岁了？", "小雨现在五岁，2026年12月12日（星期六）满六岁。"),
        ("小雨多大了？", "小雨现在五岁，2026年12月12日（星期六）满六岁。"),
        ("她什么时候生日？", "小雨的生日是12月12日，2026年12月12日（星期六）满六岁。"),
    ],
)
def test_chinese_questions_are_answered_from_the_facts_in_chinese(question, expected):
    assert fact_answers.answer(question, learn(TOLD_ZH), "zh", FRIDAY) == expected


def test_an_age_after_the_birthday_counts_the_birthday_as_passed():
    facts = learn(["My daughter Ivy turns five on Sunday."])  # Sunday, 6 December 2026
    before = fact_answers.answer("How old is Ivy?", facts, "en", FRIDAY)
    assert before == "Ivy is four; she turns five on Sunday, 6 December 2026."
    week_later = FRIDAY + datetime.timedelta(days=7)
    assert fact_answers.answer("How old is my daughter?", facts, "en", week_later) == (
        "Ivy is five; she turned five on Sunday, 6 December 2026."
    )
    on_the_day = datetime.datetime(2026, 12, 6, 8, 0)
    assert fact_answers.answer("How old is she?", facts, "en", on_the_day) == "Ivy turns five today!"
    half_a_year = datetime.datetime(2027, 6, 1, 12, 0)
    assert fact_answers.answer("How old is Ivy?", facts, "en", half_a_year) == (
        "Ivy is five; she turns six on Monday, 6 December 2027."
    )
    assert fact_answers.answer("我女儿几岁了？", facts, "zh", week_later) == (
        "Ivy现在五岁，她在2026年12月6日（星期日）满了五岁。"
    )


def test_an_age_told_without_a_birthday_grows_with_the_years():
    facts = learn(["My son is 9."])
    assert fact_answers.answer("How old is my son?", facts, "en", FRIDAY) == "Your son is nine."
    later = datetime.datetime(2028, 3, 1, 12, 0)
    assert fact_answers.answer("How old is my son?", facts, "en", later) == (
        "Your son was nine when you told me on 4 December 2026, so he is about ten now."
    )
    # with the birthday, the year of birth follows: 9 on 4 December 2026, birthday 1 February
    facts = learn(["My son is 9.", "My son's birthday is February 1."])
    assert fact_answers.answer("How old will my son be?", facts, "en", FRIDAY) == (
        "Your son will be ten on Monday, 1 February 2027."
    )


@pytest.mark.parametrize(
    "question, language, expected",
    [
        ("What's my job?", "en", "You haven't told me what you do for a living yet."),
        ("Where do I live?", "en", "You haven't told me where you live yet."),
        ("What am I allergic to?", "en", "You haven't told me about any allergies."),
        ("What medication am I on?", "en", "You haven't told me about any medication you take."),
        ("How old is my daughter?", "en", "You haven't told me how old your daughter is or when her birthday is."),
        ("我是做什么工作的？", "zh", "你还没告诉我你是做什么工作的呢。"),
        ("我住在哪儿？", "zh", "你还没告诉我你住在哪里呢。"),
        ("我对什么过敏？", "zh", "你还没告诉我你对什么过敏。"),
        ("我儿子几岁了？", "zh", "你还没告诉我你儿子多大、生日是哪天。"),
    ],
)
def test_what_was_not_told_is_said_plainly(question, language, expected):
    assert fact_answers.answer(question, {}, language, FRIDAY) == expected


def test_a_fact_told_in_the_other_language_is_quoted_not_invented():
    facts = learn(["我是化学老师。"])
    assert fact_answers.answer("What do I do for a living?", facts, "en", FRIDAY) == (
        "You told me in Chinese: 你是化学老师。"
    )
    # allergens have names in both languages
    facts = learn(["I'm allergic to peanuts."])
    assert fact_answers.answer("我对什么过敏？", facts, "zh", FRIDAY) == "你对花生过敏。"


def test_can_i_eat_is_left_to_the_model_unless_the_food_is_one_to_avoid():
    assert fact_answers.answer("Can I eat pizza?", learn(["I live in Rome."]), "en", FRIDAY) is None
    allergic = learn(["I'm allergic to peanuts."])
    assert fact_answers.answer("Can I eat grapes?", allergic, "en", FRIDAY) is None
    assert fact_answers.answer("What should I eat for a snack?", allergic, "en", FRIDAY) is None
    assert fact_answers.answer("Can I have something sweet?", allergic, "en", FRIDAY) is None
    assert fact_answers.answer("Can I have a Snickers bar?", allergic, "en", FRIDAY) == (
        "No, you're allergic to peanuts, and snickers usually contains peanuts."
    )


# -- acknowledgements --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, language, expected",
    [
        ("I'm allergic to walnuts.", "en", "Got it — you're allergic to walnuts. I'll keep that in mind."),
        ("I work as a barista.", "en", "Got it — you work as a barista. I'll keep that in mind."),
        (
            "My son Tim turns four on Monday.",
            "en",
            "Got it — your son Tim turns 4 on Monday, 7 December 2026. I'll keep that in mind.",
        ),
        ("My dad is 70.", "en", "Got it — your dad is 70. I'll keep that in mind."),
        ("我对牛奶过敏。", "zh", "好的，我记住了：你对牛奶过敏。"),
        ("我住在西安。", "zh", "好的，我记住了：你住在西安。"),
    ],
)
def test_a_personal_fact_is_acknowledged_in_the_users_language(text, language, expected):
    learned = extract_self_facts(text, FRIDAY)
    assert fact_answers.acknowledgement(learned, language == "zh") == expected


def test_tastes_are_acknowledged_not_left_to_the_tiny_model():
    """(It answered "I love doing crosswords and watching the snooker" with "the game you play
    with your husband", no husband told.)"""
    learned = extract_self_facts("I like jazz.", FRIDAY)
    assert fact_answers.acknowledgement(learned, False) == "Got it — you like jazz. I'll keep that in mind."
    both = extract_self_facts("i love doing crosswords and watching the snooker", FRIDAY)
    assert fact_answers.acknowledgement(both, False) == (
        "Got it — you like doing crosswords and watching the snooker. I'll keep that in mind."
    )


@pytest.mark.parametrize(
    "text, key",
    [
        ("My doctor says I have diabetes.", "health:condition:diabetes"),
        ("the doctor says i'm coeliac, so no gluten for me, no bread, no pasta", "health:condition:coeliac"),
        ("医生说我有糖尿病。", "health:condition:diabetes"),
    ],
)
def test_a_diagnosis_is_the_persons_own_health_fact_not_hearsay(text, key):
    assert key in {f.key for f in extract_self_facts(text, FRIDAY)}
    # someone else's word still is ("She told me I'm allergic to dust": above, unread)
    assert extract_self_facts("She told me I'm allergic to dust.", FRIDAY) == []


def test_a_name_is_greeted_and_a_plan_said_back_not_left_to_the_tiny_model():
    # the embedded model took "I'm Helen Okafor" for its own name, and answered "I'm starting at
    # the zoo next month" with "You're welcome, Sam"
    assert fact_answers.acknowledgement(extract_self_facts("hi, my name's helen okafor"), False) == (
        "Nice to meet you, Helen Okafor!"
    )
    assert fact_answers.acknowledgement(extract_self_facts("我叫林。"), True) == "很高兴认识你，林！"
    learned = extract_self_facts("hi there, i'm patricia, pat for short. i'm a vet", FRIDAY)
    assert fact_answers.acknowledgement(learned, False) == (
        "Nice to meet you, Pat! Got it — you're a vet. I'll keep that in mind."
    )
    learned = extract_self_facts("i've handed in my notice, i'm starting at the zoo next month!", FRIDAY)
    assert fact_answers.acknowledgement(learned, False) == (
        "Got it — you're starting at the zoo in January 2027. I'll keep that in mind."
    )


def test_second_person_of_the_new_facts():
    assert second_person("User teaches chemistry.") == "You teach chemistry."
    assert second_person("User lives in Leeds.") == "You live in Leeds."
    assert second_person("User takes metformin every morning.") == "You take metformin every morning."
    assert second_person("User cannot eat gluten.") == "You cannot eat gluten."
    assert second_person("User does plumbing for a living.") == "You do plumbing for a living."
    assert second_person("User fixes cars for a living.") == "You fix cars for a living."
    assert second_person("User's son Leo turns 12 on Monday, 7 December 2026.") == (
        "Your son Leo turns 12 on Monday, 7 December 2026."
    )


# -- safety: prompts and the guard -------------------------------------------------------------


def test_safety_lines_are_never_trimmed_from_the_tiny_prompt():
    facts = {"name": "User's name is Tom.", "health:allergy:peanut": "User is allergic to peanuts."}
    facts.update({f"taste:thing{i}": f"User likes thing{i}." for i in range(10)})
    facts["health:medication:insulin"] = "User is on insulin."
    system = prompts.tiny_system("You are Fay.", facts, max_fact_lines=3)
    lines = system.splitlines()
    assert "Tom is allergic to peanuts." in lines and "Tom is on insulin." in lines
    assert lines[-3:] == ["Tom likes thing9.", "Tom is allergic to peanuts.", "Tom is on insulin."]
    # however small the limit
    assert "Tom is allergic to peanuts." in prompts.tiny_system("You are Fay.", facts, max_fact_lines=0)


def test_safety_lines_are_in_the_capable_prompts_too():
    messages = prompts.final_messages(
        "You are Fay.", [("memory_recall", "nothing")], [], "snack?", safety=["User is allergic to peanuts."]
    )
    assert "User is allergic to peanuts." in messages[0]["content"]
    assert "allergic" not in prompts.final_messages("You are Fay.", [], [], "snack?")[0]["content"]


def guard_for(*facts: str) -> ReplyGuard:
    keys_ = [k for text in facts for k in keys(text)]
    return ReplyGuard(avoided=health.avoided_keys(keys_))


@pytest.mark.parametrize(
    "fact, sentence",
    [
        ("I'm allergic to peanuts.", "How about some peanut butter on toast?"),
        ("I'm allergic to peanuts.", "You could try chicken satay with rice."),
        ("I'm allergic to peanuts.", "A handful of peanuts is a great snack."),
        ("I'm allergic to peanuts.", "You're allergic to peanuts, but a little peanut butter won't hurt."),
        ("我对花生过敏。", "来点花生酱面包吧。"),
        ("我对花生过敏。", "宫保鸡丁很好吃，你可以试试。"),
        ("I'm allergic to shellfish.", "Shrimp cocktail is a classic starter."),
        ("I'm allergic to walnuts.", "Try a walnut brownie."),
        ("I can't eat gluten.", "A slice of toast with jam is a good idea."),
        ("I'm coeliac.", "Maybe a bowl of pasta?"),
        ("我不能喝牛奶。", "喝杯奶茶吧。"),
        # an offer, whatever another clause warns (SmolLM2 said this in a fresh-clone run)
        (
            "I'm allergic to peanuts.",
            "You can have chocolate or peanut butter cookies, but they are made with nuts and other "
            "ingredients which may contain allergens like peanuts.",
        ),
        ("我对花生过敏。", "你可以吃花生酱面包，但要注意过敏。"),
    ],
)
def test_the_guard_drops_a_sentence_that_offers_what_the_user_must_avoid(fact, sentence):
    guard = guard_for(fact)
    verdict = guard.check(sentence)
    assert verdict.text is None and verdict.reason == "offers what the user must avoid"
    assert guard.unsafe and guard.summary() == "1 offers what the user must avoid"


@pytest.mark.parametrize(
    "fact, sentence",
    [
        ("I'm allergic to peanuts.", "Try some apple slices with cheese."),
        ("I'm allergic to peanuts.", "Please avoid peanut butter and satay."),
        ("I'm allergic to peanuts.", "These peanut-free cookies are a good choice."),
        ("I'm allergic to peanuts.", "A smoothie without peanuts would be nice."),
        ("I'm allergic to peanuts.", "Since you're allergic to peanuts, try popcorn instead."),
        ("我对花生过敏。", "不要吃花生酱，可以吃点水果。"),
        ("我对花生过敏。", "这款饼干不含花生，可以放心吃。"),
        ("I'm allergic to walnuts.", "Doughnuts are sweet."),
        ("I live in Leeds.", "How about some peanut butter on toast?"),
        ("I'm allergic to peanuts.", "Since you're allergic to peanuts, you can have popcorn instead."),
        ("I'm allergic to peanuts.", "Avoid peanut butter; try apple slices instead."),
    ],
)
def test_a_warning_or_an_unrelated_food_passes(fact, sentence):
    assert guard_for(fact).check(sentence).text == sentence


# -- the model's sentence against the user's facts (issue 37) ------------------------------------

KNOWN = {
    "name": "User's name is Tom.",
    "home": "User lives in Leeds.",
    "family:daughter": "User has two daughters.",
    "occupation": "User is a nurse.",
}
KNOWN_ZH = {"name": "用户的名字是林。", "home": "用户住在上海。", "family:daughter": "用户有两个女儿。"}


@pytest.mark.parametrize(
    "sentence, facts, keys_",
    [
        ("You live in London.", KNOWN, ["home"]),
        ("Your name is Bob.", KNOWN, ["name"]),
        ("You have three daughters.", KNOWN, ["family:daughter"]),
        ("You are a teacher.", KNOWN, ["occupation"]),
        ("你住在北京。", KNOWN_ZH, ["home"]),
        ("你有三个女儿。", KNOWN_ZH, ["family:daughter"]),
        ("你叫小明。", KNOWN_ZH, ["name"]),
        # agreeing, asking, about the companion or someone else, or a fact not known: no contradiction
        ("You live in Leeds, right?", KNOWN, []),
        ("You are a nurse at the hospital.", KNOWN, []),
        ("Your daughter is called Anna.", KNOWN, []),
        ("Do you live in London?", KNOWN, []),
        ("I live in London.", KNOWN, []),
        ("Anna lives in London.", KNOWN, []),
        ("You are great.", KNOWN, []),
        ("You live in London.", {}, []),
        ("我住在北京。", KNOWN_ZH, []),
        ("你住在上海。", KNOWN_ZH, []),
    ],
)
def test_a_sentence_said_to_the_user_is_read_against_their_facts(sentence, facts, keys_):
    from fay_ros.memory.self_facts import contradicted

    assert contradicted(sentence, facts) == keys_


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm vegetarian.", {"health:avoid:meat": "User is vegetarian: no meat or fish."}),
        (
            "I went vegetarian last year, so no meat please.",
            {"health:avoid:meat": "User is vegetarian: no meat or fish."},
        ),
        ("我吃素。", {"health:avoid:meat": "用户吃素，不吃肉。"}),
        ("我是素食者", {"health:avoid:meat": "用户吃素，不吃肉。"}),
        ("I don't eat pork.", {"health:avoid:pork": "User does not eat pork."}),
        ("I never drink milk.", {"health:avoid:milk": "User does not drink milk."}),
        ("我不能吃辣", {"health:avoid:spicy": "用户不能吃辣。"}),
        ("I can't eat spicy food.", {"health:avoid:spicy": "User cannot eat spicy food."}),
        ("我从来不吃猪肉", {"health:avoid:pork": "用户不吃猪肉。"}),
    ],
)
def test_a_diet_and_foods_a_person_does_not_eat_are_safety_facts(text, expected):
    assert {k: v for k, v in keys(text).items() if k.startswith("health:")} == expected


@pytest.mark.parametrize(
    "text", ["I'm not vegetarian.", "I don't eat breakfast.", "我不吃素", "我不是素食者", "I don't eat much."]
)
def test_no_diet_and_no_food_restriction_is_read_where_none_is_said(text):
    assert not [k for k in keys(text) if k.startswith("health:")]


def test_a_vegan_is_kept_from_meat_dairy_and_eggs_and_hotpot_is_known_to_be_spicy():
    vegan = learn(["I've been vegan for years."])
    assert health.avoided_keys(list(vegan)) == ("meat", "milk", "egg")
    assert fact_answers.answer("What can't I eat?", vegan) == "You can't eat meat, milk and eggs."
    assert fact_answers.answer("Can I have an omelette?", vegan).startswith("No, you can't eat eggs")
    assert fact_answers.answer("Can I eat tofu?", vegan) is None  # (nothing against it: the model answers)
    said = fact_answers.acknowledgement(extract_self_facts("I've been vegan for years."), zh=False)
    assert said == "Got it — you're vegan: no meat, fish, dairy or eggs. I'll keep that in mind."
    assert prompts.tiny_system("You are Fay.", vegan, 6).count("vegan") == 1  # one line for the diet
    no_spice = learn(["我不能吃辣。"])
    assert fact_answers.answer("我能吃火锅吗？", no_spice, "zh") == "不行，你不能吃辣，火锅里有辣。"
    assert fact_answers.answer("Can I eat hotpot?", no_spice).startswith("No, you can't eat spicy food")
    # the guard: what holds the food is left out, "would you like" is an offer, not a warning
    assert health.offered_food("要不要来点红烧肉？", ("meat",)) == ("红烧肉", "meat")
    assert health.offered_food("How about a chicken curry tonight?", ("meat",)) == ("chicken", "meat")
    assert health.offered_food("来点不辣的清汤吧。", ("spicy",)) is None
    assert health.offered_food("多锻炼肌肉对身体好。", ("meat",)) is None  # 肌肉 is muscle
    assert health.offered_food("How about some hot chocolate?", ("spicy",)) is None


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I'm 62 next month.", "User is 61 (as of 4 December 2026) and turns 62 in January 2027."),
        ("I'll be seventy on Sunday.", "User is 69 (as of 4 December 2026) and turns 70 on Sunday, 6 December 2026."),
        ("I'm turning 80 in March.", "User is 79 (as of 4 December 2026) and turns 80 in March."),
        ("我下个月就62了", "用户61岁（2026年12月4日时），2027年1月满62岁。"),
        ("我下周六满七十岁", "用户69岁（2026年12月4日时），2026年12月12日满70岁。"),
    ],
)
def test_the_users_own_coming_birthday_gives_their_age_today(text, content):
    facts = keys(text)
    assert facts == {"age": content}
    age = "sixty-one" if "62" in content else "sixty-nine" if "70" in content else "seventy-nine"
    assert fact_answers.answer("How old am I?", facts, now=FRIDAY) == f"You told me you're {age}."


@pytest.mark.parametrize("text", ["I'll be there on Sunday.", "I'm 5 minutes away.", "我明天去医院", "我下个月去北京"])
def test_no_age_where_a_coming_day_names_no_birthday(text):
    assert "age" not in keys(text)


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I used to be a postman before I retired.", "User used to be a postman."),
        ("I was a nurse for thirty years.", "User used to be a nurse."),
        ("I retired as a headteacher.", "User used to be a headteacher."),
        ("I worked as a welder for 20 years.", "User used to be a welder."),
        ("I worked as a nurse years ago.", "User used to be a nurse."),
        ("我退休前是工程师", "用户以前是工程师。"),
        ("我以前是做会计的", "用户以前是做会计的。"),
        ("我年轻的时候当过兵", "用户以前当过兵。"),
    ],
)
def test_a_job_they_had_is_kept_next_to_the_one_they_have(text, content):
    assert keys(text)["occupation:former"] == content


@pytest.mark.parametrize("text", ["I used to be a smoker.", "I was a mess for years.", "我以前住在北京", "我以前很胖"])
def test_no_former_job_where_none_is_said(text):
    assert "occupation:former" not in keys(text)


def test_the_job_they_had_answers_the_past_and_a_retired_persons_present():
    retired = learn(["I used to be a postman before I retired."])
    assert fact_answers.answer("What do I do for a living?", retired) == "You are retired. You used to be a postman."
    assert fact_answers.answer("What was my job?", retired) == "You used to be a postman."
    assert fact_answers.answer("What did I use to do?", retired) == "You used to be a postman."
    zh = learn(["我退休前是工程师"])
    assert fact_answers.answer("我以前是做什么的？", zh, "zh") == "你以前是工程师。"
    assert fact_answers.answer("我是做什么工作的？", zh, "zh") == "你已经退休了。你以前是工程师。"
    nurse = learn(["I'm a nurse."])
    assert fact_answers.answer("What did I do for a living?", nurse) == "You are a nurse."  # nothing said of before


@pytest.mark.parametrize(
    ("text", "before", "expected"),
    [
        # "he" and "she" are the relative just named, in the same words or the ones before
        (
            "My son Rory is five and he's allergic to eggs.",
            "",
            {"family:son", "family:son:age", "health:allergy:egg:son"},
        ),
        ("She's coeliac so absolutely no gluten for her.", "I look after my mum.", {"health:condition:coeliac:mother"}),
        ("Her name is Beatrice and she's 86.", "I look after my mum.", {"family:mother", "family:mother:age"}),
        ("She takes donepezil every evening.", "My mum lives with me.", {"health:medication:donepezil:mother"}),
        ("He's allergic to nuts.", "My daughter Ella is five.", set()),  # no "he" in the family said
        # the third sweep of new conversations: what was lost
        ("I don't eat pork and I don't drink alcohol.", "", {"health:avoid:pork", "health:avoid:alcohol"}),
        ("I don't drink, I'm teetotal.", "", {"health:avoid:alcohol"}),
        ("I have type two diabetes.", "", {"health:condition:diabetes"}),
        ("I take gliclazide with my breakfast.", "", {"health:medication:gliclazide"}),
        ("我有糖尿病，每天打胰岛素。", "", {"health:condition:diabetes", "health:medication:insulin"}),
        ("我信佛，吃素十几年了。", "", {"health:avoid:meat"}),
        ("我叫赵淑琴，今年六十八岁。", "", {"name", "age"}),
        ("我一个人住在西安，孩子们都在外地。", "", {"home"}),
        ("哦对了，我上个月搬家了，现在住在天河，不住番禺了。", "", {"home"}),
        ("我们上个星期搬家了，现在跟儿子一起住在深圳。", "", {"home"}),
        ("I've moved as well, I'm in a ground floor flat in Scarborough now.", "", {"home"}),
        ("I've lived on my own in Whitby since my husband passed.", "", {"home", "family:husband:passed"}),
        ("I've started a part-time job at the garden centre, three mornings a week.", "", {"occupation"}),
        ("And I turned seventy last Thursday.", "", {"age"}),
        ("我前天过了六十九岁生日。", "", {"age"}),
        ("On Friday I've got my pharmacology exam.", "", {"plan:on_friday"}),
        ("这个星期六我孙女小雨带我去动物园。", "", {"plan:这个星期六", "family:granddaughter"}),
        ("那个 我女儿叫啥来着", "", set()),  # a question, never a name
        ("On Monday I've got nothing on.", "", set()),
    ],
)
def test_what_a_third_sweep_of_new_conversations_found_unread(text, before, expected):
    found = {f.key for f in extract_self_facts(text, FRIDAY, before=before)}
    assert found == expected, found


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My name's Winifred but everyone calls me Winnie.", "Winnie"),
        ("my name is Zainab but just call me Zee", "Zee"),
        ("我叫刘淑珍，你叫我刘奶奶就行", "刘奶奶"),
        ("My name is Tom, but my friends call me Tommy.", "Tom"),  # what friends say is no request
    ],
)
def test_what_they_ask_to_be_called_is_their_name(text, name):
    assert name_from_content(keys(text)["name"]) == name


def test_the_third_sweeps_questions_are_answered_from_the_facts():
    facts = learn(["我女儿叫妞妞", "我下周三要去医院体检"])
    assert fact_answers.answer("那个 我女儿叫啥来着", facts, "zh") == "你的女儿叫妞妞。"
    assert fact_answers.answer("我下周三要干嘛？", facts, "zh", now=FRIDAY).endswith("要去医院体检。")
    pets = learn(["Our cat is called Marmite.", "My son is called Rory."])
    assert fact_answers.answer("What's our cat called?", pets) == "Your cat is called Marmite."
    assert fact_answers.answer("whats my little boy called", pets) == "Your son is called Rory."
    assert fact_answers.answer("What's my flatmate called?", pets) == "You haven't told me about your flatmate yet."
    coeliac = learn(["I'm coeliac.", "I'm a retired electrician."])
    assert fact_answers.answer("What is it I can't eat again?", coeliac) == "You can't eat gluten."
    assert fact_answers.answer("What was my trade before I retired?", coeliac) == "You used to be an electrician."
    mum = learn(["I look after my mum.", "She's coeliac so absolutely no gluten for her."])
    assert health.avoided_keys(list(mum), household=True) == ("gluten",)
    assert health.offered_food("How about a classic Christmas pudding?", ("gluten",)) == ("christmas pudding", "gluten")
    assert health.offered_food("I'd recommend a glass of wine.", ("alcohol",)) == ("wine", "alcohol")
    assert health.offered_food("How about some ginger beer?", ("alcohol",)) is None


def test_a_lower_case_name_a_singular_tablet_and_a_late_husband_are_asked_about():
    facts = learn(
        [
            "On Sunday my grandson Alfie is taking me to the garden centre, he's seven.",
            "I take gliclazide with my breakfast.",
            "I lost my husband Reginald two years ago.",
        ]
    )
    assert fact_answers.answer("how old is alfie", facts, "en", FRIDAY) == "Alfie is seven."
    assert fact_answers.answer("Which tablet do I take in the morning?", facts, "en", FRIDAY) == (
        "You take gliclazide with your breakfast."
    )
    assert (
        fact_answers.answer("What was my late husband's name?", facts, "en", FRIDAY)
        == "Your late husband was called Reginald."
    )
    assert fact_answers.answer("What am I doing at the weekend?", facts, "en", FRIDAY) == (
        "You are going to the garden centre with your grandson Alfie on Sunday, 6 December 2026."
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the second multi-day sweep: what was lost
        (
            "I've got an old springer spaniel called Bramble.",
            {"family:dog": "User's dog is called Bramble.", "family:dog:breed": "User's dog is a springer spaniel."},
        ),
        ("我老伴叫周建国，他七十一了。", {"family:partner": "用户的老伴叫周建国。"}),
        (
            "我儿子周磊在深圳上班，今年四十岁。",
            {
                # (the full name after the relation is his name: an own held-out round)
                "family:son": "用户的儿子叫周磊。",
                "family:son:job": "用户的儿子在深圳上班。",
                "family:son:age": "用户的儿子40岁（2026年12月4日时）。",
            },
        ),
        (
            "我以前在纺织厂当会计，现在退休了。",
            {"occupation:former": "用户以前在纺织厂当会计。", "occupation": "用户已经退休了。"},
        ),
        (
            "I'm a retired electrician.",
            {"occupation": "User is a retired electrician.", "occupation:former": "User used to be an electrician."},
        ),
        (
            "um next tuesday i have a hospital appointment",
            {"plan:next_tuesday": "User will have a hospital appointment on Tuesday, 8 December 2026."},
        ),
    ],
)
def test_what_a_second_multi_day_sweep_found_unread(text, expected):
    assert keys(text) == expected


def test_the_second_multi_day_sweeps_questions_are_answered_from_the_facts():
    facts = learn(
        ["um next tuesday i have a hospital appointment", "I love brass band music.", "I've moved to Scarborough."]
    )
    assert fact_answers.answer("when is my hospital appointment", facts) == (
        "You will have a hospital appointment on Tuesday, 8 December 2026."
    )
    assert fact_answers.answer("When is my interview?", facts) == "You haven't told me about an interview."
    assert fact_answers.answer("Which town did I move to?", facts) == "You live in Scarborough."
    assert fact_answers.answer("What sort of music do I like?", facts) == "You like brass band music."
    zh = learn(["我老伴叫周建国。", "我喜欢唱京剧和养花。"])
    assert fact_answers.answer("我老伴叫什么？", zh, "zh") == "你的老伴叫周建国。"
    assert fact_answers.answer("我平时喜欢干什么？", zh, "zh") == "你喜欢唱京剧、养花。"


def test_she_is_the_relative_named_a_few_turns_before_and_a_carer_is_answered_about_them():
    facts = learn(
        [
            "Hi, I'm Kwame. I look after my mum full time.",
            "Her name is Beatrice and she's 86.",
            "She's coeliac so absolutely no gluten for her.",  # "she" is still the mum
            "Sorry, I got that wrong, mum is 88, not 86.",
            "She takes donepezil every evening.",
        ]
    )
    assert facts["health:condition:coeliac:mother"] == "User's mother has coeliac disease."
    assert health.avoided_keys(list(facts), household=True) == ("gluten",)
    assert fact_answers.answer("How old is my mum?", facts, now=FRIDAY) == "Beatrice is eighty-eight."
    assert fact_answers.answer("What does my mum take in the evening?", facts) == (
        "Your mother takes donepezil every evening."
    )
    assert (
        fact_answers.answer("What does my dad take?", facts) == "You haven't told me about any medicine your dad takes."
    )


def test_a_student_with_a_weekend_job_and_an_exam():
    facts = learn(
        ["I'm doing a nursing degree.", "I also work weekends at the climbing wall.", "On Friday I've got my exam."]
    )
    assert fact_answers.answer("What am I studying?", facts) == "You are studying nursing."
    assert fact_answers.answer("Where do I work at the weekend?", facts) == "You work at the climbing wall."
    assert fact_answers.answer("What have I got on Friday?", facts, now=FRIDAY) == (
        "You will have your exam on Friday, 4 December 2026."
    )
    assert keys("No sorry, the cat is Marmite, Mango was our old cat.") == {
        "family:cat": "User's cat is called Marmite."
    }
    assert fact_answers.answer("你应该怎么称呼我？", learn(["我叫刘淑珍，你叫我刘奶奶就行"]), "zh") == "你叫刘奶奶。"
    assert fact_answers.answer("嗯那个我每天打什么针来着", learn(["我每天打胰岛素。"]), "zh") == "你每天打胰岛素。"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # as a recogniser writes it: "ive", "im", "dont", "cant", a lower-case "i", "um" in the middle
        (
            "next tuesday ive got a hospital appointment um for my eyes at half ten",
            {
                "plan:next_tuesday": "User will have a hospital appointment for their eyes at half ten on Tuesday, "
                "8 December 2026."
            },
        ),
        ("im allergic to peanuts", {"health:allergy:peanut": "User is allergic to peanuts."}),
        ("i cant eat gluten", {"health:avoid:gluten": "User cannot eat gluten."}),
        (
            "I love brass band music, and my favourite meal is fish pie.",
            {
                "favorite:meal": "User's favorite meal is fish pie.",
                "taste:brass_band_music": "User likes brass band music.",
            },
        ),
    ],
)
def test_words_as_a_recogniser_writes_them_and_a_taste_before_a_favourite(text, expected):
    assert keys(text) == expected


@pytest.mark.parametrize(
    ("lines", "key", "content"),
    [
        # the fourth sweeps: safety facts said as people say them
        (["i cant eat shellfish im allergic to it"], "health:avoid:shellfish", "User cannot eat shellfish."),
        (["嗯我自己对虾过敏"], "health:allergy:shellfish", "用户对虾过敏。"),
        (
            ["My granddaughter Elowen is nine. She's got a bad peanut allergy, she carries an EpiPen."],
            "health:allergy:peanut:granddaughter",
            "User's granddaughter Elowen is allergic to peanuts.",
        ),
        (
            ["My grandson Jayden is nine.", "Jayden's got a nut allergy, a bad one."],
            "health:allergy:tree_nut:grandson",
            "User's grandson Jayden is allergic to tree nuts.",
        ),
        (
            ["My toddler is Evie. She's two and she's allergic to cow's milk."],
            "health:allergy:milk:toddler",
            "User's toddler is allergic to cow's milk.",
        ),
        (
            ["We have our little girl Saoirse.", "She's lactose intolerant so no milk for her."],
            "health:condition:lactose_intolerance:daughter",
            "User's daughter Saoirse has lactose intolerance.",
        ),
        (
            ["My husband's called Desmond.", "He's seventy-four and he's type two diabetic, so he's on insulin."],
            "health:medication:insulin:husband",
            "User's husband is on insulin.",
        ),
        (
            ["我外孙叫糖糖，今年七岁。", "他对花生过敏，很严重。"],
            "health:allergy:peanut:grandson",
            "用户的外孙对花生过敏。",
        ),
        (["小孙子叫豆豆，才三岁，他对虾过敏。"], "health:allergy:shellfish:grandson", "用户的孙子对虾过敏。"),
        (
            ["My granddaughter Elowen is nine.", "I made a mistake last week, Elowen is ten, not nine."],
            "family:granddaughter:age",
            "User's granddaughter Elowen is 10 (as of 4 December 2026).",
        ),
        (["Aoife is my sister."], "family:sister", "User's sister is called Aoife."),
    ],
)
def test_what_the_fourth_sweeps_found_unread(lines, key, content):
    assert learn(lines)[key] == content


def test_a_severity_is_no_allergen_and_a_nut_allergy_keeps_peanuts_out():
    assert keys("I'm allergic to eggs, proper anaphylactic, I carry an EpiPen.") == {
        "health:allergy:egg": "User is allergic to eggs."
    }
    assert health.offered_food("How about cookies with peanut butter?", ("tree_nut",)) == ("peanut butter", "tree_nut")


def test_the_fourth_sweeps_changes_and_questions():
    said = datetime.datetime(2027, 9, 27, 10, 0)
    assert keys("And Desmond and I have moved into a bungalow in Truro, closer to the hospital.") == {
        "home": "User lives in Truro."
    }
    assert keys("It was my birthday on Monday, I'm seventy-one now.", said) == {
        "age": "User is 71 (as of 27 September 2027)."
    }
    assert keys("I worked down the pit for forty years, I was a miner.") == {
        "occupation:former": "User used to be a miner."
    }
    assert keys("I'm mad about the Ospreys.") == {"taste:the_ospreys": "User likes the ospreys."}
    facts = learn(
        [
            "I have high blood pressure and I take amlodipine every morning.",
            "We've a tabby cat called Mabel.",
            "We've got a budgie called Pickles.",
            "My girlfriend is called Orla.",
            "My name's Rosalind but everyone calls me Roz.",
            "We've moved to Truro.",
        ]
    )
    assert fact_answers.answer("What's my blood pressure tablet called?", facts) == "You take amlodipine every morning."
    assert (
        fact_answers.answer("What pets have I got?", facts)
        == "Your cat is called Mabel. Your budgie is called Pickles."
    )
    assert fact_answers.answer("whats my girlfriends name", facts) == "Your girlfriend is called Orla."
    assert fact_answers.answer("Where do we live now?", facts) == "You live in Truro."
    assert fact_answers.answer("um what do people call me", facts) == "Your name is Roz."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我以前住在宜宾，去年搬到南京帮女儿带孩子。", {"home": "用户住在南京。"}),
        ("我和老伴上周搬到南京了，住在女儿家附近。", {"home": "用户住在南京。"}),
        ("我在一家物流公司开货车，开了二十多年了。", {"occupation": "用户在一家物流公司开货车。"}),
        ("我说错了，我上个月已经从港口调到机场做调度了。", {"occupation": "用户在机场做调度。"}),
        ("我室友叫佳琪，她是广东人。", {"family:roommate": "用户的室友叫佳琪。"}),
        ("星期五下午我要带欢欢去学钢琴。", {"plan:星期五下午": "用户2026年12月4日（星期五）下午要带欢欢去学钢琴。"}),
        ("下个月五号我要去医院复查尿酸。", {"plan:下个月五号": "用户2027年1月5日（星期二）要去医院复查尿酸。"}),
        (
            "这个星期天我们一家带小满去鼓浪屿玩。",
            {"plan:这个星期天": "用户2026年12月6日（星期日）要带小满去鼓浪屿玩。"},
        ),
        ("On Sunday I'm going to the zoo.", {"plan:on_sunday": "User is going to the zoo on Sunday, 6 December 2026."}),
        ("Tomorrow I'm going to Paris.", {"plan:tomorrow": "User is going to Paris on Saturday, 5 December 2026."}),
    ],
)
def test_what_the_fourth_conversation_sweep_found_unread_in_chinese_and_plans(text, expected):
    assert keys(text) == expected


def test_a_plan_question_that_names_a_day_gets_that_days_plans():
    facts = learn(["星期五下午我要带欢欢去学钢琴。", "下个月五号我要去医院复查尿酸。"])
    assert (
        fact_answers.answer("我下个月五号要干什么？", facts, "zh", now=FRIDAY)
        == "你2027年1月5日（星期二）要去医院复查尿酸。"
    )
    assert fact_answers.answer("我星期六要干什么？", facts, "zh", now=FRIDAY) == "你还没告诉我那天的安排。"
    en = learn(["On Sunday I'm going to the zoo."])
    assert (
        fact_answers.answer("What am I doing on Monday?", en, now=FRIDAY)
        == "You haven't told me any plans for that day."
    )
    assert fact_answers.answer("What am I doing on Sunday?", en, now=FRIDAY) == (
        "You are going to the zoo on Sunday, 6 December 2026."
    )


def test_the_fourth_conversation_sweeps_rerun_misses():
    facts = learn(
        [
            "家里还养了一条狗，叫旺财。",
            "I've got a leopard gecko called Sprout.",
            "We moved from Swindon to Exeter in the summer so I'm at a new school.",
            "Tomorrow morning I'm planting garlic on the allotment.",
            "i said my names bernie",
            "My baby is called Freddie.",
        ]
    )
    assert fact_answers.answer("我的狗叫什么名字？", facts, "zh") == "你的狗叫旺财。"
    assert fact_answers.answer("What's my lizard called?", facts) == "Your lizard is called Sprout."
    assert fact_answers.answer("Where do I live now?", facts) == "You live in Exeter."
    assert fact_answers.answer("What am I doing tomorrow morning?", facts, now=FRIDAY) == (
        "You are planting garlic on the allotment on the morning of Saturday, 5 December 2026."
    )
    assert fact_answers.answer("What's my name? Say it loud.", facts) == "Your name is Bernie."
    assert fact_answers.answer("whats the babys name", facts) == "Your baby is called Freddie."
    assert fact_answers.answer("What's my physio's name?", facts) == "You haven't told me about your physio yet."
    assert fact_answers.answer("What's my mother-in-law called?", facts) == (
        "You haven't told me about your mother-in-law yet."
    )


def test_a_relatives_home_and_job_and_a_pet_that_died():
    facts = learn(["My daughter Fiona lives in Canada. She's a nurse in Toronto.", "My son lives near Leeds."])
    assert facts["family:daughter:home"] == "User's daughter Fiona lives in Canada."
    assert facts["family:daughter:job"] == "User's daughter Fiona is a nurse in Toronto."
    assert fact_answers.answer("where does my daughter live", facts) == "Your daughter Fiona lives in Canada."
    assert fact_answers.answer("What does Fiona do?", facts) == "Your daughter Fiona is a nurse in Toronto."
    assert fact_answers.answer("Where does my son live?", facts) == "Your son lives near Leeds."
    assert fact_answers.answer("What does my son do?", facts) == "You haven't told me what your son does."
    assert fact_answers.answer("Where does my brother live?", facts) == "You haven't told me where your brother lives."
    assert keys("My dog Bramble died last week.") == {"family:dog": "User's late dog was called Bramble."}


def test_the_fourth_multi_day_sweeps_rerun_questions():
    facts = learn(
        [
            "We have our little girl Saoirse.",
            "She's lactose intolerant so no milk for her.",
            "我叫孙桂兰，大家都叫我兰姨。",
        ]
    )
    assert (
        fact_answers.answer("What's Saoirse intolerant to?", facts) == "Your daughter Saoirse has lactose intolerance."
    )
    assert fact_answers.answer("大家怎么叫我", facts, "zh") == "你叫兰姨。"
    assert fact_answers.answer("我对什么过敏？", learn(["嗯我自己对虾过敏"]), "zh") == "你对虾过敏。"  # the word said


@pytest.mark.parametrize(
    "text, expected",
    [
        # typed in lowercase (or a recogniser without casing): the names after a cue are read
        ("my husband theo's the cook in our house", {"family:husband": "Theo"}),
        ("we've got a greyhound called biscuit", {"family:dog": "Biscuit"}),
        ("been married to my wife olga for twenty years now", {"family:wife": "Olga"}),
        ("my boyfriend is called jun, he's a chef", {"family:boyfriend": "Jun"}),
        ("i live in bristol now", {"home": "Bristol"}),
        ("hello! i'm kai.", {"name": "Kai"}),
        # and a lowercase word that is no name stays one
        ("my son plays football", {}),
        ("i'm vegetarian and lactose intolerant", {"name": None}),
        ("call me later", {}),
        ("i'm from work", {"home": None}),
        ("my sister called mum.", {"family:sister": None}),
        ("My sister called Mum.", {"family:sister": None}),
        ("my daughter just turned seven", {"family:daughter": None}),
    ],
)
def test_names_typed_in_lowercase_are_read_and_other_words_are_not_names(text, expected):
    facts = {f.key: f for f in extract_self_facts(text)}
    for key, name in expected.items():
        if name is None:
            assert key not in facts, facts
        else:
            assert key in facts and name in facts[key].content, facts
    if not expected:
        assert not any(k == "name" or k.startswith(("family:", "home")) for k in facts), facts


def test_the_users_own_birthday_is_kept_and_answered_and_so_is_the_age_they_will_be():
    facts = learn(["My birthday is on the 24th of March.", "I'm thirty."])
    assert facts["birthday"] == "User's birthday is 24 March."
    assert fact_answers.answer("When's my birthday?", facts, "en", FRIDAY) == "Your birthday is 24 March."
    assert fact_answers.answer("how old will i be?", facts, "en", FRIDAY) == "You'll be thirty-one on 24 March 2027."
    born = learn(["I was born on 3 May 1961."])
    assert fact_answers.answer("how old will I be on my birthday?", born, "en", FRIDAY) == (
        "You'll be sixty-six on 3 May 2027."
    )
    zh = learn(["我的生日是三月二十四号"])
    assert fact_answers.answer("我的生日是哪天？", zh, "zh", FRIDAY) == "你的生日是3月24日。"
    assert fact_answers.answer("When's my birthday?", {}, "en", FRIDAY) == "You haven't told me when your birthday is."
    assert keys("my birthday's on the 24th") == {}, "a day without its month is not kept as a birthday"


@pytest.mark.parametrize(
    "question, expected",
    [
        ("what's the name of my dog?", "Your dog is called Rex."),
        ("is there anything i shouldn't eat?", "You're allergic to peanuts."),
        ("what music do i not like?", "You don't like jazz."),
        ("what don't I like?", "You don't like jazz."),
        ("do you know what my job is?", "You are a nurse."),
        ("where did i work before?", "You haven't told me what you did before. You are a nurse."),
    ],
)
def test_more_ways_to_ask_about_oneself_are_answered_from_the_facts(question, expected):
    facts = learn(
        ["My dog is called Rex.", "I'm allergic to peanuts.", "I hate jazz.", "I love climbing.", "I'm a nurse."]
    )
    assert fact_answers.answer(question, facts, "en", FRIDAY) == expected


@pytest.mark.parametrize(
    "question, expected",
    [
        ("我现在做什么工作？", "你是护士。"),
        ("我这个周末有什么安排？", "你2026年12月5日开始的那个周末要带乐乐去动物园。"),
    ],
)
def test_more_chinese_ways_to_ask_about_oneself(question, expected):
    facts = learn(["我是护士。", "我周末要带乐乐去动物园。"])
    assert fact_answers.answer(question, facts, "zh", FRIDAY) == expected


def test_a_plan_for_tonight_or_a_weekend_or_a_week_passes_with_its_days():
    monday = datetime.datetime(2026, 12, 7, 10, 0)
    facts = learn(
        ["I'm going to the cinema tonight.", "I'm going to Leeds this weekend.", "I'm going to Paris next week."],
        monday,
    )
    plans = lambda day: fact_answers.answer("What are my plans?", facts, "en", datetime.datetime(2026, 12, day, 9))  # noqa: E731
    assert "cinema" in plans(7) and "Leeds" in plans(7) and "Paris" in plans(7)
    assert "cinema" not in plans(8), "last night's plan is not tonight's"
    assert "Leeds" in plans(13) and "Leeds" not in plans(14), "the weekend ends on its Sunday"
    assert "Paris" in plans(20) and plans(21) == "The plans you told me about have all gone by."
    assert fact_answers.answer("What are my plans?", {}, "en", monday) == "You haven't told me your plans yet."


@pytest.mark.parametrize(
    "text, content",
    [
        ("I grew up in Swansea.", "User grew up in Swansea."),
        ("hi fay, i'm sofia, i'm from valencia originally", "User is from Valencia."),
        ("I was born in Cork but I live in Dublin.", "User is from Cork."),
        ("我老家是成都的", "用户的老家是成都。"),
        ("我是在西安长大的", "用户的老家是西安。"),
        ("I'm from China.", "User is from China."),  # (and no name: "China")
        ("I'm from work.", None),
        ("I'm from the council.", None),
        ("我老家在哪？", None),
    ],
)
def test_where_the_user_is_from_is_kept_apart_from_where_they_live(text, content):
    facts = keys(text)
    assert facts.get("hometown") == content
    if content is not None:
        zh = "用户" in content
        question = "我老家是哪里？" if zh else "Where am I from?"
        answer = fact_answers.answer(question, facts, "zh" if zh else "en", FRIDAY)
        place = content.removeprefix("用户的老家是").split()[-1].strip("。.")
        assert answer is not None and place in answer
    assert fact_answers.answer("Where did I grow up?", {}, "en", FRIDAY) == "You haven't told me where you're from."


@pytest.mark.parametrize(
    "lines, question, language, expected",
    [
        (
            ["My cat is called Marmalade.", "Our cat passed away on Saturday."],
            "What's my cat called?",
            "en",
            "Your late cat was called Marmalade.",
        ),
        (["我的狗叫豆豆。", "我的狗上个星期死了。"], "我的狗叫什么？", "zh", "你的狗叫豆豆，已经去世了。"),
        (["My dog Rex died last week."], "What's my dog called?", "en", "Your late dog was called Rex."),
        (["My mum passed away last year."], "What's my cat called?", "en", "You haven't told me about your cat yet."),
    ],
)
def test_a_death_in_the_family_or_of_a_pet_is_kept_and_the_name_is_said_of_the_past(
    lines, question, language, expected
):
    facts = learn(lines)
    assert fact_answers.answer(question, facts, language, FRIDAY) == expected
    assert not keys("I lost my keys.") and not keys("My phone died.")


@pytest.mark.parametrize(
    "text, content",
    [
        ("跟你说，我换工作了，现在在社区诊所当护士长", "用户在社区诊所当护士长。"),
        ("我换工作了，现在是护士长", "用户是护士长。"),
        ("我在上海教西班牙语", "用户在上海教西班牙语。"),
    ],
)
def test_a_chinese_job_said_after_a_remark_or_with_its_place_is_read(text, content):
    assert keys(text).get("occupation") == content


@pytest.mark.parametrize(
    "text, expected",
    [
        ("honestly i love climbing and i hate jazz lol", {"taste:jazz": "User does not like jazz."}),
        ("我们家养了一只猫，叫咪咪", {"family:cat": "用户的猫叫咪咪。"}),
        ("我们的狗叫旺财", {"family:dog": "用户的狗叫旺财。"}),
    ],
)
def test_a_chat_laugh_is_no_word_and_a_familys_pet_is_the_users(text, expected):
    facts = keys(text)
    assert all(facts.get(k) == v for k, v in expected.items()), facts


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("morning! i'm hannah by the way", "name", "User's name is Hannah."),
        (
            "we live in bath, just me and my cat, a ginger tom called marmalade",
            "family:cat",
            "User's cat is called Marmalade.",
        ),
        (
            "This Thursday I've got an interview for a receptionist job at the dental surgery.",
            "plan:this_thursday",
            "User will have an interview for a receptionist job at the dental surgery on Thursday, 10 December 2026.",
        ),
        (
            "next tuesday we're flying to tokyo",
            "plan:next_tuesday",
            "User is flying to Tokyo on Tuesday, 8 December 2026.",
        ),
    ],
)
def test_what_the_fifth_multi_day_sweep_found_unread(text, key, content):
    assert keys(text, FRIDAY).get(key) == content


def test_a_birthday_on_a_feast_day_a_chinese_hometown_after_home_and_pets_after_a_death():
    assert keys("my birthday's on the 24th, christmas eve, i'll be thirty")["birthday"] == (
        "User's birthday is 24 December."
    )
    assert keys("我家在南京，老家是西安的")["hometown"] == "用户的老家是西安。"
    facts = learn(["We have a cat called Marmalade.", "Our cat passed away on Saturday."])
    assert fact_answers.answer("Do I have any pets?", facts, "en", FRIDAY) == "Your late cat was called Marmalade."
    assert (
        fact_answers.answer("乐乐今天几岁了？", learn(["我儿子叫乐乐。"]), "zh", FRIDAY)
        == "你还没告诉我乐乐多大、生日是哪天。"
    )


def test_a_relatives_wedding_is_kept_as_a_dated_plan_and_answered():
    facts = learn(["oh and my brother sam is getting married on the 16th of january"])
    assert facts["family:brother"] == "User's brother is called Sam."
    assert fact_answers.answer("when is my brother's wedding?", facts, "en", FRIDAY) == (
        "Your brother Sam is getting married on Saturday, 16 January 2027."
    )
    assert fact_answers.answer("When is my sister's wedding?", facts, "en", FRIDAY) == (
        "You haven't told me about your sister's wedding."
    )
    assert keys("I work on the tills at the garden centre.")["workplace"] == "User works at the garden centre."
    assert keys("My daughter's wedding is on 3 June.")["plan:daughter_wedding"] == (
        "User's daughter's wedding is on Thursday, 3 June 2027."
    )


def test_two_pets_with_their_names_are_kept_and_said_back():
    facts = learn(["We have two cats called Pickle and Mouse."])
    assert facts["family:cat"] == "User has two cats, called Pickle and Mouse."
    assert (
        fact_answers.answer("what are my cats called?", facts, "en", FRIDAY)
        == "You have two cats, called Pickle and Mouse."
    )
    assert keys("I've got two dogs, Rex and Fido.")["family:dog"] == "User has two dogs, called Rex and Fido."
    assert fact_answers.answer("who are my kids?", {}, "en", FRIDAY) == "You haven't told me about your kids yet."


def test_a_chinese_relatives_job_and_name_in_one_breath_are_kept_and_answered():
    facts = learn(["我老婆是小学老师，她叫李梅", "我儿子在深圳当程序员"])
    assert facts["family:wife"] == "用户的老婆叫李梅。" and facts["family:wife:job"] == "用户的老婆是小学老师。"
    assert fact_answers.answer("我老婆是做什么的？", facts, "zh", FRIDAY) == "你的老婆是小学老师。"
    assert fact_answers.answer("李梅是做什么的？", facts, "zh", FRIDAY) == "你的老婆是小学老师。"
    assert fact_answers.answer("我儿子在哪里上班？", facts, "zh", FRIDAY) == "你的儿子在深圳当程序员。"
    assert fact_answers.answer("我女儿住在哪里？", facts, "zh", FRIDAY) == "你还没告诉我你女儿住在哪里。"
    assert "family:dog:job" not in keys("我的狗是金毛")


def test_a_chinese_childs_coming_birthday_said_with_he_after_the_day():
    facts = learn(["我儿子叫乐乐，下个星期三他就满十岁了"])
    assert facts["family:son:age"] == "用户的儿子在2026年12月9日（星期三）满10岁。"
    assert "12月9日" in fact_answers.answer("乐乐哪天过生日？", facts, "zh", FRIDAY)


@pytest.mark.parametrize(
    "text, expected",
    [
        # an allergy said by what it does (the sixth round's sets: none of these was kept)
        ("tree nuts would kill me. cashews almonds walnuts all of it, i carry an epipen", {"health:allergy:tree_nut"}),
        ("eggs are a no-go for me, i swell right up if i have any", {"health:allergy:egg"}),
        ("shellfish makes me ill", {"health:allergy:shellfish"}),
        ("i can't eat fish, any kind, i'm allergic", {"health:allergy:fish", "health:avoid:fish"}),
        ("this traffic would kill me", set()),
        ("我有痛风，海鲜啤酒都不让碰", {"health:avoid:seafood", "health:avoid:alcohol", "health:condition:gout"}),
        ("海鲜我不能吃", {"health:avoid:seafood"}),
        ("我一吃芒果就过敏", {"health:allergy:芒果"}),
    ],
)
def test_an_allergy_or_a_food_to_avoid_said_in_other_words_is_kept(text, expected):
    assert {k for k in keys(text) if k.startswith("health:")} == expected


def test_an_allergy_said_in_other_words_keeps_the_food_out_of_a_suggestion():
    facts = learn(["tree nuts would kill me, i carry an epipen"])
    guard = ReplyGuard(avoided=health.avoided_keys(list(safety_facts(facts)), household=True), facts=facts)
    assert guard.check("How about some cashews?").text is None
    assert fact_answers.answer("what am i allergic to?", facts, "en", FRIDAY) == "You're allergic to tree nuts."


@pytest.mark.parametrize(
    "text, key, content",
    [
        (
            "i'm a dundee lad originally, but we've been up in inverness since the nineties",
            "hometown",
            "User is from Dundee.",
        ),
        ("grew up in grimsby tho", "hometown", "User grew up in Grimsby."),
        ("I came over from Kingston, Jamaica in 1962.", "hometown", "User is from Kingston, Jamaica."),
        ("the wife, morag, she does the garden", "family:wife", "User's wife is called Morag."),
        ("hiya!! imogen here :)", "name", "User's name is Imogen."),
        ("my brother conrad's birthday is the 3rd of may", "family:brother", "User's brother is called Conrad."),
        ("i'm a nurse", "occupation", "User is a nurse."),
    ],
)
def test_what_the_sixth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content


@pytest.mark.parametrize(
    "question, expected",
    [
        ("whens ezra's birthday again", "Ezra's birthday is on 20 April; the next one is Tuesday, 20 April 2027."),
        ("what did i say i'm allergic to?", "You're allergic to fish."),
        ("what fruit am i allergic to?", "You're allergic to fish."),
        ("what do i do these days?", "You are a locksmith."),
        ("do i still have a budgie?", "Your late budgie was called Kiwi."),
        ("what do i do now?", None),
    ],
)
def test_the_sixth_rounds_questions_are_answered_from_the_facts(question, expected):
    facts = learn(
        [
            "My partner Ezra's birthday is 20 April.",
            "I'm allergic to fish.",
            "I'm a locksmith.",
            "My budgie is called Kiwi.",
            "Our budgie died on Saturday.",
        ]
    )
    assert fact_answers.answer(question, facts, "en", FRIDAY) == expected


def test_a_day_of_the_month_alone_is_this_months_or_the_next():
    from fay_ros.text.when import resolve_day

    assert resolve_day("on the 9th", FRIDAY) == datetime.date(2026, 12, 9)
    assert resolve_day("the 2nd", FRIDAY) == datetime.date(2027, 1, 2)
    assert keys("my daughter tia turns eleven on the 9th")["family:daughter:age"] == (
        "User's daughter Tia turns 11 on Wednesday, 9 December 2026."
    )


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("good morning. wendell's my name, wendell brooks", "name", "User's name is Wendell."),
        ("that's my name", "name", None),
        (
            "i'm the caretaker at a primary school in nottingham, been there since 2009",
            "occupation",
            "User is the caretaker at a primary school in nottingham.",
        ),
        ("my wife beverley and i have a budgie named marley", "family:wife", "User's wife is called Beverley."),
        ("my wife beverley and i have a budgie named marley", "family:budgie", "User's budgie is called Marley."),
        ("well, we've sold the house and moved to derby, to be near our daughter", "home", "User lives in Derby."),
    ],
)
def test_what_the_sixth_rounds_second_run_found_unread(text, key, content):
    assert keys(text).get(key) == content


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "ugh, also our rabbit clementine keeps chewing the phone cables",
            {"family:rabbit": "User's rabbit is called Clementine."},
        ),
        ("my son jake plays rugby", {"family:son": "User's son is called Jake."}),
        ("my dog loves walks", {"family:dog:likes": "User's dog likes walks."}),  # (what it likes, no name)
        ("my sister likes cats", {"family:sister:likes": "User's sister likes cats."}),
    ],
)
def test_a_lowercase_name_before_what_it_does_is_read_and_a_verb_is_no_name(text, expected):
    assert {k: v for k, v in keys(text).items() if k.startswith("family:")} == expected


def test_which_food_cant_i_have_is_the_allergy_question():
    facts = learn(["tree nuts would kill me"])
    assert fact_answers.answer("which nuts can't i have", facts, "en", FRIDAY) == "You're allergic to tree nuts."


# -- what a seventh round of new conversations found unread (each with a variant of its own) -----


@pytest.mark.parametrize(
    "text, key, content",
    [
        # names: a surname after "my name's", "X here" after any greeting, "X for short",
        # "everyone calls me X", a greeting with a vocative, a supposing part after the name
        ("hi, my name's helen okafor", "name", "User's name is Helen Okafor."),
        ("my name is arjun mehta", "name", "User's name is Arjun Mehta."),
        ("sup, jamal here", "name", "User's name is Jamal."),
        ("evening all. gwen here", "name", "User's name is Gwen."),
        ("hi there, i'm patricia, pat for short", "name", "User's name is Pat."),
        ("hello dear, i'm beatrice, but everyone calls me bea", "name", "User's name is Bea."),
        ("morning! ray here, raymond if my mother's listening", "name", "User's name is Ray."),
        ("hi, i'm lena, from hamburg", "hometown", "User is from Hamburg."),
        # allergies with no subject, a relative's told by rank, a household kept free of a food
        (
            "allergic to shellfish btw. prawns, crab, lobster, the lot",
            "health:allergy:shellfish",
            "User is allergic to shellfish.",
        ),
        ("also allergic to sesame", "health:allergy:sesame", "User is allergic to sesame."),
        (
            "my youngest, david, has a peanut allergy, so we keep the house nut free",
            "health:allergy:peanut:child",
            "User's child David is allergic to peanuts.",
        ),
        (
            "ours is a dairy-free home because of my husband",
            "health:avoid:milk:household",
            "User's home is kept free of milk.",
        ),
        ("my eldest is allergic to eggs", "health:allergy:egg:child", "User's child is allergic to eggs."),
        # pets, work, homes
        ("got a cat called biscuit too lol", "family:cat", "User's cat is called Biscuit."),
        ("oh and got a hamster named nibbles", "family:hamster", "User's hamster is called Nibbles."),
        ("i taught piano for forty years before i retired", "occupation:former", "User used to teach piano."),
        ("I drove a cab for thirty years", "occupation:former", "User used to drive a cab."),
        (
            "i'm a nurse on nights at the royal infirmary in edinburgh",
            "occupation",
            "User is a nurse on nights at the royal infirmary in edinburgh.",
        ),
        ("actually we moved to bath last month, i keep forgetting", "home", "User lives in Bath."),
        ("i live in a little bungalow in harrogate with my cat, pudding", "home", "User lives in Harrogate."),
        ("I live in a flat near Leeds with two lads from work", "home", "User lives near Leeds."),
        # a relative's big day on a day of the month, a birthday by its number
        (
            "my sister aisha's getting married on the 19th",
            "plan:sister_wedding",
            "User's sister Aisha is getting married on Saturday, 19 December 2026.",
        ),
        (
            "my mum's 70th is on the 25th, we're doing a meal",
            "family:mother:age",
            "User's mum turns 70 on Friday, 25 December 2026.",
        ),
        (
            "my dad's eightieth is on the 12th",
            "family:father:age",
            "User's dad turns 80 on Saturday, 12 December 2026.",
        ),
        # Chinese: a breed for the pet, a nickname after the relation, clauses that leave out 我
        ("我们家还养了一只金毛，叫旺财", "family:dog", "用户的狗叫旺财。"),
        ("我家有只英短，叫团子", "family:cat", "用户的猫叫团子。"),
        ("我孙子小宝下个月上小学", "family:grandson", "用户的孙子叫小宝。"),
        ("我女儿朵朵特别爱画画", "family:daughter", "用户的女儿叫朵朵。"),
        ("老伴儿前年走了，现在一个人住", "family:partner:passed", "用户的老伴儿去世了。"),
        ("老家是山东青岛的，年轻时当过海员", "hometown", "用户的老家是山东青岛。"),
        ("老家是山东青岛的，年轻时当过海员", "occupation:former", "用户以前当过海员。"),
        ("早上好，我叫张秀英，退休老师", "occupation:former", "用户退休前是老师。"),
        ("我叫刘国强，今年六十八了", "age", "用户68岁（2026年12月4日时）。"),
        ("我在北京学中文，已经一年了", "study", "用户在北京学中文。"),
        ("我外孙女叫乐乐，下周三过生日", "family:granddaughter:birthday", "用户的外孙女乐乐的生日是12月9日。"),
        ("我爸爸这个月二十号过生日", "family:father:birthday", "用户的爸爸的生日是12月20日。"),
    ],
)
def test_what_the_seventh_round_found_unread(text, key, content):
    assert keys(text).get(key) == content


@pytest.mark.parametrize(
    "text",
    [
        "我儿子小时候很调皮",  # (小时候: no son called 小时)
        "我女儿天天玩手机",  # (天天: every day)
        "If I had a dog, I'd call it Rex",
        "I live in a small village near York",  # (a village is where they live, as said)
        "nobody here knows me",
        "dad here is watching the match",
    ],
)
def test_the_seventh_rounds_look_alikes_name_no_one(text):
    found = keys(text)
    assert not any(k == "name" or k.startswith("family:") and not k.endswith(":passed") for k in found), found
    assert found.get("home", "User lives in a small village near York.") == "User lives in a small village near York."


def test_the_seventh_rounds_questions():
    facts = learn(
        [
            "sup, jamal here",
            "i'm a nurse on nights at the royal infirmary in edinburgh",
            "i drive a bus in glasgow",
            "i'm vegetarian, no meat, no fish",
            "我的室友叫小林，她是日本人",
            "我在北京学中文",
            "hi, i'm lena, from hamburg",
        ]
    )
    assert fact_answers.answer("what do i do?", facts, "en", FRIDAY) == "You drive a bus in glasgow."
    assert fact_answers.answer("what do i drive for a living?", facts, "en", FRIDAY) == "You drive a bus in glasgow."
    assert fact_answers.answer("what do i do now?", facts, "en", FRIDAY) is None
    assert fact_answers.answer("do i eat meat?", facts, "en", FRIDAY).startswith("No")
    assert "小林" in fact_answers.answer("what's my roommate's name?", facts, "en", FRIDAY)
    assert fact_answers.answer("我在学什么？", facts, "zh", FRIDAY) == "你在北京学中文。"
    assert "Hamburg" in fact_answers.answer("我从哪里来？", facts, "zh", FRIDAY)
    health = learn(["我血压高，医生让我少吃盐"])
    assert fact_answers.answer("医生让我注意什么？", health, "zh", FRIDAY) == "你有高血压。"


def test_whose_birthday_is_it_today_reads_the_familys_birthdays():
    facts = learn(
        [
            "我外孙女叫乐乐，下周三过生日",
            "my brother conrad's birthday is the 9th of december",
            "my mum's 70th is on the 11th",
        ]
    )
    wednesday = datetime.datetime(2026, 12, 9, 20, 0)
    assert fact_answers.answer("whose birthday is it today?", facts, "en", wednesday) == (
        "It's your granddaughter 乐乐 and your brother Conrad's birthday today!"
    )
    assert fact_answers.answer("今天是谁过生日？", facts, "zh", wednesday) == "今天是你孙女乐乐和你兄弟Conrad的生日！"
    assert fact_answers.answer("is it anyone's birthday tomorrow?", facts, "en", wednesday) == (
        "No one whose birthday you've told me has it tomorrow."
    )
    friday = datetime.datetime(2026, 12, 11, 9, 0)
    assert fact_answers.answer("who has a birthday today?", facts, "en", friday) == "It's your mother's birthday today!"


@pytest.mark.parametrize(
    "question, recalled, expected",
    [
        ("what car do i drive?", [], "You haven't told me what car you drive."),
        ("What team do I support?", [], "You haven't told me what team you support."),
        ("how many cats do i have?", [], "You haven't told me how many cats you have."),
        ("do i have a bike?", [], "You haven't told me whether you have a bike."),
        ("我开什么车？", [], "你还没告诉我这个呢。"),
        # what they said is there: the model answers from it
        ("what car do i drive?", ["2026-12-01 user: my old car finally died"], None),
        ("what instruments do i play?", ["2026-12-01 user: I play the cello on Sundays"], None),
        ("我开什么车？", ["用户说：我开一辆小电车"], None),
        # advice, requests and what other answers read
        ("what should i cook tonight?", [], None),
        ("what do i need for the trip?", [], None),
        ("can i have a biscuit?", [], None),
        ("how many kids do i have?", [], "You haven't told me how many kids you have."),
    ],
)
def test_a_question_about_ones_own_life_that_nothing_answers_is_said_to_be_untold(question, recalled, expected):
    facts = learn(["I'm a vet."])
    assert fact_answers.not_told(question, facts, recalled) == expected


def test_a_family_question_is_left_to_the_family_answer():
    facts = learn(["my son tom is nine"])
    assert fact_answers.not_told("how many kids do i have?", facts, []) is None
    assert fact_answers.answer("what's my eldest son called?", facts, "en", FRIDAY) == "Your son is called Tom."


# -- what an eighth round of new conversations found unread (each with a variant of its own) ------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("good evening. oksana, pleased to meet you", "name", "User's name is Oksana."),
        ("Rahul, nice to meet you", "name", "User's name is Rahul."),
        ("the wife's called isla and we've three kids", "family:wife", "User's wife is called Isla."),
        ("the wife's called isla and we've three kids", "family:child", "User has three kids."),
        ("the husband is called Derek", "family:husband", "User's husband is called Derek."),
        ("fergus here. i farm sheep up near oban", "occupation", "User farms sheep near Oban."),
        ("I keep bees", "occupation", "User keeps bees."),
        ("i work part time in the library in perth", "workplace", "User works in the library."),
        (
            "i've stopped working at the library, i'm fully retired now",
            "workplace",
            "User no longer works at the library.",
        ),
        ("i've stopped working at the library, i'm fully retired now", "occupation", "User is retired."),
        ("I left my job at the bank last month", "workplace", "User no longer works at the bank."),
        ("now i'm retired in leicester", "home", "User lives in Leicester."),
        ("hey, i'm dev, second year at manchester doing physics", "study", "User is studying physics at Manchester."),
        ("I'm studying law at Leeds", "study", "User is studying law at Leeds."),
        (
            "i live with two flatmates, sam and priya",
            "family:roommate",
            "User lives with two flatmates, Sam and Priya.",
        ),
        (
            "we live with three housemates, jo, kit and ravi",
            "family:roommate",
            "User lives with three housemates, Jo, Kit and Ravi.",
        ),
        (
            "my son andriy works as a software developer in berlin",
            "family:son:job",
            "User's son Andriy works as a software developer in berlin.",
        ),
        (
            "my granddaughter sofia is five, she starts ballet on saturday",
            "plan:granddaughter_saturday",
            "User's granddaughter Sofia starts ballet on Saturday, 5 December 2026.",
        ),
        (
            "my partner sam is away in lisbon until friday",
            "plan:partner_friday",
            "User's partner Sam is away in Lisbon until Friday, 4 December 2026.",
        ),
        (
            "we're off to skye this friday for the weekend",
            "plan:this_friday",
            "User is going to Skye on Friday, 4 December 2026.",
        ),
        (
            "got my driving test next monday, bricking it",
            "plan:next_monday",
            "User will have their driving test on Monday, 7 December 2026.",
        ),
        ("I walk the dog every morning", "routine:every_morning", "User walks the dog every morning."),
        ("on sundays we go to chapel", "routine:on_sundays", "User goes to chapel on Sundays."),
        (
            "my grandson finn plays football every saturday morning",
            "routine:grandson_every_saturday_morning",
            "User's grandson Finn plays football every Saturday morning.",
        ),
        ("我每天早上去公园遛狗", "routine:每天早上", "用户每天早上去公园遛狗。"),
        ("我今年七十二，退休前是中学校长", "age", "用户72岁（2026年12月4日时）。"),
        ("我闺女叫赵敏，在上海工作", "family:daughter:job", "用户的闺女在上海工作。"),
        ("我老公在香港上班，周末才回来", "family:husband:job", "用户的老公在香港上班。"),
        ("我孙女叫甜甜，在北京读大学", "family:granddaughter:job", "用户的孙女在北京读大学。"),
        # a line that changes language at a comma: each part read in its own
        ("hi, i'm sam, 我在上海教英语", "name", "User's name is Sam."),
        ("hi, i'm sam, 我在上海教英语", "occupation", "用户在上海教英语。"),
        ("i'm allergic to cats, 一碰猫就打喷嚏", "health:allergy:cats", "User is allergic to cats."),
        ("我女朋友叫小雨, she's a doctor", "family:girlfriend:job", "User's girlfriend is a doctor."),
    ],
)
def test_what_the_eighth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content


def test_a_plan_changed_instead_replaces_the_one_said_before():
    facts = learn(
        ["we're off to skye this friday for the weekend", "actually, change of plan, we're going to mull instead"]
    )
    assert [v for k, v in facts.items() if k.startswith("plan:")] == [
        "User is going to mull on Friday, 4 December 2026."
    ]
    assert "Skye" not in fact_answers.answer("where are we going this weekend?", facts, "en", FRIDAY)


def test_a_condition_is_no_food_and_a_stopped_job_no_taste():
    found = keys("i can't have gluten, coeliac since i was a lad")
    assert "health:avoid:gluten" in found and not any("coeliac" in k for k in found if k.startswith("health:avoid")), (
        found
    )
    assert not any(k.startswith("taste:") for k in keys("i've stopped working at the library")), "no taste"


def test_the_eighth_rounds_questions():
    facts = learn(
        [
            "my granddaughter sofia is five, she starts ballet on saturday",
            "my son andriy works as a software developer in berlin",
            "my partner sam is away in lisbon until friday",
            "the wife's called isla and we've three kids",
            "I walk the dog every morning",
            "my grandson finn plays football every saturday morning",
            "my son andriy phones on sundays",
            "hey, i'm dev, second year at manchester doing physics",
            "我每天早上去公园遛狗",
        ]
    )
    ask = lambda q: fact_answers.answer(q, facts, "zh" if any("\u4e00" <= c <= "\u9fff" for c in q) else "en", FRIDAY)  # noqa: E731
    assert (
        ask("when does sofia start ballet?") == "Your granddaughter Sofia starts ballet on Saturday, 5 December 2026."
    )
    assert ask("where does my son work?") == "Your son Andriy works as a software developer in berlin."
    assert ask("where's sam this week?") == "Your partner Sam is away in Lisbon until Friday, 4 December 2026."
    assert ask("how many kids do i have?") == "You have three kids."
    assert ask("what do i do every morning?") == "You walk the dog every morning."
    assert ask("what does finn do on saturdays?") == "Your grandson Finn plays football every Saturday morning."
    assert ask("which day does my son ring me?") == "Your son Andriy phones on Sundays."
    assert ask("which uni am i at?") == "You are studying physics at Manchester."
    assert ask("我每天早上干什么？") == "你每天早上去公园遛狗。"
    assert (
        fact_answers.answer("我孙女在哪儿读书？", learn(["我孙女叫甜甜，在北京读大学"]), "zh", FRIDAY)
        == "你的孙女在北京读大学。"
    )
    assert ask("what does finn do?") == "You haven't told me what Finn does."


@pytest.mark.parametrize(
    "text, key, content",
    [
        # what the sixth round still left unread, each with a variant of its own
        ("big news, i finished at the school on friday.", "workplace", "User no longer works at the school."),
        ("I'm teaching yoga part time now", "occupation", "User teaches yoga part time now."),
        ("so like, i run a little flower shop in ludlow", "occupation", "User runs a little flower shop in ludlow."),
        ("I run a small bakery", "occupation", "User runs a small bakery."),
        (
            "actually scratch the locksmith thing, i started at a bike shop on monday, fixing bikes now",
            "occupation",
            "User fixes bikes.",
        ),
        ("i started at the garden centre last week", "workplace", "User works at the garden centre."),
        ("我家还养了一只乌龟，叫慢慢", "family:tortoise", "用户的乌龟叫慢慢。"),
        ("我们家有两条金鱼", "family:goldfish", "用户有两条金鱼。"),
        ("唉，我养的那只八哥上礼拜死了", "family:bird:passed", "用户的八哥去世了。"),
        ("去年跟老伴搬到南宁来了，离儿子近一点", "home", "用户住在南宁。"),
        ("我是哈尔滨人，不过已经在昆明住了五年了", "hometown", "用户的老家是哈尔滨。"),
        ("我是哈尔滨人，不过已经在昆明住了五年了", "home", "用户住在昆明。"),
        ("我是印度人，从浦那来的，现在在武汉读研究生", "hometown", "用户的老家是浦那。"),
        ("我是印度人，从浦那来的，现在在武汉读研究生", "study", "用户在武汉读研究生。"),
        ("那个……我姓陈，陈志强，已经退休了", "name", "用户的名字是陈志强。"),
        ("那个……我姓陈，陈志强，已经退休了", "occupation", "用户已经退休了。"),
        ("以前在天津港开吊车，干了三十多年", "occupation:former", "用户以前在天津港开吊车。"),
        ("我以前在县医院管药房", "occupation:former", "用户以前在县医院管药房。"),
        ("我儿子叫陈亮，在这边当警察", "family:son:job", "用户的儿子在这边当警察。"),
    ],
)
def test_what_the_sixth_round_still_left_unread(text, key, content):
    assert keys(text).get(key) == content


@pytest.mark.parametrize("text", ["我是好人", "我是病人", "我是退休的人", "我们一个人住"])
def test_a_person_of_a_kind_is_no_hometown(text):
    assert "hometown" not in keys(text)


def test_where_one_is_from_asked_in_more_ways():
    facts = learn(["i'm a dundee lad originally, but we've been up in inverness since the nineties"])
    assert fact_answers.answer("where am i from originally?", facts, "en", FRIDAY) == "You are from Dundee."
    assert fact_answers.answer("do you know where i grew up?", {}, "en", FRIDAY).startswith("You haven't told me")
    facts = learn(["我是印度人，从浦那来的，现在在武汉读研究生"])
    assert fact_answers.answer("我在哪个城市读书？", facts, "zh", FRIDAY) == "你在武汉读研究生。"


def test_a_grandchilds_birthday_told_by_the_day_of_the_month_and_the_marriage_home():
    monday = datetime.datetime(2027, 3, 1, 9, 0)
    facts = learn(["我老家在大连，嫁到贵阳来的", "我外孙叫小石头，这个月十二号满五岁"], monday)
    assert facts["home"] == "用户住在贵阳。"
    assert facts["family:grandson:age"] == "用户的外孙小石头在2027年3月12日（星期五）满5岁。"
    birthday = datetime.datetime(2027, 3, 12, 9, 0)
    assert fact_answers.answer("今天是谁过生日？", facts, "zh", birthday) == "今天是你孙子小石头的生日！"
    assert fact_answers.answer("我外孙哪天过生日？", facts, "zh", birthday) == "小石头今天满五岁！"
    # a school's name is no study ("在老年大学教书法" teaches; "在学画画" studies)
    assert "study" not in keys("我现在在老年大学教书法")
    assert (
        fact_answers.answer("我现在做什么？", learn(["我现在在老年大学教书法"]), "zh", FRIDAY) == "你在老年大学教书法。"
    )


# -- what a ninth round of new conversations found (each with a variant of its own) -------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("hello there young robot, harold's the name", "name", "User's name is Harold."),
        ("hey fay! it's chloe", "name", "User's name is Chloe."),
        ("morning fay, it's tom", "name", "User's name is Tom."),
        ("i'm kwame, i drive for a delivery firm", "occupation", "User drives for a delivery firm."),
        ("originally from accra but i've lived in birmingham twenty years", "hometown", "User is from Accra."),
        ("originally from accra but i've lived in birmingham twenty years", "home", "User lives in Birmingham."),
        ("no pork for me, i'm muslim", "health:avoid:pork", "User is Muslim: no pork or alcohol."),
        ("no pork for me", "health:avoid:pork", "User does not eat pork."),
        ("i can't eat anything with nuts in, bad allergy", "health:avoid:tree_nut", "User cannot eat nuts."),
        ("i'm allergic to penicillin and to kiwi", "health:allergy:kiwi", "User is allergic to kiwi."),
        ("我不能吃海鲜，一吃就起疹子", "health:avoid:seafood", "用户不能吃海鲜。"),
        ("早上好，我叫吴美芳，在幼儿园做保育员", "occupation", "用户在幼儿园做保育员。"),
        ("我儿子在上海读大学，学的是计算机", "family:son:job", "用户的儿子在上海读大学，学的是计算机。"),
    ],
)
def test_what_the_ninth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content


@pytest.mark.parametrize("text", ["hi! it's raining", "Hello! It's Monday", "hey fay! it's me", "I'm Muslim"])
def test_its_weather_a_day_or_a_faith_is_no_name(text):
    assert "name" not in keys(text)


def test_seafood_keeps_fish_and_shellfish_out_and_says_seafood():
    from fay_ros.dialogue import food_ideas
    from fay_ros.memory import health

    found = [f.key for f in extract_self_facts("I can't eat seafood", FRIDAY)]
    assert set(health.avoided_keys(found, household=True)) == {"seafood", "fish", "shellfish"}
    said = food_ideas.suggest("what should I cook tonight?", found, zh=False, seed=2)
    assert said.endswith("Both are free of seafood.") and not re.search(r"salmon|fish|prawn", said, re.I), said
    assert ReplyGuard(avoided=health.avoided_keys(found)).check("How about some grilled salmon?").text is None


def test_a_routine_is_acknowledged_and_answers_when_someone_comes():
    facts = learn(["my daughter Carys visits on wednesdays"])
    assert fact_answers.answer("when does carys come to see me?", facts, "en", FRIDAY) == (
        "Your daughter Carys visits on Wednesdays."
    )
    assert fact_answers.acknowledgement(extract_self_facts("I walk the dog every morning", FRIDAY), False) == (
        "Got it — you walk the dog every morning. I'll keep that in mind."
    )
    assert fact_answers.answer("where's my salon?", learn(["I run a little salon in Galway"]), "en", FRIDAY)


def test_a_relative_named_before_is_read_by_name_alone():
    # "we live … with my wife funmi and our little girl tolu", then each by name, lowercase
    facts = learn(
        [
            "we live in a terrace in leicester, me, my wife funmi and our little girl tolu",
            "tolu starts school next monday",
            "funmi can't eat shellfish",
        ]
    )
    assert facts["health:avoid:shellfish:wife"] == "User's wife Funmi cannot eat shellfish."
    assert facts["plan:daughter_next_monday"] == "User's little girl Tolu starts school on Monday, 7 December 2026."
    assert "taste:tolu" in keys("I love tolu"), "a name alone with no relative named before is no relative"


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("我们下个月去日本旅游", "plan:下个月", "用户2027年1月要去日本旅游。"),
        (
            "i'm diabetic and i've got high blood pressure",
            "health:condition:high_blood_pressure",
            "User has high blood pressure.",
        ),
    ],
)
def test_what_the_tenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content


def test_a_remark_after_an_allergy_is_no_allergen():
    found = {
        f.key
        for f in extract_self_facts("he's allergic to eggs, poor lamb", FRIDAY, before="my grandson oliver is five")
    }
    # (the allergy is his; his name, known from before, is not said again as new)
    assert found == {"health:allergy:egg:grandson"}, found
    assert (
        fact_answers.answer("what health problems have i got?", learn(["I have asthma"]), "en", FRIDAY)
        == "You have asthma."
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "i'm eighty one, widower, my edna passed four years ago",
            {"family:wife": "User's late wife was called Edna."},
        ),
        ("I'm a widow, my Frank died in 2019", {"family:husband": "User's late husband was called Frank."}),
        # passing an exam is no death, and a past-tense verb is no name
        ("my son passed his exams", {}),
        ("my daughter amy passed her driving test", {"family:daughter": "User's daughter is called Amy."}),
        ("my dog died last week", {"family:dog:passed": "User's dog has died."}),
    ],
)
def test_a_widowers_late_wife_by_name_and_no_death_in_a_passed_exam(text, expected):
    assert {k: v for k, v in keys(text).items() if k.startswith("family:")} == expected


def test_whose_birthday_counts_the_users_own_as_their_birthday_question_does():
    wednesday = datetime.datetime(2026, 12, 9, 10, 0)
    own = learn(["my birthday is the 9th of december"])
    assert fact_answers.answer("whose birthday is it today?", own, "en", wednesday) == "It's your birthday today!"
    both = learn(["my birthday is the 9th of december", "my brother conrad's birthday is the 9th of december"])
    assert fact_answers.answer("whose birthday is it today?", both, "en", wednesday) == (
        "It's your birthday today, and your brother Conrad's too!"
    )
    assert fact_answers.answer("今天是谁过生日？", both, "zh", wednesday) == "今天是你自己和你兄弟Conrad的生日！"
    # an age told with its day says the birthday too ("I'll be seventy on Wednesday")
    turning = learn(["I'll be seventy on wednesday"])
    assert fact_answers.answer("whose birthday is it today?", turning, "en", wednesday) == "It's your birthday today!"


# -- what an eleventh round of new conversations found (each with a variant of its own) ----------


@pytest.mark.parametrize(
    "text, key, content",
    [
        # a name after 我是 that reads as one, and the full name after 我姓…叫
        ("嗨，我是婷婷，在上海做设计师", "name", "用户的名字是婷婷。"),
        ("我是刘建华，在一家工厂当工程师", "name", "用户的名字是刘建华。"),
        ("大家好，我是小美", "name", "用户的名字是小美。"),
        ("你好，我姓王，叫王建国", "name", "用户的名字是王建国。"),
        ("我姓李，名字叫李秀兰", "name", "用户的名字是李秀兰。"),
        ("i'm kwame, nice to meet you", "name", "User's name is Kwame."),
        ("hello, i am wen, pleased to meet you", "name", "User's name is Wen."),
        # a relative's plan by any verb in -ing or after "will", and "'s" after a name
        (
            "my brother rohan is getting married next tuesday",
            "plan:brother_next_tuesday",
            "User's brother Rohan is getting married on Tuesday, 8 December 2026.",
        ),
        (
            "my son david is taking me to the garden centre on thursday",
            "plan:son_thursday",
            "User's son David is taking them to the garden centre on Thursday, 10 December 2026.",
        ),
        ("my niece will visit on sunday", "plan:niece_sunday", "User's niece will visit on Sunday, 6 December 2026."),
        (
            "my daughter Karen's coming over on Sunday",
            "plan:daughter_sunday",
            "User's daughter Karen is coming over on Sunday, 6 December 2026.",
        ),
        ("my son is visiting on friday", "plan:son_friday", "User's son is visiting on Friday, 4 December 2026."),
        (
            "my husband's got a hospital appointment tomorrow",
            "plan:husband_tomorrow",
            "User's husband has got a hospital appointment on Saturday, 5 December 2026.",
        ),
        (
            "my wife anna is expecting our first baby in march",
            "plan:wife_in_march",
            "User's wife Anna is expecting their first baby in March 2027.",
        ),
        # a routine on a day's evenings, a neighbour's
        (
            "i play badminton on thursday evenings",
            "routine:on_thursday_evenings",
            "User plays badminton on Thursday evenings.",
        ),
        (
            "my neighbour joan pops in every afternoon",
            "routine:neighbour_every_afternoon",
            "User's neighbour Joan pops in every afternoon.",
        ),
        ("my aunt mary lives in cork", "family:aunt", "User's aunt is called Mary."),
        ("我邻居叫老张", "family:neighbour", "用户的邻居叫老张。"),
        # what the doctor ordered is the user's own, and red meat is not all meat
        ("i've got gout so the doctor says no red meat", "health:condition:gout", "User has gout."),
        ("i've got gout so the doctor says no red meat", "health:avoid:red_meat", "User cannot eat red meat."),
        ("my GP told me to cut out salt", "health:avoid:salt", "User cannot eat salt."),
        ("i'm not allowed red meat", "health:avoid:red_meat", "User cannot eat red meat."),
        ("i'm not supposed to eat sugar", "health:avoid:sugar", "User cannot eat sugar."),
        ("我不能吃红肉", "health:avoid:red_meat", "用户不能吃红肉。"),
    ],
)
def test_what_the_eleventh_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


@pytest.mark.parametrize(
    "text",
    [
        "我是老师",
        "我是程序员。",
        "我是江苏人",
        "我是高中生",
        "我是妈妈",
        "我是白领",
        "我是高兴",
        "我是认真的",
        "我是谁",
        "i'm so tired, nice to meet you",
    ],
)
def test_what_someone_is_after_wo_shi_is_no_name(text):
    assert "name" not in keys(text), keys(text)


def test_a_diet_food_said_with_an_allergys_words_is_avoided_not_an_allergy():
    assert keys("i can't have red meat") == {"health:avoid:red_meat": "User cannot have red meat."}
    assert keys("pork makes me sick") == {"health:avoid:pork": "User cannot have pork."}
    assert keys("I can't have peanuts")["health:allergy:peanut"] == "User is allergic to peanuts."
    # a hedge after "so" leaves what came before it standing
    assert keys("I've got gout so my wife says I'm grumpy") == {"health:condition:gout": "User has gout."}


def test_red_meat_keeps_beef_lamb_and_pork_out_but_not_chicken_or_fish():
    avoided = ("red_meat",)
    assert health.offered_food("a beef stew", avoided) and health.offered_food("lamb chops", avoided)
    assert health.offered_food("roast chicken", avoided) is None
    assert health.offered_food("baked salmon", avoided) is None
    idea = food_ideas.suggest("what should i cook for sunday lunch?", ["health:avoid:red_meat"], False)
    assert idea is not None and idea.endswith("Both are free of red meat.") and "pork" not in idea, idea


def test_the_eleventh_rounds_questions():
    facts = learn(
        [
            "my daughter karen lives in bristol",
            "she's coming over on sunday with the grandkids",
            "my brother rohan is getting married next tuesday",
            "my son david is taking me to the garden centre on thursday",
            "my wife anna is expecting our first baby in march",
            "my neighbour joan pops in every afternoon",
        ]
    )
    asked = {
        "when is karen coming?": "Your daughter Karen is coming over on Sunday, 6 December 2026.",
        "when's karen coming?": "Your daughter Karen is coming over on Sunday, 6 December 2026.",
        "when is rohan's wedding?": "Your brother Rohan is getting married on Tuesday, 8 December 2026.",
        "where is david taking me?": "Your son David is taking you to the garden centre on Thursday, 10 December 2026.",
        "who's taking me to the garden centre?": (
            "Your son David is taking you to the garden centre on Thursday, 10 December 2026."
        ),
        "when's the baby due?": "Your wife Anna is expecting your first baby in March 2027.",
        "when is the baby due?": "Your wife Anna is expecting your first baby in March 2027.",
        "who pops in every afternoon?": "Your neighbour Joan pops in every afternoon.",
        "who is joan?": "Your neighbour is called Joan.",
    }
    for question, expected in asked.items():
        assert fact_answers.answer(question, facts, "en", FRIDAY) == expected, question
    for question in ("who won the match?", "who is the prime minister?", "when is the party?"):
        assert fact_answers.answer(question, facts, "en", FRIDAY) is None, question


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("i'm a plumber, moved here from poland ten years ago", "hometown", "User moved here from Poland."),
        ("we emigrated from Hong Kong in 1997", "hometown", "User is from Hong Kong."),
        ("这周六我们全家去爬泰山", "plan:这周六", "用户2026年12月5日（星期六）要去爬泰山。"),
        ("周六我和老婆去看电影", "plan:周六", "用户2026年12月5日（星期六）要去看电影。"),
        ("my wife sheila loves gardening", "family:wife:likes", "User's wife Sheila likes gardening."),
        ("my grandson is mad about dinosaurs", "family:grandson:likes", "User's grandson likes dinosaurs."),
        ("我老伴叫李秀英，她喜欢跳广场舞", "family:partner:likes", "用户的老伴喜欢跳广场舞。"),
        ("我儿子叫刘洋，今年上高三", "family:son:school", "用户的儿子在上高三。"),
        ("我孙女在读初二", "family:granddaughter:school", "用户的孙女在上初二。"),
        ("my son is in year 10", "family:son:school", "User's son is in year 10."),
    ],
)
def test_what_the_eleventh_round_found_unread_too(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_relatives_likes_and_school_year_and_a_home_not_told_beside_a_job_in_a_city():
    en = learn(["my wife sheila loves gardening", "my son is in year 10"])
    assert fact_answers.answer("what does my wife like doing?", en, "en", FRIDAY) == (
        "Your wife Sheila likes gardening."
    )
    assert fact_answers.answer("what are my wife's hobbies?", en, "en", FRIDAY) == "Your wife Sheila likes gardening."
    assert fact_answers.answer("what year is my son in?", en, "en", FRIDAY) == "Your son is in year 10."
    assert fact_answers.answer("what does my daughter like?", en, "en", FRIDAY) == (
        "You haven't told me what your daughter likes."
    )
    zh = learn(["我老伴叫李秀英，她喜欢跳广场舞", "我儿子叫刘洋，今年上高三"])
    assert fact_answers.answer("我老伴喜欢干什么？", zh, "zh", FRIDAY) == "你的老伴喜欢跳广场舞。"
    assert fact_answers.answer("我儿子上几年级？", zh, "zh", FRIDAY) == "你的儿子在上高三。"
    assert fact_answers.answer("我老伴是做什么的？", zh, "zh", FRIDAY) == "你还没告诉我你老伴做什么工作。"
    shanghai = learn(["嗨，我是婷婷，在上海做设计师"])
    assert fact_answers.answer("我住在哪个城市？", shanghai, "zh", FRIDAY) == (
        "你还没告诉我你住在哪里，不过你说过：你在上海做设计师。"
    )
    assert fact_answers.answer("where do i live?", learn(["i'm a nurse"]), "en", FRIDAY) == (
        "You haven't told me where you live yet."
    )


def test_a_relative_named_before_is_not_acknowledged_again_with_their_plan():
    said = extract_self_facts(
        "she's coming over on sunday with the grandkids", FRIDAY, before="my daughter karen lives in bristol"
    )
    assert fact_answers.acknowledgement(said, zh=False) == (
        "Got it — your daughter Karen is coming over on Sunday, 6 December 2026. I'll keep that in mind."
    )


# -- what a twelfth round of new conversations found (each with a variant of its own) ------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        # a lowercase place after a relative's verb ("lives" is no name), an age "this year"
        ("my mum lives in guangzhou, she's 70 this year", "family:mother:home", "User's mum lives in Guangzhou."),
        (
            "my mum lives in guangzhou, she's 70 this year",
            "family:mother:age",
            "User's mum is 70 (as of 4 December 2026).",
        ),
        ("our son is 8 this year", "family:son:age", "User's son is 8 (as of 4 December 2026)."),
        # a relative studying; "our" is the user's family too
        (
            "my grandson liam is studying engineering at newcastle",
            "family:grandson:job",
            "User's grandson Liam is studying engineering at Newcastle.",
        ),
        ("my daughter is doing a degree in nursing", "family:daughter:job", "User's daughter is studying nursing."),
        (
            "our daughter ngozi visits every sunday",
            "routine:daughter_every_sunday",
            "User's daughter Ngozi visits every Sunday.",
        ),
        ("our son is allergic to peanuts", "health:allergy:peanut:son", "User's son is allergic to peanuts."),
        (
            "i go climbing on tuesdays and thursdays",
            "routine:on_tuesdays_and_thursdays",
            "User goes climbing on Tuesdays and Thursdays.",
        ),
        # a relative's condition; a food left out because of a medicine, said by what it is
        (
            "my husband emmanuel has dementia, so i look after him",
            "health:condition:dementia:husband",
            "User's husband Emmanuel has dementia.",
        ),
        ("我老伴有老年痴呆", "health:condition:dementia:partner", "用户的老伴有老年痴呆。"),
        ("我妈得了帕金森", "health:condition:parkinsons:mother", "用户的妈有帕金森。"),
        (
            "my husband can't have grapefruit with his tablets",
            "health:avoid:grapefruit:husband",
            "User's husband cannot have grapefruit.",
        ),
        (
            "i'm on warfarin so no cranberry juice for me",
            "health:avoid:cranberry_juice",
            "User cannot drink cranberry juice.",
        ),
        ("i'm on warfarin so no alcohol for me", "health:avoid:alcohol", "User does not drink alcohol."),
        # a relative's plan and studies in Chinese, a plan home, next month by its month
        ("我儿子在美国读博士", "family:son:job", "用户的儿子在美国读博士。"),
        ("下个月儿子放假回来", "plan:son_下个月", "用户的儿子2027年1月放假回来。"),
        ("我女儿周六要来看我", "plan:daughter_周六", "用户的女儿2026年12月5日（星期六）要来看用户。"),
        ("这周日我老伴去北京出差", "plan:partner_这周日", "用户的老伴2026年12月6日（星期日）去北京出差。"),
        ("我周末回广州看我妈", "plan:周末", "用户2026年12月5日开始的那个周末要回广州看用户妈。"),
        ("my son is moving next month", "plan:son_next_month", "User's son is moving in January 2027."),
        ("下周三我女儿过生日", "family:daughter:birthday", "用户的女儿的生日是12月9日。"),
    ],
)
def test_what_the_twelfth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_relative_named_lines_before_is_read_by_name_and_a_pronoun_is_no_name():
    facts = learn(
        [
            "my husband emmanuel has dementia, so i look after him",
            "our daughter ngozi visits every sunday",
            "emmanuel can't have grapefruit with his tablets",
        ]
    )
    assert facts["health:avoid:grapefruit:husband"] == "User's husband Emmanuel cannot have grapefruit."
    zh = learn(["我外孙女叫朵朵，今年五岁", "下周三朵朵过生日", "朵朵对花生过敏"])
    assert zh["family:granddaughter:birthday"] == "用户的外孙女朵朵的生日是12月9日。"
    assert zh["health:allergy:peanut:granddaughter"] == "用户的外孙女朵朵对花生过敏。"
    # "my dad, he's…": "He" is no name of the dad
    cared = learn(["hi i'm grace, i look after my dad, he's got dementia", "he takes donepezil every morning"])
    assert "family:father" not in cared, cared
    assert cared["health:medication:donepezil:father"] == "User's father takes donepezil every morning."


def test_the_twelfth_rounds_questions():
    facts = learn(
        [
            "my husband emmanuel has dementia",
            "my husband can't have grapefruit with his tablets",
            "i have asthma",
            "i'm on warfarin so no cranberry juice for me",
            "my grandson liam is studying engineering at newcastle",
        ]
    )
    asked = {
        "what's wrong with my husband?": ("Your husband Emmanuel has dementia. Your husband cannot have grapefruit."),
        # (their own, not the husband's dementia)
        "what's wrong with me?": "You can't have cranberry juice. You have asthma. You are on warfarin.",
        "what's wrong with my wife?": "You haven't told me about your wife's health.",
        "can i drink cranberry juice?": "No, you can't drink cranberry juice.",
        "what can't i have?": "You can't have cranberry juice.",
        "what is liam studying?": "Your grandson Liam is studying engineering at Newcastle.",
    }
    for question, expected in asked.items():
        assert fact_answers.answer(question, facts, "en", FRIDAY) == expected, question
    zh = learn(["我老伴有老年痴呆", "我对青霉素过敏", "下个月儿子放假回来", "我儿子在美国读博士"])
    asked_zh = {
        "我老伴有什么病？": "你的老伴有老年痴呆。",
        "我对什么药过敏？": "你对青霉素过敏。",
        "我儿子什么时候回来？": "你的儿子2027年1月放假回来。",
        "我儿子在哪里读书？": "你的儿子在美国读博士。",
        "我有什么病？": "你对青霉素过敏。",  # (their own: not the partner's dementia)
    }
    for question, expected in asked_zh.items():
        assert fact_answers.answer(question, zh, "zh", FRIDAY) == expected, question


# -- what a thirteenth round of new conversations found (each with a variant of its own) ---------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("hello dear, dorothy speaking", "name", "User's name is Dorothy."),
        ("Ravi speaking", "name", "User's name is Ravi."),
        ("alright, i'm marcus", "name", "User's name is Marcus."),
        ("i'm eighty seven, a retired school secretary", "occupation:former", "User used to be a school secretary."),
        ("I'm Tom, a teacher", "occupation", "User is a teacher."),
        ("i'm coeliac and i can't tolerate lactose either", "health:avoid:milk", "User cannot tolerate lactose."),
        # several of a kind by name, and their age; the one who says it with a partner
        (
            "me and my wife keisha have twin boys, jayden and jordan, they're seven",
            "family:son",
            "User has twin boys, called Jayden and Jordan.",
        ),
        (
            "me and my wife keisha have twin boys, jayden and jordan, they're seven",
            "family:son:age",
            "User's boys Jayden and Jordan are 7 (as of 4 December 2026).",
        ),
        ("me and my wife keisha have twin boys", "family:wife", "User's wife is called Keisha."),
        ("my daughter and I have two dogs, rex and fido", "family:dog", "User has two dogs, called Rex and Fido."),
        # a relative's diet, a name after what else is said of them, a place after a job
        ("my son is vegan", "health:avoid:egg:son", "User's son is vegan: no meat, fish, dairy or eggs."),
        ("我女儿今年三岁了，叫豆豆", "family:daughter", "用户的女儿叫豆豆。"),
        (
            "my daughter claire is a nurse in leeds",
            "family:daughter:job",
            "User's daughter Claire is a nurse in Leeds.",
        ),
        ("i'm a nurse in training", "occupation", "User is a nurse in training."),
        # who they live with; a relative's studies and a condition after a comma in Chinese
        (
            "i live with my daughter sue and her husband mark",
            "household",
            "User lives with their daughter Sue and their daughter's husband Mark.",
        ),
        ("I live with my husband and our two cats", "household", "User lives with their husband and their two cats."),
        ("我孙子在北京上大学，学计算机", "family:grandson:job", "用户的孙子在北京上大学，学的是计算机。"),
        ("我不能吃太咸的，血压高", "health:condition:high_blood_pressure", "用户有高血压。"),
    ],
)
def test_what_the_thirteenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_one_of_several_or_one_named_in_an_earlier_session_is_read_by_name():
    twins = learn(["i have two boys, jayden and jordan", "jordan is allergic to kiwi"])
    # the allergy is his, and the line naming both is not replaced by "is called Jordan"
    assert twins["health:allergy:kiwi:son"] == "User's son Jordan is allergic to kiwi."
    assert twins["family:son"] == "User has two boys, called Jayden and Jordan."
    sister = learn(["my sister yasmin is visiting from dubai next week", "she's vegetarian"])
    assert sister["health:avoid:meat:sister"] == "User's sister Yasmin is vegetarian: no meat or fish."
    milk = learn(["我女儿今年三岁了，叫豆豆", "豆豆对牛奶过敏"])
    assert milk["health:allergy:milk:daughter"] == "用户的女儿豆豆对牛奶过敏。"
    # a new session: the stored facts name them
    stored = {
        "family:daughter": "User's daughter is called Claire.",
        "family:son": "User has twin boys, called Jayden and Jordan.",
        "family:granddaughter": "用户的外孙女叫朵朵。",
    }
    known = relatives_known(stored)
    assert known == [("daughter", "Claire"), ("boy", "Jayden"), ("boy", "Jordan"), ("外孙女", "朵朵")]
    said = {f.key: f.content for f in extract_self_facts("claire is getting married in june", FRIDAY, known=known)}
    assert said == {"plan:daughter_in_june": "User's daughter Claire is getting married in June 2027."}
    said = {f.key: f.content for f in extract_self_facts("朵朵对牛奶过敏", FRIDAY, known=known)}
    assert said == {"health:allergy:milk:granddaughter": "用户的外孙女朵朵对牛奶过敏。"}
    # and the food ideas leave the milk out for her
    idea = food_ideas.suggest("给朵朵做什么早饭好？", list(said), True)
    assert idea is not None and "牛奶" not in idea.split("都不含")[0], idea


def test_the_thirteenth_rounds_questions():
    facts = learn(["i live with my daughter sue and her husband mark", "我不能吃太咸的，血压高"])
    assert fact_answers.answer("who do i live with?", facts, "en", FRIDAY) == (
        "You live with your daughter Sue and your daughter's husband Mark."
    )
    assert fact_answers.answer("what's sue's husband called?", facts, "en", FRIDAY) == "Sue's husband is called Mark."
    assert fact_answers.answer("who do i live with?", learn(["i'm a nurse"]), "en", FRIDAY) == (
        "You haven't told me who you live with."
    )
    assert fact_answers.answer("我血压怎么样？", facts, "zh", FRIDAY) == "你不能吃太咸的。你有高血压。"


def test_several_of_a_kind_are_asked_about_together_and_each_by_name():
    facts = learn(
        [
            "me and my wife keisha have twin boys, jayden and jordan, they're seven",
            "jordan is allergic to kiwi",
            "the boys have swimming every wednesday after school",
        ]
    )
    assert facts["routine:son_every_wednesday"] == "User's boys have swimming every Wednesday after school."
    asked = {
        "what's jordan allergic to?": "Your son Jordan is allergic to kiwi.",  # (a name of several, lowercase)
        "how old are the twins?": "Your boys Jayden and Jordan are seven.",
        "how old is jordan?": "Your boys Jayden and Jordan are seven.",
        "what do the boys do on wednesdays?": "Your boys have swimming every Wednesday after school.",
        "what's my wife's name?": "Your wife is called Keisha.",
    }
    for question, expected in asked.items():
        assert fact_answers.answer(question, facts, "en", FRIDAY) == expected, question
    # a year on, the one age told is not said as today's
    later = FRIDAY + datetime.timedelta(days=400)
    assert "are seven" not in (fact_answers.answer("how old are the twins?", facts, "en", later) or "")


# -- what a fourteenth round of new conversations found (each with a variant of its own) ---------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("morning, the name's bill", "name", "User's name is Bill."),
        ("The name is Aoife.", "name", "User's name is Aoife."),
        ("hello love, peggy here", "name", "User's name is Peggy."),
        ("i'm seventy four, used to be a lorry driver", "occupation:former", "User used to be a lorry driver."),
        ("我儿子小宇今年上初一", "family:son:school", "用户的儿子在上初一。"),
        ("我老伴身体不好，有心脏病", "health:condition:heart_disease:partner", "用户的老伴有心脏病。"),
        ("下周二我陪老伴去医院检查", "plan:下周二", "用户2026年12月8日（星期二）要陪老伴去医院检查。"),
    ],
)
def test_what_the_fourteenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_pronoun_before_a_day_is_the_relative_and_their_plan_is_asked_by_name():
    facts = learn(["我儿子小宇今年上初一", "他周六要去参加数学比赛"])
    assert facts["plan:son_周六"] == "用户的儿子2026年12月5日（星期六）要去参加数学比赛。"
    for question in ("我儿子周六干什么？", "小宇什么时候比赛？"):
        assert fact_answers.answer(question, facts, "zh", FRIDAY) == "你的儿子2026年12月5日（星期六）要去参加数学比赛。"
    assert fact_answers.answer("小宇上几年级？", facts, "zh", FRIDAY) == "你的儿子在上初一。"


def test_what_can_i_have_for_a_snack_asks_for_ideas_and_can_i_have_one_food_does_not():
    assert food_ideas.meal_asked("what can i have for a snack?", False) == "snack"
    assert food_ideas.meal_asked("can i have a biscuit?", False) is None
    idea = food_ideas.suggest("what can i have for a snack?", ["health:condition:diabetes"], False)
    assert idea is not None and idea.endswith("low in sugar."), idea


# -- what a fifteenth round of new conversations found (each with a variant of its own) ----------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("my mum is a teacher and my dad runs a garage", "family:father:job", "User's dad runs a garage."),
        ("my wife owns a little bakery", "family:wife:job", "User's wife owns a little bakery."),
        ("您好，我是陈华，六十八岁，退休工人", "age", "用户68岁（2026年12月4日时）。"),
        (
            "our daughter louise is coming for christmas with her two kids",
            "plan:daughter_for_christmas",
            "User's daughter Louise is coming for Christmas (Friday, 25 December 2026).",
        ),
        (
            "my son is flying home on christmas eve",
            "plan:son_christmas_eve",
            "User's son is flying home on Christmas Eve (Thursday, 24 December 2026).",
        ),
    ],
)
def test_what_the_fifteenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_who_comes_for_christmas_and_what_a_relative_runs():
    facts = learn(["our daughter louise is coming for christmas with her two kids", "my dad runs a garage"])
    assert fact_answers.answer("who's coming for christmas?", facts, "en", FRIDAY) == (
        "Your daughter Louise is coming for Christmas (Friday, 25 December 2026)."
    )
    assert fact_answers.answer("what does my dad do?", facts, "en", FRIDAY) == "Your dad runs a garage."
    # a girl's age said alone after her name is hers, not the user's
    assert "age" not in keys("我女儿叫小雨，六岁")


def test_when_are_my_exams_reads_the_plan_as_when_is_my_exam_does():
    facts = learn(["i've got my exams next week"])
    expected = "You will have your exams in the week of 7 December 2026."
    assert fact_answers.answer("when are my exams?", facts, "en", FRIDAY) == expected
    assert fact_answers.answer("when is my exam?", facts, "en", FRIDAY) == expected


# -- what a sixteenth round of new conversations found (each with a variant of its own) ----------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("my son works nights at the hospital", "family:son:job", "User's son works nights at the hospital."),
        ("my wife works part-time at the library", "family:wife:job", "User's wife works part-time at the library."),
        ("i've got a dog called biscuit, he's a beagle", "family:dog:breed", "User's dog is a beagle."),
        ("we have an old springer spaniel called bramble", "family:dog:breed", "User's dog is a springer spaniel."),
        ("我家有一只金毛，叫旺财", "family:dog:breed", "用户的狗是金毛。"),
        (
            "my husband ken had a hip operation last week",
            "health:event:hip_operation:husband",
            "User's husband Ken had a hip operation.",
        ),
        (
            "my mum's just had her knee replaced",
            "health:event:knee_replacement:mother",
            "User's mum had a knee replacement.",
        ),
    ],
)
def test_what_the_sixteenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_known_son_by_name_works_nights_and_a_pets_breed_and_a_husbands_operation_are_answered():
    known = [("son", "Gary")]
    said = {f.key: f.content for f in extract_self_facts("gary works nights at the hospital", FRIDAY, known=known)}
    assert said == {"family:son:job": "User's son Gary works nights at the hospital."}
    facts = learn(["i've got a dog called biscuit, he's a beagle", "my husband ken had a hip operation last week"])
    for asked in ("what kind of dog have i got?", "what breed is biscuit?"):
        assert fact_answers.answer(asked, facts, "en", FRIDAY) == "Your dog is a beagle."
    # never the model's guess (it gave one person "a cat named Luna")
    assert fact_answers.answer("what kind of cat do i have?", facts, "en", FRIDAY) == "You haven't told me about a cat."
    no_breed = learn(["i've got a dog called biscuit"])
    assert fact_answers.answer("what kind of dog have i got?", no_breed, "en", FRIDAY) == (
        "You haven't told me what kind of dog it is."
    )
    assert fact_answers.answer("what kind of dog food should i buy?", facts, "en", FRIDAY) is None
    assert (
        fact_answers.answer("what operation did ken have?", facts, "en", FRIDAY)
        == "Your husband Ken had a hip operation."
    )
    assert fact_answers.answer("what operation did my dad have?", facts, "en", FRIDAY) == (
        "You haven't told me about your dad's health."
    )
    assert (
        fact_answers.answer("我的狗是什么品种？", learn(["我家有一只金毛，叫旺财"]), "zh", FRIDAY) == "你的狗是金毛。"
    )


# -- what a seventeenth round (two long conversations, a few days) found -------------------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("i'm seventy nine, retired postman", "occupation:former", "User used to be a postman."),
        ("i'm 80, retired school secretary", "occupation:former", "User used to be a school secretary."),
        ("my husband had a stroke last year", "health:event:stroke:husband", "User's husband had a stroke."),
        ("my mum had a fall", "health:event:fall:mother", "User's mum had a fall."),
        ("i've got a little dog called pip, she's a jack russell", "family:dog:breed", "User's dog is a jack russell."),
        ("my son paul works offshore on the rigs", "family:son:job", "User's son Paul works offshore on the rigs."),
        ("我有一个女儿，叫刘芳，在上海当护士", "family:daughter:job", "用户的女儿在上海当护士。"),
    ],
)
def test_what_the_seventeenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_relative_introduced_then_described_without_a_subject_is_not_the_user():
    # (the daughter's job was stored as the user's own)
    said = keys("我有一个女儿，叫刘芳，在上海当护士")
    assert "occupation" not in said, said
    assert "occupation" not in keys("i'm 79, retired and happy")  # no job in it
    facts = learn(["my husband had a stroke last year"])
    assert fact_answers.answer("what's wrong with my husband?", facts, "en", FRIDAY) == "Your husband had a stroke."


# -- what an eighteenth round (two long conversations, a few days) found -------------------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("我太太叫陈静，她是医生", "family:wife:job", "用户的太太是医生。"),
        ("我先生叫李强", "family:husband", "用户的先生叫李强。"),
        ("我爱人喜欢跳舞", "family:partner:likes", "用户的爱人喜欢跳舞。"),
        ("我儿媳妇叫小红", "family:daughter-in-law", "用户的儿媳妇叫小红。"),
        ("我姥姥今年九十岁了", "family:外婆:age", None),
    ],
)
def test_what_the_eighteenth_round_found_unread(text, key, content):
    said = keys(text, FRIDAY)
    assert key in said and (content is None or said[key] == content), said
    assert not [k for k in said if k.startswith("taste:")], "爱人 is a spouse, not a love of 人"


def test_the_eighteenth_rounds_questions_are_answered_from_what_was_told():
    facts = learn(
        [
            "i play badminton on thursdays",
            "i keep bees in the garden",
            "i've got type 2 diabetes",
            "my neighbour sue had a hip replacement",
        ]
    )
    asked = {
        "what sport do i play?": "You play badminton on Thursdays.",
        "what do i keep in the garden?": "You keep bees.",
        "what condition have i got?": "You have diabetes.",
        "what did sue have done?": "Your neighbour Sue had a hip replacement.",
    }
    assert {q: fact_answers.answer(q, facts, "en", FRIDAY) for q in asked} == asked
    assert fact_answers.answer("what team do i support?", facts, "en", FRIDAY) == (
        "You haven't told me which team you support."
    )
    zh = learn(["我太太叫陈静，她是医生", "我喜欢钓鱼"])
    assert fact_answers.answer("我太太叫什么名字？", zh, "zh", FRIDAY) == "你的太太叫陈静。"
    assert fact_answers.answer("我太太是做什么的？", zh, "zh", FRIDAY) == "你的太太是医生。"
    assert fact_answers.answer("我的爱好是什么？", zh, "zh", FRIDAY) == "你喜欢钓鱼。"


@pytest.mark.parametrize(
    "text, content",
    [
        ("i'm a hairdresser, i've a little salon in galway", "User has a little salon in galway."),
        ("i have a bakery in leeds", "User has a bakery in leeds."),
        ("i sold the salon!", "User sold the salon."),
        ("we've shut down our shop", "User closed their shop."),
        ("i'm going to work from home doing weddings", "User works from home, doing weddings."),
        ("i work from home now", "User works from home."),
    ],
)
def test_a_business_of_ones_own_and_its_end_are_the_workplace(text, content):
    assert keys(text).get("workplace") == content, keys(text)


def test_a_business_is_said_back_where_asked_and_a_meeting_is_no_business():
    facts = learn(["i'm a hairdresser, i've a little salon in galway"])
    assert fact_answers.answer("where's my salon?", facts, "en", FRIDAY) == (
        "You are a hairdresser. You have a little salon in galway."
    )
    later = learn(["i'm a hairdresser, i've a little salon in galway", "i sold the salon!"])
    assert fact_answers.answer("where's my salon?", later, "en", FRIDAY) == (
        "You are a hairdresser. You sold the salon."
    )
    for said in ("i have a meeting in leeds", "i have a shop at home", "i sold my car"):
        assert "workplace" not in keys(said), said


# -- what a nineteenth round (turns as a recogniser writes them: fillers, no commas) found --------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("oh hello um it's maureen", "name", "User's name is Maureen."),
        ("um i've got a bad knee so i use a walking stick", "health:condition:bad_knee", "User has a bad knee."),
        ("i've got a bad back", "health:condition:bad_back", "User has a bad back."),
        ("我血压有点高", "health:condition:high_blood_pressure", "用户有高血压。"),
        (
            "i'm going fishing with my mate ron on saturday",
            "plan:on_saturday",
            "User is going fishing with their mate ron on Saturday, 5 December 2026.",
        ),
        ("我老伴叫张国强他以前是司机", "family:partner", "用户的老伴叫张国强。"),
        ("我老伴叫张国强他以前是司机", "family:partner:job", "用户的老伴以前是司机。"),
        ("就是我有个孙子叫张小宝今年五岁", "family:grandson", "用户的孙子叫张小宝。"),
        ("就是我有个孙子叫张小宝今年五岁", "family:grandson:age", "用户的孙子5岁（2026年12月4日时）。"),
    ],
)
def test_what_the_nineteenth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_a_relative_introduced_with_a_name_keeps_their_age_and_no_comma_is_no_new_clause():
    assert "age" not in keys("我有个孙子叫张小宝，今年五岁")  # (it was stored as the user's own age)
    for said in ("我跟他以前是同事", "我和她是朋友"):
        assert not [k for k in keys(said) if k.startswith("family:")], said
    assert keys("oh hello, it's raining") == {}


def test_the_nineteenth_rounds_questions_are_answered_from_what_was_told():
    facts = learn(["um i've got a bad knee so i use a walking stick", "i'm going fishing with my mate ron on saturday"])
    assert fact_answers.answer("what's wrong with my leg", facts, "en", FRIDAY) == "You have a bad knee."
    assert fact_answers.answer("who am i going fishing with", facts, "en", FRIDAY) == (
        "You are going fishing with your mate ron on Saturday, 5 December 2026."
    )
    assert fact_answers.answer("who am i going shopping with?", facts, "en", FRIDAY) is None
    named = learn(["hiya it's frank"])
    assert fact_answers.answer("who am i going fishing with", named, "en", FRIDAY) is None  # not "who am I?"
    assert fact_answers.answer("who am i again, fay?", named, "en", FRIDAY) == "Your name is Frank."
    zh = learn(["我老伴叫张国强他以前是司机", "就是我有个孙子叫张小宝今年五岁"])
    assert fact_answers.answer("我老伴以前做什么的", zh, "zh", FRIDAY) == "你的老伴以前是司机。"
    assert fact_answers.answer("我孙子几岁", zh, "zh", FRIDAY) == "张小宝五岁。"


# -- what a twentieth round (corrections and updates over a long conversation) found -------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("i stopped taking aspirin", "health:medication:aspirin", "User no longer takes aspirin."),
        ("the doctor stopped my aspirin, i take clopidogrel now", "health:medication:aspirin", None),
        ("i'm off the statins now", "health:medication:statin", "User no longer takes statins."),
        (
            "my wife pat is in hospital with a broken hip",
            "health:event:broken_hip:wife",
            "User's wife Pat went into hospital with a broken hip.",
        ),
        ("my husband broke his wrist", "health:event:broken_wrist:husband", "User's husband broke his wrist."),
        ("my wife came home from hospital yesterday", "health:event:home_from_hospital:wife", None),
    ],
)
def test_what_the_twentieth_round_found_unread(text, key, content):
    said = keys(text)
    assert key in said and (content is None or said[key] == content), said
    assert not [k for k in said if k.startswith("taste:")], "a medicine stopped is no habit given up"


def test_the_twentieth_rounds_updates_and_questions():
    facts = learn(["i take aspirin every morning", "the doctor stopped my aspirin, i take clopidogrel now"])
    assert fact_answers.answer("what tablets do i take?", facts, "en", FRIDAY) == (
        "You no longer take aspirin. You take clopidogrel now."
    )
    hip = learn(["my wife pat is in hospital with a broken hip"])
    assert fact_answers.answer("what happened to my wife?", hip, "en", FRIDAY) == (
        "Your wife Pat went into hospital with a broken hip."
    )
    assert fact_answers.answer("what happened to the car?", hip, "en", FRIDAY) is None
    age = learn(["我孙女叫朵朵，今年六岁", "不对，她七岁了"])
    assert age["family:granddaughter:age"].startswith("用户的孙女7岁"), age
    tea = learn(["我喜欢喝绿茶", "我现在改喝红茶了"])
    assert "红茶" in (fact_answers.answer("我喜欢喝什么？", tea, "zh", FRIDAY) or "")


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("我女儿住在北京", "family:daughter:home", "用户的女儿住在北京。"),
        ("我儿子一家现在住在上海", "family:son:home", "用户的儿子住在上海。"),
        ("我女儿叫小丽，住在北京", "family:daughter:home", "用户的女儿住在北京。"),
    ],
)
def test_where_a_relative_lives_in_chinese_is_theirs(text, key, content):
    said = keys(text)
    assert said.get(key) == content, said
    assert "home" not in said, "a relative's home was taken for the user's own"
    assert "family:daughter:home" not in keys("我女儿在北京工作")  # where she works


def test_a_relatives_home_in_chinese_is_answered():
    facts = learn(["我女儿叫小丽，住在北京"])
    assert fact_answers.answer("我女儿住在哪里？", facts, "zh", FRIDAY) == "你的女儿住在北京。"
    assert fact_answers.answer("我住在哪里？", facts, "zh", FRIDAY) == "你还没告诉我你住在哪里呢。"


# -- what a twenty-first round found --------------------------------------------------------------


def test_this_weekends_plans_and_who_is_coming_and_where_the_wedding_is():
    monday = datetime.datetime(2026, 12, 7, 10, 0)
    assert (
        keys("这个周末女儿要回来", monday)["plan:daughter_这个周末"] == "用户的女儿2026年12月12日开始的那个周末要回来。"
    )
    assert "plan:下周末" in keys("下周末我要去北京", monday)
    zh = learn(["这个周末女儿要回来", "星期三我儿子来看我"], monday)
    assert fact_answers.answer("谁这个周末回来？", zh, "zh", monday) == "你的女儿2026年12月12日开始的那个周末要回来。"
    assert fact_answers.answer("星期三谁来？", zh, "zh", monday) == "你的儿子2026年12月9日（星期三）来看你。"
    assert fact_answers.answer("明天谁来？", zh, "zh", monday) == "你还没告诉我明天谁要来。"
    assert fact_answers.answer("下周末谁回来？", zh, "zh", monday) == "你还没告诉我下周末谁要来。"
    en = learn(["we're going to a wedding in york this weekend"], monday)
    assert fact_answers.answer("where's the wedding?", en, "en", monday) == (
        "You are going to a wedding in york on the weekend of 12 December 2026."
    )
    assert fact_answers.answer("where's the party?", en, "en", monday) is None  # anyone's party


# -- what a twenty-second round (plans over a week) found ----------------------------------------


def test_the_twenty_second_rounds_plans_and_questions():
    monday, later = datetime.datetime(2030, 2, 4, 10, 0), datetime.datetime(2030, 2, 13, 11, 0)
    facts = learn(
        ["my son michael is flying to australia on thursday", "i've got the dentist on friday at 3", "i'm diabetic"],
        monday,
    )
    assert fact_answers.answer("when's my dentist appointment?", facts, "en", monday) == (
        "You will have the dentist on Friday, 8 February 2030."
    )
    assert fact_answers.answer("have i got any health problems?", facts, "en", monday) == "You have diabetes."
    # a plan gone by, asked of in the past: what was told, as told
    assert fact_answers.answer("where did michael go?", facts, "en", later) == (
        "You told me: your son Michael is flying to Australia on Thursday, 7 February 2030."
    )
    assert fact_answers.answer("when does michael fly out?", facts, "en", monday) == (
        "Your son Michael is flying to Australia on Thursday, 7 February 2030."
    )
    assert fact_answers.answer("when's my dentist appointment?", facts, "en", later) == (
        "You told me: you will have the dentist on Friday, 8 February 2030."
    )
    said = keys("下周一我外孙女要来住几天", monday)
    assert said["plan:granddaughter_下周一"] == "用户的外孙女2030年2月11日（星期一）要来住几天。", said
    assert keys("我女儿要来住几天？", monday) == {}  # (still a question)


# -- what a twenty-third round (a long first conversation, a week of errands) found --------------


@pytest.mark.parametrize(
    "text, key, content",
    [
        (
            "we've got a cat called biscuit, she's three",
            "family:cat:age",
            "User's cat Biscuit is 3 (as of 4 December 2026).",
        ),
        ("I have a son called Tom, he's seven", "family:son:age", "User's son Tom is 7 (as of 4 December 2026)."),
        ("hi there! my name's priya and i just moved here from leeds", "hometown", "User moved here from Leeds."),
        ("我是从成都搬过来的", "hometown", "用户的老家是成都。"),
        ("我去年刚从成都搬来", "hometown", "用户的老家是成都。"),
        ("my mum's birthday is on saturday", "family:mother:birthday", "User's mum's birthday is 5 December."),
        ("it's my dad's birthday tomorrow", "family:father:birthday", "User's dad's birthday is 5 December."),
        ("saturday is my son's birthday", "family:son:birthday", "User's son's birthday is 5 December."),
        ("周六是我妈的生日", "family:mother:birthday", "用户的妈的生日是12月5日。"),
        ("我女儿的生日是下周三", "family:daughter:birthday", "用户的女儿的生日是12月9日。"),
        ("我妈的生日是5月3号", "family:mother:birthday", "用户的妈的生日是5月3日。"),
        (
            "i need to pick up my suit on wednesday",
            "plan:on_wednesday",
            "User will pick up their suit on Wednesday, 9 December 2026.",
        ),
        (
            "I've got to collect my suit on Wednesday",
            "plan:on_wednesday",
            "User will collect their suit on Wednesday, 9 December 2026.",
        ),
        ("i must ring the bank tomorrow", "plan:tomorrow", "User will ring the bank on Saturday, 5 December 2026."),
        (
            "I'll bring the cake on saturday",
            "plan:on_saturday",
            "User will bring the cake on Saturday, 5 December 2026.",
        ),
    ],
)
def test_what_the_twenty_third_round_found_unread(text, key, content):
    said = keys(text)
    assert said.get(key) == content, said


def test_the_twenty_third_rounds_corrections_and_questions():
    facts = learn(["my partner sam is a chef", "we've got a cat called biscuit, she's three"])
    assert "family:partner:age" not in facts, facts  # "she" is the cat
    assert fact_answers.answer("how old is biscuit?", facts, "en", FRIDAY) == "Biscuit is three."
    older = learn(["we've got a cat called biscuit, she's three", "actually biscuit is four now, she had a birthday"])
    assert fact_answers.answer("how old is my cat?", older, "en", FRIDAY) == "Biscuit is four."
    moved = learn(["i just moved here from leeds", "my mum's birthday is on saturday"])
    assert fact_answers.answer("where did i move from?", moved, "en", FRIDAY) == "You moved here from Leeds."
    assert fact_answers.answer("when is my mum's birthday?", moved, "en", FRIDAY) == (
        "Your mum's birthday is on 5 December; the next one is Saturday, 5 December 2026."
    )
    assert keys("I'll be seventy on Sunday.").keys() == {"age"}  # an age, no plan
    # errands: on the day, the day's plans only; after it, what was told for it
    errands = learn(["i need to pick up my suit on wednesday", "my daughter lucy is getting married on the 23rd"])
    wednesday, saturday = FRIDAY + datetime.timedelta(days=5), FRIDAY + datetime.timedelta(days=8)
    today = "You will pick up your suit on Wednesday, 9 December 2026."
    assert fact_answers.answer("what do i need to do today?", errands, "en", wednesday) == today
    assert fact_answers.answer("what have i got on today?", errands, "en", wednesday) == today
    told = "You told me: you will pick up your suit on Wednesday, 9 December 2026."
    assert fact_answers.answer("what did i have to pick up on wednesday?", errands, "en", saturday) == told
    assert fact_answers.answer("what did i need to pick up?", errands, "en", saturday) == told
    assert fact_answers.answer("what was i doing on tuesday?", errands, "en", saturday) == (
        "You haven't told me any plans for that day."
    )


# -- what a twenty-fourth round (chatty first conversations, a week with a hospital visit) found --


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("i used to be a dinner lady at the primary school", "occupation:former", "User used to be a dinner lady."),
        ("i used to be a lollipop lady", "occupation:former", "User used to be a lollipop lady."),
        (
            "i've got a hospital appointment next thursday for my eyes",
            "plan:next_thursday",
            "User will have a hospital appointment for their eyes on Thursday, 10 December 2026.",
        ),
        (
            "i'm seeing the doctor tomorrow about my knee",
            "plan:tomorrow",
            "User is seeing the doctor about their knee on Saturday, 5 December 2026.",
        ),
    ],
)
def test_what_the_twenty_fourth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_the_twenty_fourth_rounds_questions():
    doreen = learn(["i used to be a dinner lady at the primary school", "i take paracetamol when it's bad"])
    assert fact_answers.answer("what did i used to do?", doreen, "en", FRIDAY) == "You used to be a dinner lady."
    assert fact_answers.answer("what do i take for my hands?", doreen, "en", FRIDAY) == "You take paracetamol."
    liu = learn(["我有高血压，每天早上吃一片降压药", "我不吃辣的，一吃就胃疼"])
    assert fact_answers.answer("我每天早上吃什么药？", liu, "zh", FRIDAY) == "你每天早上吃一片降压药。"
    health = fact_answers.answer("我有什么病？", liu, "zh", FRIDAY) or ""
    assert "你有高血压。" in health and "用户" not in health, health  # (it said "你不能吃用户不吃辣的。")
    assert fact_answers.answer("我不能吃什么？", liu, "zh", FRIDAY) == "你不能吃辣的。"
    eyes = learn(["i've got a hospital appointment next thursday for my eyes"])
    week_on = FRIDAY + datetime.timedelta(days=8)
    assert fact_answers.answer("what did i have at the hospital on thursday?", eyes, "en", week_on) == (
        "You told me: you will have a hospital appointment for your eyes on Thursday, 10 December 2026."
    )


# -- what a twenty-fifth round (spoken, unpunctuated, other people's facts mixed in) found -------


@pytest.mark.parametrize(
    "text, key, content",
    [
        ("我跟我老伴住 她叫王秀英", "family:partner", "用户的老伴叫王秀英。"),  # a pause written as a space
        ("我有糖尿病 医生不让我吃甜的", "health:avoid:甜的", "用户不能吃甜的。"),
        ("医生让我别喝酒", "health:avoid:alcohol", "用户不能喝酒。"),
        ("the doctor won't let me eat sugar", "health:avoid:sugar", "User cannot eat sugar."),
    ],
)
def test_what_the_twenty_fifth_round_found_unread(text, key, content):
    assert keys(text).get(key) == content, keys(text)


def test_an_allergy_never_told_is_said_to_be_untold_not_left_to_the_model():
    """(To "am I allergic to shellfish?" after "my mate dave is allergic to shellfish but im
    not" the tiny model said "It's true that some people can be allergic to shellfish".)"""
    facts = learn(["my mate dave is allergic to shellfish but im not"])
    assert not [k for k in facts if k.startswith("health:")], facts  # the friend's, not the user's
    assert fact_answers.answer("am i allergic to shellfish?", facts, "en", FRIDAY) == (
        "You haven't told me of any allergy to shellfish."
    )
    assert fact_answers.answer("我对海鲜过敏吗？", {}, "zh", FRIDAY) == "你没告诉过我你对海鲜过敏。"
    assert fact_answers.answer("can i eat prawns?", facts, "en", FRIDAY) is None  # nothing to say against


def test_twins_said_by_that_word_are_named_and_their_age_kept():
    """("my twins, amara and kofi, turn ten on sunday" was not read at all: rounds 9 and 25 asked
    "how old will the twins be?" and the tiny model said twenty.)"""
    said = keys("my twins, amara and kofi, turn ten on sunday")
    assert said == {
        "family:child": "User has twins, called Amara and Kofi.",
        "family:child:age": "User's twins Amara and Kofi turn 10 on Sunday, 6 December 2026.",
    }, said
    assert keys("our twin girls Mia and Ella are six")["family:daughter:age"] == (
        "User's twin girls Mia and Ella are 6 (as of 4 December 2026)."
    )
    assert keys("my twins are lovely") == {}
    facts = learn(["my twins, amara and kofi, turn ten on sunday"])
    assert fact_answers.answer("how old will the twins be?", facts, "en", FRIDAY) == (
        "Amara and Kofi will be ten on Sunday, 6 December 2026."
    )
    assert fact_answers.answer("how old are my twins?", facts, "en", FRIDAY) == (
        "Amara and Kofi are nine; they turn ten on Sunday, 6 December 2026."
    )
    assert fact_answers.answer("what are my twins called?", facts, "en", FRIDAY) == (
        "You have twins, called Amara and Kofi."
    )


# -- what a twenty-sixth round (the same facts asked in other words) found ----------------------


def test_the_twenty_sixth_rounds_paraphrases_are_answered_from_what_was_told():
    gwen = learn(
        ["hello fay, i'm gwen", "i'm a retired librarian", "i live in a flat in cardiff with my cat smudge"]
        + ["i'm allergic to penicillin", "my son rhys lives in bristol"]
    )
    assert fact_answers.answer("remind me where i live?", gwen, "en", FRIDAY) == "You live in Cardiff."
    assert fact_answers.answer("which medicine am i allergic to?", gwen, "en", FRIDAY) == (
        "You're allergic to penicillin."
    )
    # (the tiny model said "You've got a pet named Rhys")
    assert fact_answers.answer("tell me what you know about me", gwen, "en", FRIDAY) == (
        "Your name is Gwen. You are a retired librarian. You live in Cardiff. Your cat is called Smudge."
    )
    assert fact_answers.answer("what do you know about me?", {}, "en", FRIDAY).startswith(
        "You haven't told me much about yourself"
    )
    chen = learn(["你好，我叫陈静", "我是一名护士，在市医院上班", "我住在杭州"])
    assert chen["workplace"] == "用户在市医院工作。", chen
    assert fact_answers.answer("说说你对我的了解", chen, "zh", FRIDAY) == "你叫陈静。你是护士。你住在杭州。"
    ivy = learn(["i'm a nurse on the night shift", "my daughter holly is expecting a baby in june"])
    assert ivy["occupation"] == "User is a nurse on the night shift.", ivy
    assert fact_answers.answer("who's expecting?", ivy, "en", FRIDAY) == (
        "Your daughter Holly is expecting a baby in June 2027."
    )
    assert fact_answers.answer("who's joan?", ivy, "en", FRIDAY) is None


def test_what_one_does_not_eat_is_said_where_no_allergy_was_told():
    """(Round 20: "我不吃香菜" then "我不能吃什么？" got only "你还没告诉我你对什么过敏。")"""
    facts = learn(["我不吃香菜"])
    assert fact_answers.answer("我不能吃什么？", facts, "zh", FRIDAY) == "你还没告诉我你对什么过敏。你不喜欢香菜。"
    assert fact_answers.answer("what am i allergic to?", {}, "en", FRIDAY) == "You haven't told me about any allergies."


# -- what a twenty-seventh round (long first conversations, changes over three weeks) found -----


def test_the_twenty_seventh_rounds_changes_and_questions():
    ron = learn(["our dog buster is fourteen", "i work at the post office in town"])
    ron.update(learn(["our dog buster is fourteen", "sadly buster died on saturday"]))
    ron.update(learn(["i've got a new job, i'm working at the garden centre now"]))
    assert ron["workplace"] == "User works at the garden centre.", ron
    assert ron["family:dog"] == "User's late dog was called Buster.", ron
    assert fact_answers.answer("do i have a dog?", ron, "en", FRIDAY) == "Your late dog was called Buster."
    # "can't have dairy" is no allergy (it upsets the stomach)
    assert keys("i can't have dairy, it upsets my stomach") == {"health:avoid:milk": "User cannot have dairy."}
    assert keys("I can't have peanuts")["health:allergy:peanut"] == "User is allergic to peanuts."
    kids = learn(["i've got two grandchildren, lily and max", "lily is nine and max is six"])
    assert kids["family:grandchild"] == "User has two grandchildren, called Lily and Max.", kids
    assert fact_answers.answer("what are my grandchildren called?", kids, "en", FRIDAY) == (
        "You have two grandchildren, called Lily and Max."
    )
    # each one's age under their own key (one key for the kind said Lily's age for Max too)
    assert kids["family:grandchild:age_max"] == "User's grandchild Max is 6 (as of 4 December 2026).", kids
    assert fact_answers.answer("how old is lily?", kids, "en", FRIDAY) == "Lily is nine."
    assert fact_answers.answer("how old is max?", kids, "en", FRIDAY) == "Max is six."
    assert fact_answers.answer("how old are my grandchildren?", kids, "en", FRIDAY) == (
        "Your grandchild Lily is 9. Your grandchild Max is 6."
    )
    one = learn(["i've got two grandchildren, lily and max", "lily is nine"])
    assert fact_answers.answer("how old is max?", one, "en", FRIDAY) == "You haven't told me how old Max is."
    zh = learn(["我有两个孙子，大的叫乐乐，小的叫天天"])
    assert zh["family:grandson"] == "用户有两个孙子，大的叫乐乐，小的叫天天。", zh
    assert fact_answers.answer("我大孙子叫什么？", zh, "zh", FRIDAY) == "你有两个孙子，大的叫乐乐，小的叫天天。"


def test_a_food_one_cannot_have_is_said_back_in_the_users_words():
    """(Round 27: "i can't have dairy" then "can i have a cup of tea with milk?" got "No, you
    can't eat milk.")"""
    facts = learn(["i can't have dairy, it upsets my stomach"])
    assert fact_answers.answer("can i have a cup of tea with milk?", facts, "en", FRIDAY) == (
        "No, you can't have dairy."
    )


def test_one_relative_named_twice_is_not_one_of_several():
    """(The memory node passes the relatives it knows by name as well as the words before: the
    cat named in both was taken for two cats, and "actually biscuit is four now" went under
    `family:cat:age_biscuit`, where "how old is my cat?" did not look.)"""
    said = extract_self_facts(
        "actually biscuit is four now, she had a birthday",
        FRIDAY,
        before="we've got a cat called biscuit, she's three",
        known=[("cat", "Biscuit")],
    )
    assert [(f.key, f.content) for f in said] == [
        ("family:cat:age", "User's cat Biscuit is 4 (as of 4 December 2026).")
    ], said


def test_the_twenty_eighth_rounds_findings_are_read_and_answered():
    """What an own held-out round found: a team supported, a skill being learnt and given up, a
    visitor asked by day, a sweet treat asked by a person with diabetes, a time of day's routine
    in Chinese and a learner's 最近."""
    facts = learn(
        [
            "i support celtic, football's my passion",
            "i'm learning to play the piano",
            "i'm diabetic so i have to watch my sugar",
            "my grandson jamie is visiting on saturday",
        ]
    )
    assert facts["team"] == "User supports Celtic."
    assert facts["taste:the_piano"] == "User is learning to play the piano."
    assert fact_answers.answer("which team do i support?", facts, "en", FRIDAY) == "You support Celtic."
    assert fact_answers.answer("what am i learning?", facts, "en", FRIDAY) == "You are learning to play the piano."
    assert "Jamie" in fact_answers.answer("who's coming to see me on saturday?", facts, "en", FRIDAY)
    cake = fact_answers.answer("should i have a slice of chocolate cake?", facts, "en", FRIDAY)
    assert cake is not None and "diabetes" in cake and "sugar" in cake, cake
    # moved in with a daughter: the user's daughter's, said of the user (the thirty-fourth round)
    moved = learn(["今年开春我搬到我闺女那儿去了"])
    assert fact_answers.answer("我现在住哪儿？", moved, "zh", FRIDAY) == "你住在你闺女那儿。"
    # a job said of the years before retiring, without "for" or with "the" (the thirty-third round)
    for said, job in [
        ("I drove a black cab forty years before I retired, seen the lot", "User used to drive a black cab."),
        (
            "i was the postmistress in the village for thirty years before i retired",
            "User used to be the postmistress.",
        ),
        ("I taught second grade at Hodge Elementary thirty years before I retired", "User used to teach second grade."),
    ]:
        assert learn([said])["occupation:former"] == job, said
    assert "occupation:former" not in learn(["I was happy before I retired"])
    # a day is no name, nor is a nickname others gave; "before I retired" told is not asked (round 35)
    assert "name" not in learn(["dialysis center changed my chair, I'm Tuesday, Thursday and Saturday now"])
    assert "name" not in learn(["they used to call me Nurse Bill and it stuck"])
    assert learn(["please call me Bill"])["name"] == "User's name is Bill."
    told = learn(["Idris here. thirty-eight years at Markham colliery I was, before I retired"])
    assert fact_answers.answer("thirty-eight years at the colliery, before I retired", told, "en", FRIDAY) is None
    # "my dog's name" asked about is no dog called Name (the thirty-third round)
    assert learn(["and what's my dog's name, my neighbor asked and I went blank?"]) == {}
    assert learn(["my daughter's sarah, she's a nurse"])["family:daughter"] == "User's daughter is called Sarah."
    # a pet named after a comma is named; a pet told of without a name: its name was not told
    pets = learn(["I've got a tortoise, called Mabel, she's older than me", "i've got a dog too"])
    tortoise = fact_answers.answer("what's my tortoise called again?", pets, "en", FRIDAY)
    assert tortoise == "Your tortoise is called Mabel."
    assert fact_answers.answer("what's my dog called?", pets, "en", FRIDAY) == "You haven't told me your dog's name."
    # a clause around the food: the food word is said, not the whole question
    do = fact_answers.answer("there's cake at the do tonight, should i have some?", facts, "en", FRIDAY)
    assert do is not None and do.endswith("a lot of sugar in cake."), do
    assert fact_answers.answer("can i have an apple?", facts, "en", FRIDAY) is None  # (the model answers)
    # giving it up replaces it (one key), and is said as given up, never as a dislike
    later = learn(["i'm learning to play the piano", "i've given up the piano, i'm doing watercolours now"])
    hobbies = fact_answers.answer("what hobby am i doing these days?", later, "en", FRIDAY)
    assert "watercolours" in hobbies and "You gave up the piano." in hobbies and "don't like" not in hobbies, hobbies
    not_facts = ("i'm a big fan.", "i support my wife", "i follow the recipe", "i'm doing fine now")
    not_facts += ("i'm learning lots",)
    for said in not_facts:
        assert not learn([said]), said
    zh = learn(["我每天早上去公园打太极拳", "我最近在学英语", "我是国安队的球迷", "我有糖尿病"])
    assert fact_answers.answer("我早上一般干什么？", zh, "zh", FRIDAY) == "你每天早上去公园打太极拳。"
    assert fact_answers.answer("我最近在学什么？", zh, "zh", FRIDAY) == "你学英语。"
    assert fact_answers.answer("我支持哪个队？", zh, "zh", FRIDAY) == "你是国安队的球迷。"
    assert fact_answers.answer("我能吃蛋糕吗？", zh, "zh", FRIDAY) == "少吃点吧：你有糖尿病，蛋糕一般含糖多。"
    birthday = fact_answers.answer("今天孙子生日，我可以吃块蛋糕吗？", zh, "zh", FRIDAY)
    assert birthday == "少吃点吧：你有糖尿病，蛋糕一般含糖多。"
    assert learn(["我上个星期开始学游泳了"]) == {"study": "用户学游泳。"}


def test_the_twenty_ninth_rounds_findings_are_read_and_answered():
    """What an own held-out round found: a son named before and then by name alone ringing every
    Sunday, a former job said as the place, knees said to be bad, and a car replaced by another."""
    facts = learn(
        [
            "my son paul lives in canada with his wife",
            "paul rings me every sunday evening",
            "i used to work in a biscuit factory",
            "my knees are bad so i use a walking stick",
            "i drive a blue ford focus",
            "i sold the ford, i've got a little red fiat now",
        ]
    )
    assert facts["routine:son_every_sunday_evening"] == "User's son Paul rings them every Sunday evening."
    assert fact_answers.answer("who rings me on sundays?", facts, "en", FRIDAY) == (
        "Your son Paul rings you every Sunday evening."
    )
    assert fact_answers.answer("where did i used to work?", facts, "en", FRIDAY) == (
        "You used to work in a biscuit factory."
    )
    assert facts["health:condition:bad_knee"] == "User has a bad knee."
    assert fact_answers.answer("what car do i drive?", facts, "en", FRIDAY) == "You drive a little red Fiat now."
    for said in ("i used to work in the garden a lot", "my knee is not bad actually", "i drive a bus", "i have a seat"):
        assert not any(k in ("occupation:former", "car") or k.startswith("health:") for k in learn([said])), said


def test_the_thirtieth_rounds_findings_are_read_and_answered():
    """What a round written by someone else (not the author of the readers) found: a diagnosis told
    with its season, an allergy found out about, a dish asked of in passing, a medicine switched in
    one breath, a name after "this is", a hometown near a town, a move in with family, a job said
    with its line, a visit asked by day, a pet's name asked as "what I called it", a pastime, a
    grandchild's college, the in-laws asked through a relative, and in Chinese a diagnosis, a
    medicine's hour, a relative's full name before their job, a correction, a plan asked with 去,
    a course at a place, and the day of a routine."""
    facts = learn(
        [
            "hi there, this is doris",
            "i grew up in a pit village outside barnsley but i've been down here in norwich since nineteen seventy",
            "the doctor told me in the summer that i've got type two diabetes",
            "found out i was allergic to shellfish the hard way, ate a plate of prawns in scarborough",
            "i take my warfarin every evening at six",
            "and the doctor took me off the warfarin, i'm on eliquis now, twice a day",
            "i was a signalman on the railway for thirty odd years",
            "these days i potter about in the shed doing woodturning",
            "i've got a budgie called captain",
            "my grandson tyler is studying engineering at college in columbus",
        ]
    )
    assert facts["name"] == "User's name is Doris."
    assert facts["hometown"] == "User grew up in Barnsley." and facts["home"] == "User lives in Norwich."
    assert facts["health:condition:diabetes"] == "User has diabetes."
    assert facts["health:allergy:shellfish"] == "User is allergic to shellfish."
    assert facts["health:medication:warfarin"] == "User no longer takes warfarin."
    assert facts["occupation:former"] == "User used to be a signalman."
    answers = {
        "there's prawn cocktail at the wedding do, should i have some?": "No, you're allergic to shellfish.",
        "which blood thinner am i on now?": "You no longer take warfarin. You are on eliquis now, twice a day.",
        "remind me what i called the budgie": "Your budgie is called Captain.",
        "what do i do for fun?": "You like woodturning.",
        "where does tyler go to college?": "Your grandson Tyler is studying engineering at college in Columbus.",
        "what's my daughter's husband called?": "You haven't told me about your son-in-law yet.",
    }
    assert {q: fact_answers.answer(q, facts, "en", FRIDAY) for q in answers} == answers
    moved = learn(["i live in dayton", "well it's done, i moved in with my daughter in cincinnati yesterday"])
    assert fact_answers.answer("where am i living these days?", moved, "en", FRIDAY) == "You live in Cincinnati."
    zh = learn(
        [
            "前年查出来有痛风，医生不让我吃海鲜",
            "我每天早上七点吃一片别嘌醇",
            "我儿子王磊在深圳当工程师，儿媳妇是小学老师",
            "不对不对，我说错了，儿媳妇是教中学的，不是小学",
            "这个星期六我要去人民广场那边参加老战友聚会",
            "食堂那边我不去了，现在改成去老年大学学书法，每个星期三上课",
        ]
    )
    assert zh["health:condition:gout"] == "用户有痛风。" and zh["family:son"] == "用户的儿子叫王磊。"
    answers_zh = {
        "我早上几点吃药？": "你每天早上七点吃一片别嘌醇。",
        "我儿子在哪个城市工作？": "你的儿子在深圳当工程师。",
        "我儿媳妇教什么学校的？": "你的儿媳妇是教中学的。",
        "我周六要去干什么？": "你2026年12月5日（星期六）要去人民广场那边参加老战友聚会。",
        "我现在在学什么？": "你在老年大学学书法。",
        "我每个星期几去上课？": "你每个星期三上课。",
    }
    assert {q: fact_answers.answer(q, zh, "zh", FRIDAY) for q in answers_zh} == answers_zh
    # what must not be read: a past allergy, a pleasantry after "this is", a pet flown away as dead,
    # a relative's job as the user's own, a condition named in a question
    assert not learn(["i was allergic to cats as a child"]) and not learn(["hello, this is fun"])
    assert not learn(["我养了一只鹦鹉，叫翠翠", "唉，翠翠前天从窗户飞走了"]).get("family:parrot:passed")
    assert "occupation:former" not in learn(["我老伴李国平以前是医生"]) and not learn(["糖尿病人不能吃什么"])


def test_a_word_put_right_in_the_same_breath_and_an_engagement_are_read():
    """The thirtieth round: "stephen, no wait, … it's steven with a v" was kept as Stephen, and
    "tyler got engaged to his girlfriend megan" was not kept, so "who's tyler marrying?" was made up."""
    facts = learn(
        [
            "my son's called stephen, no wait, i always get that wrong, it's steven with a v, he drives lorries",
            "my grandson tyler is studying engineering",
            "oh and big news, tyler got engaged to his girlfriend megan!",
        ]
    )
    assert facts["family:son"] == "User's son is called Steven."
    assert (
        fact_answers.answer("who's tyler marrying?", facts, "en", FRIDAY) == "Your grandson Tyler is engaged to Megan."
    )
    plan = learn(["i'm going to leeds on tuesday, sorry, i mean wednesday"])
    assert list(plan) == ["plan:on_wednesday"], plan
    assert learn(["my daughter is called sarah, sorry, sara"])["family:daughter"] == "User's daughter is called Sara."


def test_the_thirty_first_rounds_findings_are_read_and_answered():
    """A round written by someone else: a pet said by its breed was lost and its "she" went to the
    granddaughter named before it (the granddaughter was said to be eleven), a relative who
    "called last night" lost her name and her course "up in Flagstaff", "the doc's got me on"
    was no medicine, a routine said with company or with the day first was lost, and questions of
    when and which day, of a dog's name "is" and of "that pill I take" found nothing."""
    facts = learn(
        [
            "so my granddaughter kayla called last night, she's twenty and she's studying nursing up in flagstaff",
            "the doc's got me on metformin for my sugar",
            "every thursday morning i play pickleball with the fellas down at the rec center",
            "our beagle is called biscuit, she's eleven and lazy as all get out",
            "wednesdays i go to the allotment.",
        ]
    )
    assert facts["family:granddaughter:age"] == "User's granddaughter Kayla is 20 (as of 4 December 2026)."
    assert (
        facts["family:dog"] == "User's dog is called Biscuit."
        and facts["family:dog:breed"] == "User's dog is a beagle."
    )
    assert facts["family:dog:age"] == "User's dog Biscuit is 11 (as of 4 December 2026)."
    answers = {
        "remind me, what's my granddaughter studying?": "Your granddaughter Kayla is studying nursing in Flagstaff.",
        "what was the name of that pill i take for my sugar?": "You are on metformin for your sugar.",
        "what day do i play pickleball again?": (
            "You play pickleball with the fellas down at the rec center every Thursday morning."
        ),
        "when do i go to the allotment?": "You go to the allotment on Wednesdays.",
        "do you remember what the dog's name is?": "Your dog is called Biscuit.",
    }
    assert {q: fact_answers.answer(q, facts, "en", FRIDAY) for q in answers} == answers
    assert fact_answers.answer("what day do i go swimming?", facts, "en", FRIDAY) is None  # (not the allotment)


def test_the_thirty_second_rounds_findings_are_read_and_answered():
    """A round written by someone else: "can't eat prawns or any shellfish mate, blew up like a
    balloon last time" was no allergy and got food ideas instead (the subject left out, "any" and
    "mate" hid it), "tell me again what time i take the warfarin" was stored as a statement,
    "got an old kelpie called smoko, he's thirteen" made the son named before thirteen, and "my
    daughter's Sarah." and "my wife was Jean." named no one."""
    assert learn(["can't eat prawns or any shellfish mate, blew up like a balloon last time"]) == {
        "health:allergy:shellfish": "User is allergic to shellfish."
    }
    assert food_ideas.meal_asked("can't eat prawns or any shellfish mate", zh=False) is None
    assert food_ideas.meal_asked("any ideas for dinner?", zh=False) == "dinner"
    assert not learn(["tell me again what time i take the warfarin"])
    warfarin = learn(["i take the warfarin at six o'clock every evening"])
    assert fact_answers.answer("tell me again what time i take the warfarin", warfarin, "en", FRIDAY) == (
        "You take the warfarin at six o'clock every evening."
    )
    kelpie = learn(["my boy travis is a farmer", "got an old kelpie called smoko, he's thirteen and deaf as a post"])
    assert kelpie["family:dog"] == "User's dog is called Smoko." and "family:son:age" not in kelpie, kelpie
    assert learn(["my daughter's Sarah."]) == {"family:daughter": "User's daughter is called Sarah."}
    assert learn(["my wife was Jean. she died in march."])["family:wife"] == "User's wife is called Jean."
    assert not learn(["my wife was lovely."]) and not learn(["my son's tall"])


def test_changes_over_days_in_the_thirty_first_round_are_read():
    """The thirty-first round's days: "my doctor has me on lisinopril" was no medicine, "mike took a
    job in portland and he's already moved up there" left him in Denver, "so i've taken up jigsaw
    puzzles instead" was put on the day of the line before ("on tuesday"), and "remind me what i do
    for a hobby" was answered with work."""
    facts = learn(
        [
            "my doctor has me on lisinopril, ten milligrams every morning",
            "our son mike lives out in denver, he's an electrician",
            "carol came home from the hospital on tuesday, she's getting around with a walker",
            "i quit the woodworking, my hands are too shaky now, so i've taken up jigsaw puzzles instead",
            "big news, mike took a job in portland and he's already moved up there",
            "i take levothyroxine for my thyroid first thing in the morning, half an hour before breakfast",
        ]
    )
    assert facts["health:medication:lisinopril"] == "User is on lisinopril, ten milligrams every morning."
    assert facts["taste:jigsaw_puzzles"] == "User likes jigsaw puzzles."
    answers = {
        "where does mike live?": "Your son Mike lives in Portland now.",
        "remind me what i do for a hobby nowadays": "You like jigsaw puzzles. You gave up the woodworking.",
        "what do i take for my thyroid?": (
            "You are on lisinopril, ten milligrams every morning. "
            "You take levothyroxine for your thyroid first thing in the morning."
        ),
    }
    assert {q: fact_answers.answer(q, facts, "en", FRIDAY) for q in answers} == answers


def test_the_thirty_first_rounds_chinese_is_read_and_answered():
    """The thirty-first round in Chinese: a daughter named after a comma was taken for the user
    (用户在北京当护士), a medicine said first, a course "跟着老姐妹学", a son who 开出租车, a plan on
    "这个月二十号", "那个药叫啥" and "一般礼拜几" found nothing."""
    zh = learn(
        [
            "我跟老伴住在石家庄，闺女刘静在北京当护士",
            "降压药我一天吃一片",
            "太极拳我不打了，现在跟着老姐妹学唱京剧",
            "我儿子在深圳开出租车",
            "我每个礼拜六去菜市场买菜",
        ]
    )
    assert "occupation" not in zh and zh["family:daughter"] == "用户的闺女叫刘静。"
    assert zh["family:daughter:job"] == "用户的闺女在北京当护士。"
    assert zh["health:medication:blood_pressure_medication"] == "用户一天吃一片降压药。"
    assert zh["family:son:job"] == "用户的儿子在深圳开出租车。"
    answers = {
        "我闺女是干啥的来着？": "你的闺女在北京当护士。",
        "我最近在学啥来着？": "你学唱京剧。",
        "我吃的那个药叫啥来着？": "你一天吃一片降压药。",
        "我一般礼拜几去买菜？": "你每个礼拜六去菜市场买菜。",
    }
    assert {q: fact_answers.answer(q, zh, "zh", FRIDAY) for q in answers} == answers
    plan = learn(["这个月二十号闺女带朵朵回来过年"])
    assert plan["plan:daughter_这个月二十号"] == "用户的闺女2026年12月20日（星期日）带朵朵回来过年。"


def test_a_medicine_or_a_routine_said_with_more_after_it_is_read():
    """The thirty-second round: "i take the warfarin at six o'clock every evening and the district
    nurse comes on a thursday…" lost the medicine (kept as a routine), and "every wednesday morning
    i go to the bridge club in the parish hall and then on sundays…" lost the routine."""
    facts = learn(
        [
            "i take the warfarin at six o'clock every evening and the district nurse comes on a thursday to check"
            " my blood",
            "every wednesday morning i go to the bridge club in the parish hall and then on sundays declan brings"
            " me to mass",
        ]
    )
    assert facts["health:medication:warfarin"] == "User takes the warfarin at six o'clock every evening."
    assert fact_answers.answer("which day do i go to the bridge club?", facts, "en", FRIDAY) == (
        "You go to the bridge club in the parish hall every Wednesday morning."
    )
