"""Food ideas the whole household can eat, for the tiny profile.

"What should I have for my tea tonight?", "I need a lunchbox snack idea for the boys",
"晚饭做什么菜好呢？": the embedded 135M model answered these with "What kind of tea do you
want?" or "as an accountant I don't have any dietary restrictions", and in Chinese not at all.
So a request for food ideas is answered from a table (config/food_ideas.csv: the meal, the idea
in English and Chinese, what it contains), leaving out everything the household must avoid:
allergies and foods they cannot eat (theirs and their family's: `health.avoided_keys(...,
household=True)`), what a condition rules out, and what a condition should keep small (sugar
for diabetes, salt for high blood pressure or kidney disease, purine-rich food for gout). An
idea is also checked by the reply guard's own food reading (`health.offered_food`), so an idea
the guard would stop never gets as far as being said.

Pure Python, no ROS.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..common.errors import Issue, TableError, read_table_text
from ..common.paths import config_file
from ..memory import health
from ..text.words import and_list

MEALS = ("breakfast", "lunch", "dinner", "snack", "sweet", "bake", "party")
# what a condition should keep small, besides what it rules out (health.CONDITIONS)
CONDITION_LIMITS = {
    "diabetes": "sugar",
    "high_blood_pressure": "salt",
    "kidney_disease": "salt",
    "gout": "purine",
}
EXTRA_TAGS = frozenset(CONDITION_LIMITS.values())
# foods that are usually high in what a condition keeps small ("Can I have a slice of chocolate
# cake?" asked by a person with diabetes)
_HIGH_IN = {
    "sugar": re.compile(
        r"\b(?:cakes?|cheesecake|chocolates?|sweets|candy|biscuits?|cookies?|ice[ -]?cream|doughnuts?|donuts?|"
        r"puddings?|desserts?|jam|honey|syrup|fizzy|cola|coke|lemonade|soda|fudge|toffees?|trifle|brownies?|"
        r"muffins?|pastr(?:y|ies)|custard|treacle|sugar|sugary|milkshakes?|pies?|tarts?|scones?|mince pies?)\b|"
        r"蛋糕|巧克力|糖|甜|冰淇淋|雪糕|饼干|可乐|汽水|奶茶|月饼|汤圆|蜂蜜|果汁|甜品|点心",
        re.I,
    ),
    "salt": re.compile(
        r"\b(?:crisps|chips|bacon|ham|salami|sausages?|pickles?|pickled|soy sauce|salted|salty|olives|"
        r"instant noodles|pork pies?|kippers?|smoked (?:fish|salmon|haddock))\b|"
        r"咸菜|腊肉|腊肠|咸鱼|榨菜|方便面|咸鸭蛋|火腿|腌|咸",
        re.I,
    ),
    "purine": re.compile(
        r"\b(?:seafood|shellfish|prawns?|shrimps?|mussels|sardines|anchov(?:y|ies)|liver|kidneys|offal|beer|"
        r"lager|red meat|mackerel|herring)\b|海鲜|啤酒|内脏|动物肝|猪肝|虾|螃蟹|沙丁鱼",
        re.I,
    ),
}

# A request for something to eat: a food word and a way of asking; not a question about what was
# eaten, nor "can I eat X?" (answered from the facts), nor a favourite.
_FOOD_WORDS_EN = (
    r"\b(?:eat|cook|make|bake|baking|order|grab|snack|snacks|nibbles?|breakfast|lunch|lunchbox|dinner|supper|"
    r"tea|meal|dish|dessert|pudding|treat|sweet|food|hungry|starving|peckish|picnic|buffet|potluck)\b"
)
_ASKING_EN = re.compile(
    # ("any ideas?", not "can't eat prawns or any shellfish": a statement)
    r"\b(?:what|whats|any (?:ideas?|suggestions?|thoughts|tips|good)|anything|something|suggest|suggestions?|"
    r"recommend|ideas?|fancy|how about|should i|"
    r"what's good|what is good)\b",
    re.I,
)
_NOT_A_REQUEST_EN = re.compile(
    # ("can I have a biscuit?" asks about one food; "what can I have for a snack?" asks for ideas)
    r"\b(?:did|had|was|were|ate|favou?rite|allergic|like to|do you like|(?<!what )can i eat|"
    r"(?<!what )can i have (?!something|anything)|is it (?:ok|okay|safe)|"
    r"my (?:wife|husband|partner|son|daughter) (?:made|cooked))\b|"
    r"\b(?:cup|mug|pot) of tea\b|\btea or coffee\b|\bwhat time\b|\bwhen(?:'s| is)\b|"
    r"\bdo i (?:usually |normally )?(?:eat|have|cook)\b|\busually\b|\bnormally\b|\bmedicine|\btablets?\b|\bpills?\b",
    re.I,
)
# Chinese: a food or meal word, and a way of asking ("晚饭做什么菜好？", "有什么零食推荐吗？"); not
# "我现在做什么？" (a question about their day)
_FOOD_WORDS_ZH = re.compile(
    r"吃|菜|饭|点心|零食|小吃|甜点|甜品|早餐|早饭|午餐|午饭|晚餐|晚饭|夜宵|下午茶|饿|烤|烘焙|水果"
)
_ASKING_ZH = re.compile(r"什么|啥|推荐|建议|好呢|吃点|哪些")
_NOT_A_REQUEST_ZH = re.compile(
    r"药|吃了什么|吃过|喜欢吃什么|不能吃什么|对什么过敏|爱吃什么|吃的什么|毛病|什么病|啥病|为(?:啥|什么)"
)
_MEAL_EN = (
    ("bake", r"\bbak(?:e|ing)\b"),
    ("party", r"\bpart(?:y|ies)\b|\bnibbles\b|\bbuffet\b|\bpicnic\b"),
    ("sweet", r"\bsweet\b|\bdessert\b|\bpudding\b|\btreat\b"),
    ("breakfast", r"\bbreakfast\b|\bbrunch\b"),
    ("snack", r"\bsnacks?\b|\bnibble\b|\bpeckish\b|\blunchbox\b|\bpetrol station\b|\bon the go\b|\bdrive\b"),
    ("lunch", r"\blunch\b|\bmidday\b"),
    ("dinner", r"\bdinner\b|\bsupper\b|\btea tonight\b|\bmy tea\b|\btonight\b|\bevening\b|\bcook\b|\bmeal\b"),
)
_MEAL_ZH = (
    ("bake", r"烤|烘焙|生日点心|做点心"),
    ("party", r"聚会|派对|野餐"),
    ("sweet", r"甜|甜点|甜品"),
    ("breakfast", r"早饭|早餐|早上"),
    ("snack", r"点心|零食|小吃|饿|垫垫|水果|下午"),
    ("lunch", r"午饭|午餐|中午"),
    ("dinner", r"晚饭|晚餐|晚上|做什么菜|什么菜"),
)


@dataclass(frozen=True)
class FoodIdea:
    meal: str
    en: str
    zh: str
    contains: frozenset[str]


class FoodIdeasError(TableError):
    """A food-ideas table that cannot be used: every wrong row, with the file and line."""


def load_ideas(path: str | Path) -> tuple[FoodIdea, ...]:
    """The ideas of a food-ideas CSV (meal,en,zh,contains: `;`-separated allergen keys of
    health.ALLERGENS or the condition tags sugar, salt, purine). Raises FoodIdeasError listing
    every row that is wrong, with its file and line."""
    text = read_table_text(path, error=FoodIdeasError)
    known = {t.key for t in health.ALLERGENS} | EXTRA_TAGS
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames != ["meal", "en", "zh", "contains"]:
        raise FoodIdeasError(path, [Issue(1, f"the header must be meal,en,zh,contains (got {reader.fieldnames})")])
    out: list[FoodIdea] = []
    issues: list[Issue] = []
    for row in reader:
        line = reader.line_num
        meal, en, zh = ((row.get(k) or "").strip() for k in ("meal", "en", "zh"))
        contains = frozenset(t.strip() for t in (row.get("contains") or "").split(";") if t.strip())
        unknown = sorted(contains - known)
        if meal not in MEALS:
            issues.append(Issue(line, f"meal {meal!r} is not one of {', '.join(MEALS)}"))
        elif not en or not zh:
            issues.append(Issue(line, "an idea needs its English and Chinese words"))
        elif unknown:
            issues.append(Issue(line, f"unknown tags {unknown} (known: {', '.join(sorted(known))})"))
        else:
            out.append(FoodIdea(meal, en, zh, contains))
    if issues:
        raise FoodIdeasError(path, issues)
    return tuple(out)


@cache
def shipped_ideas() -> tuple[FoodIdea, ...]:
    return load_ideas(config_file("food_ideas.csv"))


def meal_asked(question: str, zh: bool) -> str | None:
    """The meal a request for food ideas asks about ("dinner" for a bare "what should I cook?"),
    or None when `question` is no such request."""
    q = question.strip()
    if zh:
        if not _FOOD_WORDS_ZH.search(q) or not _ASKING_ZH.search(q) or _NOT_A_REQUEST_ZH.search(q):
            return None
        return next((meal for meal, words in _MEAL_ZH if re.search(words, q)), "dinner")
    if not re.search(_FOOD_WORDS_EN, q, re.I) or not _ASKING_EN.search(q) or _NOT_A_REQUEST_EN.search(q):
        return None
    return next((meal for meal, words in _MEAL_EN if re.search(words, q, re.I)), "dinner")


def limits(fact_keys: Iterable[str]) -> tuple[str, ...]:
    """What the household must leave out (allergen keys) and keep small (condition tags), from
    the user's fact keys."""
    keys = list(fact_keys)
    out = list(health.avoided_keys(keys, household=True))
    out += [tag for _condition, tag in _condition_limits(keys, household=True)]
    return tuple(dict.fromkeys(out))


