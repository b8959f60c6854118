"""Health words in English and Chinese: allergens and what contains them, health conditions,
medication. Used by the self-facts reader (one key per allergen, whichever language it was
said in: "peanuts" and "花生" are both `peanut`) and by the reply guard (a sentence that
offers a food the user is allergic to is not said: `offered_food`).

The tables are data: one row per thing, '|' between the words, the first word of each
language the one said back. Pure Python, no ROS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# key, English names, Chinese names, English foods that contain it, Chinese foods that contain it
_ALLERGEN_ROWS = (
    (
        "peanut",
        "peanuts|peanut|groundnuts|groundnut|monkey nuts|peanut butter",
        "花生|花生米|落花生",
        "peanut butter|satay|pad thai|gado-gado|kung pao|trail mix|snickers|reese's|peanut oil|groundnut oil|"
        "peanut brittle|goober|pb&j|pbj|mixed nuts|nuts|nut butter",
        "花生酱|花生油|宫保鸡丁|沙爹|沙嗲|花生糖|鱼皮花生|花生碎|担担面|花生汤",
    ),
    (
        "tree_nut",
        "tree nuts|tree nut|nuts|nut",
        "坚果|果仁",
        "almonds|almond|walnuts|walnut|cashews|cashew|hazelnuts|hazelnut|pecans|pecan|pistachios|pistachio|"
        "macadamia|brazil nuts|nutella|marzipan|praline|pesto|baklava|nougat|"
        # (a "nut allergy" is most often said of peanuts too: kept out as well)
        "peanut|peanuts|peanut butter|satay|trail mix|mixed nuts",
        "杏仁|核桃|腰果|榛子|开心果|碧根果|夏威夷果|松子|栗子|果仁",
    ),
    (
        "milk",
        "milk|dairy|lactose|cow's milk",
        "牛奶|乳制品|奶制品|乳糖",
        "cheese|butter|yogurt|yoghurt|cream|ice cream|milkshake|latte|cappuccino|milk chocolate|custard|"
        "cheesecake|pizza",
        "奶酪|芝士|黄油|酸奶|奶油|冰淇淋|拿铁|奶茶|牛奶|奶昔",
    ),
    (
        "egg",
        "eggs|egg",
        "鸡蛋|蛋类",
        "omelette|omelet|mayonnaise|mayo|meringue|custard|quiche|scrambled eggs|frittata|eggnog|"
        "pancakes|pancake|cake|cakes|cupcake|cupcakes|sponge|brownies|brownie|cookies|cookie|muffins|muffin|"
        "egg fried rice|french toast|carbonara|yorkshire pudding|yorkshire puddings|eclair|eclairs|souffle",
        "炒蛋|蛋挞|蛋黄酱|鸡蛋羹|荷包蛋|茶叶蛋|蛋炒饭|蛋糕",
    ),
    (
        "gluten",
        "gluten|wheat",
        "麸质|小麦|面筋",
        "bread|toast|pasta|spaghetti|noodles|pizza|crackers|biscuits|cookies|cake|cereal|beer|couscous|"
        "bagel|sandwich|muffin|croissant|pretzels|pretzel|pancakes|waffles|flour|pastry|pastries|scone|scones|"
        "crumble|sponge|christmas pudding|sponge pudding|bread pudding|yorkshire pudding|sticky toffee pudding|"
        "bread and butter pudding|suet pudding|treacle sponge|doughnut|donut|batter|battered|breadcrumbs|"
        "barley|rye|semolina|gnocchi|dumplings|samosa|naan|pitta|pita|tortilla|wrap|wraps|crumpet|crumpets|"
        "pie crust|pork pie|sausage roll|cornish pasty|pasty|quiche|porridge",
        "面包|面条|馒头|饺子|包子|披萨|饼干|蛋糕|啤酒|烧饼|油条|面包片|面粉|馄饨|春卷|煎饼|烧卖|月饼|拉面|挂面|"
        "花卷|锅贴|手抓饼|酥饼",
    ),
    (
        # "I can't eat seafood", "我不能吃海鲜": fish and shellfish both (COVERS: their words are its
        # foods, and avoided_keys adds them)
        "seafood",
        "seafood|sea food",
        "海鲜|海产品|海产",
        "",
        "",
    ),
    (
        "shellfish",
        "shellfish|shrimp|prawns|crab|lobster",
        "贝类|甲壳类|虾|蟹",
        "shrimp|prawn|prawns|crab|lobster|scampi|paella|oysters|oyster|mussels|clams|scallops",
        "虾仁|龙虾|螃蟹|大闸蟹|虾饺|生蚝|扇贝|蛤蜊|海鲜|虾",
    ),
    (
        "fish",
        "fish",
        "鱼|鱼类",
        "salmon|tuna|cod|sushi|anchovies|anchovy|sardines|fish and chips|fish sauce|fish fingers",
        "三文鱼|金枪鱼|鱼片|寿司|鱼露|鱼丸|烤鱼",
    ),
    (
        "soy",
        "soy|soya|soybeans|soy beans",
        "大豆|黄豆",
        "tofu|soy sauce|edamame|miso|soy milk|soya milk|tempeh",
        "豆腐|酱油|豆浆|毛豆|味噌|腐竹|豆干",
    ),
    (
        "sesame",
        "sesame|sesame seeds",
        "芝麻",
        "tahini|hummus|sesame oil|halva|sesame bagel",
        "芝麻酱|麻酱|芝麻油|香油|芝麻糊|芝麻球",
    ),
    ("penicillin", "penicillin", "青霉素", "amoxicillin", "阿莫西林"),
    # not allergens, but foods a person cannot eat all the same (a vegetarian's meat, "不能吃辣",
    # "I don't drink alcohol")
    (
        "alcohol",
        "alcohol|alcoholic drinks|booze|drinking",
        "酒|酒精|喝酒",
        "wine|beer|lager|ale|cider|whisky|whiskey|vodka|gin|rum|champagne|prosecco|cocktail|cocktails|sherry|"
        "brandy|spirits|mulled wine|mojito|margarita|sangria|bitter|stout|pint of beer",
        "啤酒|白酒|红酒|葡萄酒|黄酒|米酒|鸡尾酒|香槟|威士忌|伏特加|二锅头|茅台|料酒",
    ),
    (
        # "no pork for me", "我不吃猪肉" (and a halal diet)
        "pork",
        "pork|pig meat",
        "猪肉",
        "ham|bacon|sausage|sausages|sausage roll|sausage rolls|pepperoni|salami|chorizo|prosciutto|pancetta|"
        "gammon|hot dog|hot dogs|pork pie|pigs in blankets|lard|spare ribs|pork ribs",
        "火腿|培根|腊肉|香肠|腊肠|叉烧|红烧肉|猪蹄|东坡肉|排骨|猪排|猪肉",
    ),
    (
        "meat",
        "meat|meat and fish",
        "肉|肉类|荤菜|荤",
        "chicken|beef|pork|bacon|ham|sausage|sausages|steak|lamb|turkey|burger|hamburger|meatballs|meatball|"
        "salami|pepperoni|mince|veal|duck|chorizo|prosciutto|hot dog|kebab|ribs|brisket|meatloaf|roast beef|"
        "fish|salmon|tuna|cod|prawns|shrimp|anchovies|gravy|lasagne|lasagna|bolognese|shepherd's pie|"
        "cottage pie|sunday roast|fried chicken|chicken soup|beef stew",
        "鸡肉|牛肉|猪肉|羊肉|鸭肉|培根|火腿|香肠|牛排|肉丸|红烧肉|烤鸭|鸡翅|排骨|肉包|肉夹馍|回锅肉|宫保鸡丁|"
        "鱼香肉丝|炸鸡|烤肉|涮羊肉|鸡汤|牛肉面|肉饺|鱼|虾|腊肉|肉末|狮子头|东坡肉|糖醋里脊|叉烧",
    ),
    (
        # "the doctor says no red meat" (gout, a heart): beef, lamb and pork; chicken and fish stay
        "red_meat",
        "red meat|red meats",
        "红肉",
        "beef|lamb|pork|steak|mince|burger|burgers|hamburger|sausage|sausages|bacon|ham|gammon|veal|venison|"
        "mutton|kebab|meatballs|meatball|roast beef|brisket|ribs|spare ribs|chorizo|salami|pepperoni|liver|"
        "lasagne|lasagna|bolognese|shepherd's pie|cottage pie|beef stew|corned beef|meatloaf|hot dog|hot dogs",
        "牛肉|羊肉|猪肉|牛排|红烧肉|排骨|涮羊肉|牛肉面|肉丸|香肠|腊肠|火腿|培根|腊肉|叉烧|东坡肉|狮子头",
    ),
    (
        "spicy",
        "spicy food|spicy foods|spicy things|spicy|chilli|chili|chillies|chilies",
        "辣|辣的|辛辣|辛辣食物|辣的东西|辣椒",
        "chilli|chili|chillies|curry|vindaloo|jalapeno|jalapeño|hot sauce|sriracha|buffalo wings|hot wings|"
        "kimchi|szechuan|sichuan|hotpot|hot pot|mapo tofu|kung pao|salsa|tabasco|wasabi|harissa|nduja|"
        "jerk chicken|chili con carne|peri peri|piri piri|chipotle|spicy",
        "火锅|麻辣|辣椒|辣子|麻婆豆腐|水煮鱼|水煮肉片|川菜|湘菜|剁椒|酸辣|辣条|毛血旺|口水鸡|辣白菜|泡菜|"
        "宫保鸡丁|香辣|红油|冒菜|串串|麻辣烫|辣酱|芥末|辣",
    ),
)
# Words that hold a food's name and are no food: "肌肉" (muscle), "肉桂" (cinnamon) hold 肉.
_NOT_FOODS_ZH = re.compile(r"肌肉|肉桂|果肉|肉眼|肉体|骨肉|皮肉|辣妹")
_NOT_FOODS_EN = re.compile(r"\b(?:ginger|root|birch) beer\b", re.I)

# key, English names, Chinese names, the foods the diet leaves out (allergen keys above), what
# it means said in English and in Chinese
_DIET_ROWS = (
    (
        "halal",
        "muslim|halal|a muslim",
        "清真|穆斯林",
        ("pork", "alcohol"),
        "no pork or alcohol",
        "吃清真，不吃猪肉、不喝酒",
    ),
    (
        "vegetarian",
        "vegetarian|a vegetarian|veggie",
        "素食者|吃素的|吃素|素食",
        ("meat",),
        "no meat or fish",
        "吃素，不吃肉",
    ),
    (
        "vegan",
        "vegan|a vegan",
        "纯素食者|吃全素|吃纯素|纯素",
        ("meat", "milk", "egg"),
        "no meat, fish, dairy or eggs",
        "吃纯素，不吃肉、蛋和奶制品",
    ),
)

# key, English names, Chinese names, what the condition rules out (allergen keys above)
_CONDITION_ROWS = (
    ("diabetes", "diabetes|type 2 diabetes|type 1 diabetes|diabetic", "糖尿病", ""),
    (
        "high_blood_pressure",
        "high blood pressure|hypertension",
        "高血压|血压高|血压有点高|血压有些高|血压偏高|血压比较高|血压很高",
        "",
    ),
    ("asthma", "asthma|asthmatic", "哮喘", ""),
    ("coeliac", "coeliac disease|celiac disease|coeliac|celiac", "乳糜泻", "gluten"),
    ("lactose_intolerance", "lactose intolerance|lactose intolerant", "乳糖不耐受|乳糖不耐", "milk"),
    ("epilepsy", "epilepsy|epileptic", "癫痫", ""),
    ("heart_disease", "heart disease|a heart condition|heart condition", "心脏病", ""),
    ("arthritis", "arthritis", "关节炎", ""),
    # what older people most often say of their joints ("I've got a bad knee, so I use a stick";
    # the first name with its article: "User has a bad knee.")
    (
        "bad_knee",
        "a bad knee|bad knee|bad knees|a dodgy knee|dodgy knee|dodgy knees|knee trouble|knee problems",
        "膝盖问题|膝盖不好|膝盖疼",
        "",
    ),
    ("bad_back", "a bad back|bad back|a dodgy back|dodgy back|back trouble|back problems", "腰病|腰不好|腰疼", ""),
    ("bad_hip", "a bad hip|bad hip|a dodgy hip|dodgy hip|hip trouble|hip problems", "髋关节问题|髋关节不好", ""),
    ("gout", "gout", "痛风", ""),
    ("dementia", "dementia|alzheimer's|alzheimers|alzheimer's disease", "老年痴呆|痴呆|阿尔茨海默病|阿尔茨海默症", ""),
    ("parkinsons", "parkinson's|parkinsons|parkinson's disease", "帕金森|帕金森病", ""),
    ("osteoporosis", "osteoporosis", "骨质疏松", ""),
    ("high_cholesterol", "high cholesterol", "高血脂|高胆固醇", ""),
    ("kidney_disease", "kidney disease", "肾病", ""),
    ("migraine", "migraines|migraine", "偏头痛", ""),
    ("pregnancy", "pregnant", "怀孕", ""),
    ("cancer", "cancer", "癌症", ""),
)

# key, English names, Chinese names (medicines said by name; "降压药" is the kind, not a name)
_MEDICATION_ROWS = (
    ("metformin", "metformin", "二甲双胍"),
    ("insulin", "insulin", "胰岛素"),
    ("aspirin", "aspirin", "阿司匹林"),
    ("ibuprofen", "ibuprofen", "布洛芬"),
    ("paracetamol", "paracetamol|acetaminophen|tylenol", "扑热息痛|对乙酰氨基酚"),
    ("warfarin", "warfarin", "华法林"),
    ("blood_thinner", "blood thinners|blood thinner|anticoagulants|anticoagulant", "抗凝药"),
    ("statin", "statins|statin|atorvastatin|simvastatin", "他汀|阿托伐他汀"),
    ("levothyroxine", "levothyroxine", "左甲状腺素"),
    ("blood_pressure_medication", "blood pressure pills|blood pressure medication|blood pressure tablets", "降压药"),
    ("diabetes_medication", "diabetes pills|diabetes medication", "降糖药"),
    ("antihistamine", "antihistamines|antihistamine", "抗过敏药"),
    ("sleeping_pill", "sleeping pills|sleeping pill", "安眠药"),
    ("antidepressant", "antidepressants|antidepressant", "抗抑郁药"),
    # common ones said by name (a name the table does not know is kept as said)
    ("gliclazide", "gliclazide", "格列齐特"),
    ("donepezil", "donepezil|aricept", "多奈哌齐|安理申"),
    ("amlodipine", "amlodipine", "氨氯地平"),
    ("ramipril", "ramipril", "雷米普利"),
    ("lisinopril", "lisinopril", "赖诺普利"),
    ("bisoprolol", "bisoprolol", "比索洛尔"),
    ("omeprazole", "omeprazole", "奥美拉唑"),
    ("sertraline", "sertraline", "舍曲林"),
    ("furosemide", "furosemide", "呋塞米"),
    ("clopidogrel", "clopidogrel", "氯吡格雷"),
    ("apixaban", "apixaban|eliquis", "阿哌沙班"),
    ("prednisolone", "prednisolone|prednisone", "泼尼松|泼尼松龙"),
    ("salbutamol", "salbutamol|ventolin|albuterol", "沙丁胺醇"),
    ("allopurinol", "allopurinol", "别嘌醇"),
    ("levodopa", "levodopa|sinemet", "左旋多巴"),
)


@dataclass(frozen=True)
class Term:
    key: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    foods_en: tuple[str, ...] = ()  # allergens: what contains it
    foods_zh: tuple[str, ...] = ()
    rules_out: str = ""  # conditions: the allergen key it makes unsafe

    def name(self, zh: bool) -> str:
        return self.zh[0] if zh else self.en[0]


def _split(words: str) -> tuple[str, ...]:
    return tuple(w for w in words.split("|") if w)


ALLERGENS = tuple(Term(k, _split(en), _split(zh), _split(fe), _split(fz)) for k, en, zh, fe, fz in _ALLERGEN_ROWS)
# the rows from alcohol on: foods a person leaves out by diet, faith or a doctor's word, never by
# an allergy ("I can't have red meat" is no allergy to meat)
NOT_ALLERGIES = frozenset(t.key for t in ALLERGENS[[t.key for t in ALLERGENS].index("alcohol") :])
CONDITIONS = tuple(Term(k, _split(en), _split(zh), rules_out=r) for k, en, zh, r in _CONDITION_ROWS)


@dataclass(frozen=True)
class Diet:
    """A way of eating that leaves foods out ("I'm vegetarian", "我吃素"): read as one
    `health:avoid:<food>` fact per food it leaves out."""

    key: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    leaves_out: tuple[str, ...]
    said_en: str
    said_zh: str


DIETS = tuple(Diet(k, _split(en), _split(zh), out, said_en, said_zh) for k, en, zh, out, said_en, said_zh in _DIET_ROWS)
MEDICATIONS = tuple(Term(k, _split(en), _split(zh)) for k, en, zh in _MEDICATION_ROWS)


def find(terms: tuple[Term, ...], said: str) -> Term | None:
    """The term a name says ("peanuts", "花生", "Celiac disease"), or None."""
    s = said.strip().lower()
    s = re.sub(r"^(?:a |an |the |some )", "", s)
    for term in terms:
        if s in term.en or s in term.zh:
            return term
    return None


def names_pattern(terms: tuple[Term, ...], zh: bool = False) -> str:
    """Every name of `terms` in one language as a regex alternation, the longest first (so
    "type 2 diabetes" is tried before "diabetes")."""
    names = (n for t in terms for n in (t.zh if zh else t.en))
    return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))


def named_in(terms: tuple[Term, ...], text: str) -> Term | None:
    """The term whose name `text` contains as whole words ("20mg of atorvastatin at night" →
    statin), the longest name if several do ("red meat", not "meat"; the first term of equals),
    or None."""
    best, longest = None, 0
    for term_ in terms:
        for name in term_.en:
            if len(name) > longest and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I):
                best, longest = term_, len(name)
        for name in term_.zh:
            if len(name) > longest and name in text:
                best, longest = term_, len(name)
    return best


_DRINKS = re.compile(
    r"\b(?:juice|alcohol|wine|beer|coffee|tea|drinks?|soda|cola|coke|lager|spirits|smoothies?|milkshakes?)\b|"
    r"酒|饮料|果汁|咖啡|茶",
    re.I,
)


def is_drink(name: str) -> bool:
    """Whether `name` is drunk rather than eaten ("cranberry juice", "alcohol"): said with
    "drink"/"have", not "eat"."""
    return bool(_DRINKS.search(name))


def known_food(said: str) -> bool:
    """Whether the tables name `said` as something to avoid or a food that holds one ("meat",
    "pork", "辣", "火锅"): what "I don't eat …" / "我不吃…" must name to be a safety fact, so
    that "I don't eat breakfast" is none."""
    s = re.sub(r"^(?:a |an |the |any |some )", "", said.strip().lower())
    return find(ALLERGENS, s) is not None or any(s in t.foods_en or s in t.foods_zh for t in ALLERGENS)


def term(terms: tuple[Term, ...], key: str) -> Term | None:
    return next((t for t in terms if t.key == key), None)


def canonical_key(terms: tuple[Term, ...], said: str) -> str:
    """The stable key part of a said name: the table's key when the table knows it ("花生" →
    "peanut"), else the words themselves ("pollen", "猫毛")."""
    found = find(terms, said)
    return found.key if found is not None else re.sub(r"\s+", "_", said.strip().lower())[:60]


# -- the guard's check ------------------------------------------------------------------------
# A mention that says the food is absent does not offer it: "peanut-free", "without peanuts",
# "no peanuts", "不含花生", "没有花生".
_ABSENT_EN = r"(?:without|no|free of|free from|instead of|rather than|avoid|avoiding|skip|not)\s+(?:any\s+)?"
_ABSENT_ZH = r"(?:不含|不加|没有|无|(?<!要)不要|别|避免|不吃|去掉|代替|不)"  # (不辣: not spicy)
# The sentence warns about the food rather than offering it.
_WARNING = re.compile(
    r"\b(?:avoid|avoiding|without|free|allergic|allergy|allergies|careful|stay away|contains?|"
    r"never|don't|do not|can't|cannot|shouldn't|should not|not safe|unsafe)\b|"
    r"(?<!要)不要|不含|别|避免|过敏|小心|注意|远离|不能|不可以|不宜",  # (要不要: "would you like")
    re.I,
)
# ... unless it then plays the danger down ("a little won't hurt", "吃一点没关系").
_PLAYED_DOWN = re.compile(
    r"\b(?:won't hurt|wouldn't hurt|a little|a bit of|just a bit|small amount|should be fine|is fine|"
    r"it's fine|is okay|is ok|are fine|are okay|don't worry|doesn't matter|one won't)\b|"
    r"没关系|一点点|少量|少吃点|没事|不要紧|问题不大",
    re.I,
)

# An offer in one clause is an offer whatever another clause warns: "You can have peanut butter
# cookies, but they may contain nuts" still offers them (the warning excuses a mention only in a
# sentence that offers nothing with the food).
_OFFER = re.compile(
    r"\b(?:you (?:can|could|might|may) (?:have|eat|try|get|enjoy)|how about|what about|why not|have some|"
    r"try|enjoy|let's (?:have|eat|make|get|grab)|grab)\b|可以吃|来点|来一份|试试|尝尝|吃点",
    re.I,
)
_CLAUSE = re.compile(r"[,;:，；：。!?！？]|\bbut\b|\bthough\b|\bhowever\b", re.I)


def _offered_in_a_clause(text: str, words_en: tuple[str, ...], words_zh: tuple[str, ...]) -> bool:
    """Whether a clause of `text` offers one of the words: an offer cue, then the food, and no
    warning in that clause."""
    for clause in _CLAUSE.split(text):
        cue = _OFFER.search(clause)
        if cue is None or _WARNING.search(clause):
            continue
        after = clause[cue.end() :]
        if _mentions(after, words_en, zh=False) or _mentions(after, words_zh, zh=True):
            return True
    return False


def _mentions(text: str, words: tuple[str, ...], zh: bool) -> str:
    """The first of `words` that `text` names, "" when none (whole words in English, plurals
    included: "almond" in "almonds"; any substring in Chinese)."""
    text = _NOT_FOODS_ZH.sub(" ", text) if zh else _NOT_FOODS_EN.sub(" ", text)
    for word in sorted(words, key=len, reverse=True):
        if zh:
            if word in text:
                return word
        else:
            stem = word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word
            if re.search(rf"(?<![\w-]){re.escape(stem)}(?:e?s)?(?![\w])", text, re.I):
                return word
    return ""


# an allergen said as a group: what else it keeps out ("seafood": the fish and the shellfish)
COVERS = {"seafood": ("fish", "shellfish")}


def _words_of(key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    found = term(ALLERGENS, key)
    if found is None:  # an allergen the table does not know: its own words ("cats", "猫毛")
        word = key.replace("_", " ")
        return ((), (word,)) if re.search(r"[\u4e00-\u9fff]", word) else ((word,), ())
    words_en, words_zh = found.en + found.foods_en, found.zh + found.foods_zh
    for member in COVERS.get(key, ()):  # "seafood": the fish and the shellfish and their dishes
        en, zh = _words_of(member)
        words_en, words_zh = words_en + en, words_zh + zh
    return words_en, words_zh


def mentioned_allergen(text: str, keys: tuple[str, ...]) -> tuple[str, str] | None:
    """(the word, the allergen key) when `text` names one of the allergens `keys` or a food
    that contains it ("satay" → peanut, "花生酱" → peanut), else None."""
    for key in keys:
        words_en, words_zh = _words_of(key)
        food = _mentions(text, words_en, zh=False) or _mentions(text, words_zh, zh=True)
        if food:
            return food, key
    return None


def offered_food(sentence: str, avoided: tuple[str, ...]) -> tuple[str, str] | None:
    """(the food, the allergen key) when `sentence` offers or suggests something the user must
    avoid (`avoided`: allergen keys, e.g. ("peanut",)), None when it does not, or only warns
    about it ("avoid peanut butter", "peanut-free", "不要吃花生酱")."""
    if not avoided:
        return None
    rest = sentence
    for key in avoided:
        words_en, words_zh = _words_of(key)
        if words_en:
            absent_en = "|".join(re.escape(w) for w in sorted(words_en, key=len, reverse=True))
            rest = re.sub(rf"\b{_ABSENT_EN}(?:{absent_en})(?:e?s)?\b", " ", rest, flags=re.I)
            rest = re.sub(rf"(?<![\w-])(?:{absent_en})(?:e?s)?[- ]free\b", " ", rest, flags=re.I)
        if words_zh:
            absent_zh = "|".join(re.escape(w) for w in sorted(words_zh, key=len, reverse=True))
            rest = re.sub(rf"{_ABSENT_ZH}(?:吃|喝|用)?(?:{absent_zh})", " ", rest)
        food = _mentions(rest, words_en, zh=False) or _mentions(rest, words_zh, zh=True)
        if not food:
            continue
        warned = _WARNING.search(sentence) and not _PLAYED_DOWN.search(sentence)
        if warned and not _offered_in_a_clause(rest, words_en, words_zh):
            continue
        return food, key
    return None


def avoided_keys(keys: list[str] | tuple[str, ...], household: bool = False) -> tuple[str, ...]:
    """The allergen keys a user must avoid, from their fact keys: each allergy
    (`health:allergy:peanut`), each food they cannot eat (`health:avoid:gluten`), and what a
    condition rules out (`health:condition:coeliac` → gluten). `household`: also those of the
    people they live with (`health:allergy:peanut:son`): what a suggestion must leave out, as
    food is shared; not what the user themselves cannot eat."""
    out: list[str] = []
    for key in keys:
        parts = key.split(":")
        if parts[0] != "health" or not (len(parts) == 3 or (household and len(parts) == 4)):
            continue
        if parts[1] in ("allergy", "avoid"):
            out.append(parts[2])
            out += list(COVERS.get(parts[2], ()))
        elif parts[1] == "condition" and (found := term(CONDITIONS, parts[2])) is not None and found.rules_out:
            out.append(found.rules_out)
    return tuple(dict.fromkeys(out))


def english_safety_line(key: str) -> str:
    """A safety fact said in English from its key alone ("health:allergy:peanut" → "User is
    allergic to peanuts."), for an English-only prompt when the person said it in Chinese; ""
    when the tables do not know the thing."""
    kind, _, name = key.partition(":")[2].partition(":")
    name, _, relation = name.partition(":")  # a household member's: health:allergy:peanut:son
    if relation and not relation.isascii():
        relation = "family member"  # (哥哥, 奶奶: no one English word)
    tables = {
        "allergy": (ALLERGENS, "is allergic to"),
        "avoid": (ALLERGENS, "cannot eat"),
        "condition": (CONDITIONS, "has"),
        "medication": (MEDICATIONS, "takes"),
    }
    if kind not in tables:
        return ""
    terms, verb = tables[kind]
    found = term(terms, name)
    if found is None:
        return ""
    return f"User's {relation} {verb} {found.en[0]}." if relation else f"User {verb} {found.en[0]}."
