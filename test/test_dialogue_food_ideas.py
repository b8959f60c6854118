"""Food ideas for the tiny profile (fay_ros.dialogue.food_ideas): which lines ask for them, the
meal asked about, and ideas free of what the household avoids."""

from __future__ import annotations

import pytest

from fay_ros.dialogue import food_ideas
from fay_ros.memory import health
from fay_ros.memory.self_facts import extract_self_facts


def fact_keys(*lines: str) -> list[str]:
    return [f.key for line in lines for f in extract_self_facts(line)]


def test_every_idea_lists_what_the_guard_would_find_in_it():
    """The table's `contains` is at least what the reply guard reads in the idea's words, so an
    idea is never dropped by the guard after it was picked (and the table stays honest)."""
    ideas = food_ideas.shipped_ideas()
    assert {i.meal for i in ideas} == set(food_ideas.MEALS)
    for idea in ideas:
        for allergen in health.ALLERGENS:
            for words in (idea.en, idea.zh):
                if health.offered_food(words, (allergen.key,)) is not None:
                    # (a group is kept out by its members' tags: "seafood" by fish and shellfish)
                    covered = set(health.COVERS.get(allergen.key, ())) & idea.contains
                    assert allergen.key in idea.contains or covered, (idea, allergen.key)


@pytest.mark.parametrize(
    "line, meal",
    [
        ("what should we have for supper?", "dinner"),
        ("any ideas for breakfast tomorrow?", "breakfast"),
        ("whats a good snack for the train", "snack"),
        ("I fancy a treat, any ideas?", "sweet"),
        ("what can the kids and I bake on Sunday?", "bake"),
        ("suggest something to bring to a picnic", "party"),
        ("what should I cook for the family tonight?", "dinner"),
        ("早饭吃点什么好？", "breakfast"),
        ("有点饿了，有什么零食推荐吗？", "snack"),
        ("周末聚会带点什么吃的好？", "party"),
        ("今天晚上做什么菜？", "dinner"),
    ],
)
def test_a_request_for_food_ideas_and_its_meal(line, meal):
    assert food_ideas.meal_asked(line, zh=any("\u4e00" <= c <= "\u9fff" for c in line)) == meal


@pytest.mark.parametrize(
    "line",
    [
        "what did we have for dinner on Sunday?",
        "what's my favourite food?",
        "can I eat peanuts?",
        "would you like a cup of tea?",
        "what time is lunch?",
        "I had a lovely lunch with Sam",
        "what should I do this weekend?",
        "我昨天晚饭吃了什么？",
        "我喜欢吃什么？",
        "我不能吃什么？",
        # a question about their day, their medicine or their habits
        "我现在做什么？",
        "我周末做什么？",
        "我吃什么药？",
        "what medicine do I take?",
        "what do I eat for breakfast usually?",
    ],
)
def test_no_request_for_food_ideas(line):
    assert food_ideas.meal_asked(line, zh=any("\u4e00" <= c <= "\u9fff" for c in line)) is None


@pytest.mark.parametrize(
    "told, asked, never",
    [
        (["my daughter has a peanut allergy"], "any ideas for a snack?", r"peanut butter|satay|trail mix|nut butter"),
        (["I'm coeliac"], "what should I have for lunch?", r"bread|toast|noodle|pasta|sandwich|bun"),
        (["I'm vegan"], "what should I cook for dinner?", r"chicken|fish|salmon|pork|egg|cheese|risotto"),
        (["my husband can't eat shellfish", "I'm allergic to fish"], "what should I cook tonight?", r"salmon|fish"),
        (["I have type 2 diabetes"], "I fancy something sweet, any ideas?", r"pudding|red bean|chocolate"),
        (["我对鸡蛋过敏"], "给孩子烤点什么好？", r"蛋|司康|蛋糕"),
        (["我不吃辣"], "晚饭吃什么好？", r"辣|咖喱"),
    ],
)
def test_ideas_leave_out_what_the_household_avoids(told, asked, never):
    import re

    keys = fact_keys(*told)
    assert keys, told
    zh = any("\u4e00" <= c <= "\u9fff" for c in asked)
    for seed in range(12):  # whichever two are picked
        said = food_ideas.suggest(asked, keys, zh, seed=seed)
        assert said is not None, asked
        ideas = said.split("？")[0] if zh else said.split("?")[0]
        assert not re.search(never, ideas, re.I), said
        assert re.search(r"都(?:不含|不辣|少)", said) if zh else re.search(r"Both are (?:free of|low in) ", said), said


def test_what_the_ideas_leave_out_is_said():
    said = food_ideas.suggest("any ideas for a snack?", fact_keys("I'm allergic to peanuts"), zh=False, seed=3)
    assert said is not None and said.startswith("How about ") and said.endswith("? Both are free of peanuts.")
    said = food_ideas.suggest("what should I have for breakfast?", [], zh=False, seed=3)
    assert said is not None and said.endswith("?") and "free of" not in said
    keys = fact_keys("I'm allergic to peanuts", "I have type 2 diabetes")
    said = food_ideas.suggest("any ideas for a snack?", keys, zh=False, seed=3)
    assert said is not None and said.endswith("? Both are free of peanuts and low in sugar.")
    said = food_ideas.suggest("中午吃点什么好？", fact_keys("我血压高"), zh=True, seed=3)
    assert said is not None and said.startswith("试试") and said.endswith("怎么样？都少盐。")
    said = food_ideas.suggest("晚饭吃什么好？", fact_keys("我对花生过敏", "我不吃辣"), zh=True, seed=3)
    assert said is not None and said.endswith("怎么样？都不含花生，都不辣。")


def test_no_idea_left_leaves_the_request_to_the_model():
    only = (food_ideas.FoodIdea("snack", "peanut butter toast", "花生酱吐司", frozenset({"peanut", "gluten"})),)
    assert food_ideas.suggest("any snack ideas?", ["health:allergy:peanut"], zh=False, ideas=only) is None
    assert food_ideas.suggest("any snack ideas?", [], zh=False, ideas=only) == "How about peanut butter toast?"


def test_a_wrong_row_is_named_with_its_file_and_line(tmp_path):
    table = tmp_path / "food.csv"
    table.write_text("meal,en,zh,contains\nsnack,a banana,香蕉,\nelevenses,a scone,司康,gluten\n", encoding="utf-8")
    with pytest.raises(food_ideas.FoodIdeasError, match=r"food\.csv:3: meal 'elevenses'"):
        food_ideas.load_ideas(table)
    table.write_text("meal,en,zh,contains\nsnack,a banana,香蕉,potassium\n", encoding="utf-8")
    with pytest.raises(food_ideas.FoodIdeasError, match=r"food\.csv:2: unknown tags \['potassium'\]"):
        food_ideas.load_ideas(table)
    table.write_text("meal,english,zh\n", encoding="utf-8")
    with pytest.raises(food_ideas.FoodIdeasError, match=r"food\.csv:1: the header"):
        food_ideas.load_ideas(table)
    table.write_text(
        "meal,en,zh,contains\nelevenses,a scone,司康,gluten\nsnack,,香蕉,\nsnack,a banana,香蕉,\n", encoding="utf-8"
    )
    with pytest.raises(food_ideas.FoodIdeasError) as every:
        food_ideas.load_ideas(table)
    assert [i.line for i in every.value.issues] == [2, 3], "every wrong row, not the first alone"
    with pytest.raises(food_ideas.FoodIdeasError, match=r"missing\.csv: file not found"):
        food_ideas.load_ideas(tmp_path / "missing.csv")