def _condition_limits(fact_keys: Iterable[str], household: bool) -> list[tuple[str, str]]:
    """(condition key, tag) for each condition in the fact keys that keeps something small
    (`health:condition:diabetes` → ("diabetes", "sugar")); `household`: the relatives' too
    (`health:condition:gout:husband`)."""
    out = []
    for key in fact_keys:
        parts = key.split(":")
        if len(parts) in ((3, 4) if household else (3,)) and parts[:2] == ["health", "condition"]:
            if parts[2] in CONDITION_LIMITS:
                out.append((parts[2], CONDITION_LIMITS[parts[2]]))
    return out


# a whole clause was taken for the food ("there's cake at the do, should i have some")
_CLAUSE = re.compile(r"[,，;；]|\b(?:should|can|could|may|shall|there'?s|there is|i|we)\b|我|应该|可以", re.I)


def kept_small(food: str, fact_keys: Iterable[str]) -> tuple[str, str, str] | None:
    """(condition key, tag, the food as said) when `food` is usually high in what one of the
    user's own conditions keeps small ("chocolate cake" with `health:condition:diabetes` →
    ("diabetes", "sugar", "chocolate cake")), else None. The food as said is `food`, or only
    its food word when `food` is a whole clause ("there's cake at the do, should i have some" →
    "cake"). A relative's condition (`health:condition:gout:husband`) is theirs, not the user's."""
    for condition, tag in _condition_limits(fact_keys, household=False):
        found = _HIGH_IN[tag].search(food)
        if found is not None:
            clause = _CLAUSE.search(food) or len(food.split()) > 6
            return condition, tag, found.group(0) if clause else food
    return None


def high_in_said(tag: str, zh: bool) -> str:
    """ "a lot of sugar in" / "含糖多": what a condition keeps small, as a food has it."""
    en, cn = _LOW_IN[tag]
    return f"含{cn}多" if zh else f"a lot of {en} in"


def suggest(
    question: str,
    fact_keys: Iterable[str],
    zh: bool,
    seed: int = 0,
    ideas: tuple[FoodIdea, ...] | None = None,
) -> str | None:
    """Two food ideas for a request (`question`), none containing what the household avoids,
    said with what they are free of; None when `question` asks for no food ideas, or when no
    idea is left (the model, and its guard, answer then)."""
    meal = meal_asked(question, zh)
    if meal is None:
        return None
    avoided = limits(fact_keys)
    allergens = tuple(k for k in avoided if k not in EXTRA_TAGS)
    fitting = [
        idea
        for idea in (shipped_ideas() if ideas is None else ideas)
        if idea.meal == meal
        and not idea.contains & set(avoided)
        and health.offered_food(idea.en, allergens) is None
        and health.offered_food(idea.zh, allergens) is None
    ]
    if not fitting:
        return None
    picked = random.Random(seed).sample(fitting, min(2, len(fitting)))
    names = [p.zh if zh else p.en for p in picked]
    return _said(names, avoided, zh)


# what a condition keeps small, said as "low in …" / "少…"
_LOW_IN = {"sugar": ("sugar", "糖"), "salt": ("salt", "盐"), "purine": ("purines", "嘌呤")}


def _said(names: list[str], avoided: tuple[str, ...], zh: bool) -> str:
    """ "How about A, or B? Both are free of peanuts and low in sugar." / "试试A，或者B，怎么样？
    都不含花生，都不辣，都少糖。": the words of a warning ("free of", 不含, 不辣), so that no reader
    takes the allergen named for one offered."""
    covered = {c for k in avoided for c in health.COVERS.get(k, ())}  # ("seafood" says the fish too)
    free = [_name(k, zh) for k in avoided if k not in _LOW_IN and k not in covered and not (zh and k == "spicy")]
    low = [_LOW_IN[k][1 if zh else 0] for k in avoided if k in _LOW_IN]
    if zh:
        both = "都" if len(names) > 1 else ""
        parts = [f"{both}不含{'、'.join(free)}"] if free else []
        parts += [f"{both}不辣"] if "spicy" in avoided else []
        parts += [f"{both}少{'少'.join(low)}"] if low else []
        said = f"试试{names[0]}" + (f"，或者{names[1]}" if len(names) > 1 else "") + "，怎么样？"
        return said + ("，".join(parts) + "。" if parts else "")
    said = f"How about {names[0]}" + (f", or {names[1]}" if len(names) > 1 else "") + "?"
    parts = ([f"free of {and_list(free)}"] if free else []) + ([f"low in {and_list(low)}"] if low else [])
    if not parts:
        return said
    return f"{said} {'Both are' if len(names) > 1 else 'It is'} {' and '.join(parts)}."


def _name(key: str, zh: bool) -> str:
    found = health.term(health.ALLERGENS, key)
    return found.name(zh) if found is not None else key.replace("_", " ")
