"""Generate bench/data/long_memory/: a long-conversation set for bench_long_memory.py.

`python -m bench.long_memory_data [--seed N] [--out DIR]` writes, for a seed:

- conversations.jsonl: one turn a line {"owner", "time", "speaker", "text", "id", "session"}
  (the `fay-ros memory replay` format plus the owner): per person 26 sessions over eight
  weeks, the person's words and the companion's replies, small talk that shares the
  questions' words, facts stated once or restated, preferences that flip and flip back,
  events told with relative dates ("yesterday", "last Saturday", "上周六", "前天").
- questions.jsonl: {"owner", "id", "now", "category", "question", "answer", "evidence",
  "split"}: single-hop, multi-hop (two turns), temporal (the answer is an absolute ISO date)
  and preference-current (the latest value); `evidence` are the gold turn ids; `split` is
  "tune" or "held" (every other question of each category, after a seeded shuffle).

Two people: one speaks English, one Chinese. The committed files are seed 35; the review's
held-out set is another seed or another author's set of the same kind. The generator keeps
its own date arithmetic (it does not import fay_ros), so it checks the resolver rather than
repeating it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "long_memory"
START = datetime.date(2026, 9, 28)  # a Monday
WEEKS = 8
SESSIONS = 26

WEEKDAY_EN = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WEEKDAY_ZH = ["一", "二", "三", "四", "五", "六", "日"]


@dataclass
class Statement:
    """Something the person says about themselves, placed in a session (or later)."""

    text: str
    key: str = ""
    reply: str = ""
    not_before: int = 0  # the earliest session index
    turn_id: str = ""
    session: int = -1
    place: str = ""  # an event's object, the answer to "what did I do on <day>?"


@dataclass
class Person:
    owner: str
    lang: str
    statements: list[Statement] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)


# ---------------------------------------------------------------- relative dates
def rel_en(rng: random.Random, said: datetime.date) -> tuple[str, datetime.date]:
    choice = rng.choice(["yesterday", "two days ago", "last", "day before", "three days ago", "this morning"])
    if choice == "yesterday":
        return "Yesterday", said - datetime.timedelta(days=1)
    if choice == "two days ago":
        return "Two days ago", said - datetime.timedelta(days=2)
    if choice == "three days ago":
        return "Three days ago", said - datetime.timedelta(days=3)
    if choice == "day before":
        return "The day before yesterday", said - datetime.timedelta(days=2)
    if choice == "this morning":
        return "This morning", said
    weekday = rng.randrange(7)
    back = (said.weekday() - weekday) % 7 or 7
    return f"Last {WEEKDAY_EN[weekday]}", said - datetime.timedelta(days=back)


def rel_zh(rng: random.Random, said: datetime.date) -> tuple[str, datetime.date]:
    choice = rng.choice(["昨天", "前天", "上周", "三天前", "今天上午"])
    if choice == "昨天":
        return "昨天", said - datetime.timedelta(days=1)
    if choice == "前天":
        return "前天", said - datetime.timedelta(days=2)
    if choice == "三天前":
        return "三天前", said - datetime.timedelta(days=3)
    if choice == "今天上午":
        return "今天上午", said
    weekday = rng.randrange(7)
    monday = said - datetime.timedelta(days=said.weekday())
    return f"上周{WEEKDAY_ZH[weekday]}", monday - datetime.timedelta(days=7 - weekday)


# ---------------------------------------------------------------- English person
EN_SMALL_TALK = [
    ("What's the weather like today?", "It looks cloudy with a chance of rain later."),
    ("Tell me a joke.", "Why did the scarecrow win an award? He was outstanding in his field."),
    ("I saw a documentary about hiking in Nepal, it was stunning.", "The Himalaya must look amazing on screen."),
    ("My colleague drinks way too much coffee.", "Some people run on it!"),
    ("Do you think it will snow this winter?", "It's hard to say this early."),
    ("I read that dogs can smell fear, is that true?", "They do pick up on stress hormones."),
    ("What's a good recipe for a rainy evening?", "A warm lentil soup is hard to beat."),
    ("The traffic was terrible on the way home.", "That sounds exhausting."),
    ("I should really clean the kitchen.", "A little every day helps."),
    ("Can you recommend a podcast?", "Maybe a history podcast for your commute?"),
    ("My neighbour's cat keeps sitting on our car.", "Cats love a warm bonnet."),
    ("I'm a bit tired today.", "Maybe an early night would help."),
    ("Do you know any good board games?", "Ticket to Ride is a friendly one."),
    ("The news about the election is everywhere.", "It's hard to avoid this week."),
    ("I watched a cooking show about sushi last night, just for fun.", "Sushi shows are mesmerising."),
    ("Someone at work is allergic to cats, poor thing.", "That must be hard around pet owners."),
    ("My friend's sister is a doctor in Leeds.", "Doctors work such long hours."),
    ("What time is it in Tokyo right now?", "It's the middle of the night there."),
    ("I love the smell of fresh bread.", "Few things beat it."),
    ("Should I buy a new phone?", "Only if the old one is letting you down."),
    ("The museum downtown has a new exhibition.", "Exhibitions are a nice weekend plan."),
    ("I need to call the bank tomorrow.", "I can remind you if you like."),
    ("How far is the moon?", "About 384,000 kilometres."),
    ("My favourite season is autumn, the colours are great.", "Autumn leaves are lovely."),
]

EN_PEOPLE = ["Anna", "Clara", "Maya", "Julia", "Nora", "Ella", "Rosa", "Lena"]
EN_BROTHERS = ["Tom", "Max", "Sam", "Ben", "Leo", "Jack", "Finn", "Owen"]
EN_JOBS = ["nurse", "architect", "teacher", "accountant", "pharmacist", "engineer", "librarian", "chef"]
EN_CITIES = ["Leeds", "Bristol", "Glasgow", "York", "Cardiff", "Bath", "Norwich", "Brighton"]
EN_ALLERGENS = ["peanuts", "shellfish", "penicillin", "pollen", "sesame", "eggs"]
EN_PETS = [("dog", "Biscuit"), ("cat", "Pepper"), ("rabbit", "Clover"), ("parrot", "Kiwi"), ("dog", "Maple")]
EN_DRINKS = ["cola", "coffee", "green tea", "lemonade", "hot chocolate"]
EN_FOODS = ["pizza", "sushi", "curry", "pasta", "ramen", "tacos"]
EN_MUSIC = ["jazz", "rock", "classical music", "hip hop", "folk music"]
EN_SPORTS = ["tennis", "swimming", "cycling", "badminton", "yoga"]
EN_EVENTS = [
    (
        "went hiking at {place}",
        ["Malham Cove", "Snowdon", "Ben Nevis", "Scafell Pike"],
        "When did I go hiking at {place}?",
    ),
    (
        "visited the {place}",
        ["Natural History Museum", "Tate Modern", "Science Museum"],
        "When did I visit the {place}?",
    ),
    ("had dinner at {place}", ["Dishoom", "the Ivy", "Nando's on Queen Street"], "When did I have dinner at {place}?"),
    (
        "went to the dentist for {place}",
        ["a filling", "a check-up", "a cleaning"],
        "When did I go to the dentist for {place}?",
    ),
    (
        "went kayaking on {place}",
        ["Lake Windermere", "the river Wye", "Loch Lomond"],
        "When did I go kayaking on {place}?",
    ),
    (
        "watched {place} at the cinema",
        ["Dune Part Three", "the new Pixar film", "a French thriller"],
        "When did I watch {place} at the cinema?",
    ),
    (
        "ran a 10k race in {place}",
        ["Hyde Park", "Roundhay Park", "the Meadows"],
        "When did I run the 10k race in {place}?",
    ),
    ("took the train to {place}", ["Edinburgh", "Manchester", "Oxford"], "When did I take the train to {place}?"),
    (
        "had a job interview at {place}",
        ["a bank", "the council", "a design studio"],
        "When did I have a job interview at {place}?",
    ),
    (
        "went to a concert by {place}",
        ["Coldplay", "Adele", "a string quartet"],
        "When did I go to the concert by {place}?",
    ),
    (
        "went fishing with {place}",
        ["my uncle", "my neighbour", "an old school friend"],
        "When did I go fishing with {place}?",
    ),
    ("painted the {place}", ["garden fence", "spare bedroom", "front door"], "When did I paint the {place}?"),
]


def english(rng: random.Random, owner: str) -> Person:
    p = Person(owner, "en")
    q = p.questions
    sister, brother = rng.sample(EN_PEOPLE, 1)[0], rng.choice(EN_BROTHERS)
    job, sister_job, brother_job = rng.sample(EN_JOBS, 3)
    home, brother_city, friend_city = rng.sample(EN_CITIES, 3)
    allergen = rng.choice(EN_ALLERGENS)
    (pet, pet_name), (sister_pet, sister_pet_name) = rng.sample(EN_PETS, 2)
    son = rng.choice(["Oscar", "Arlo", "Theo", "Felix"])
    son_age = rng.randint(5, 11)
    pet_age = rng.randint(2, 12)
    friend = rng.choice(["Priya", "Hannah", "Grace", "Zoe"])
    car = rng.choice(["a blue Volvo", "a red Fiat", "a silver Toyota"])
    instrument = rng.choice(["the piano", "the guitar", "the violin"])

    def say(text, key="", reply="That's good to know.", not_before=0):
        s = Statement(text, key, reply, not_before)
        p.statements.append(s)
        return s

    def ask(category, question, answer, *evidence, now=None):
        q.append({"category": category, "question": question, "answer": answer, "evidence": list(evidence), "now": now})

    # single-hop facts (some restated later: every restatement is evidence)
    s = say(f"I work as a {job} at the local hospital trust.", "job", f"Being a {job} must keep you busy.")
    ask("single-hop", "What do I do for a living?", job, s)
    s = say(f"I'm allergic to {allergen}, so I have to read every label.", "allergy", "I'll keep that in mind.")
    s2 = say(f"Remember, {allergen} give me a really bad reaction.", "allergy", "Noted, I'll be careful.", 12)
    ask("single-hop", "What am I allergic to?", allergen, s, s2)
    s = say(f"We live in {home}, near the station.", "home", f"{home} is a nice place.")
    ask("single-hop", "Which city do I live in?", home, s)
    pet_s = say(f"My {pet} is called {pet_name}.", "pet", f"{pet_name} is a lovely name.")
    ask("single-hop", f"What is my {pet}'s name?", pet_name, pet_s)
    son_s = say(f"My son {son} is {son_age} years old.", "son", f"{son_age} is a fun age.")
    ask("single-hop", "How old is my son?", str(son_age), son_s)
    sister_s = say(f"My sister is called {sister}.", "sister", f"Is {sister} older or younger than you?")
    ask("single-hop", "What is my sister's name?", sister, sister_s)
    brother_s = say(f"My brother is {brother}.", "brother", "Do you see him often?")
    ask("single-hop", "What's my brother called?", brother, brother_s)
    friend_s = say(f"My best friend {friend} and I met at university.", "friend", "University friends are the best.")
    ask("single-hop", "Who is my best friend?", friend, friend_s)
    s = say(f"I drive {car}, it's old but reliable.", "car", "Reliable is what matters.")
    ask("single-hop", "What car do I drive?", car.split(" ", 1)[1], s)
    s = say(f"I've been learning to play {instrument} for a year.", "instrument", "Practice pays off.")
    ask("single-hop", "Which instrument am I learning?", instrument.split()[-1], s)
    s = say("My husband Daniel works nights at the airport.", "husband", "Night shifts are hard.")
    ask("single-hop", "Where does my husband work?", "airport", s)
    s = say(f"I'm {rng.randint(31, 48)} and I feel it in my knees.", "age", "Knees do complain.")
    ask("single-hop", "How old am I?", s.text.split()[1], s)

    # multi-hop: the link is in one turn, the answer in another
    a = say(f"My sister {sister} has a {sister_pet}.", "sister_pet", f"What's the {sister_pet} called?")
    b = say(f"{sister}'s {sister_pet} {sister_pet_name} chewed her shoes again.", "", "Oh no!", 4)
    ask("multi-hop", "What is the name of my sister's pet?", sister_pet_name, a, b)
    a2 = say(f"{sister} just got promoted, she's a senior {sister_job} now.", "", "Congratulations to her!", 3)
    ask("multi-hop", "What does my sister do for work?", sister_job, sister_s, a2)
    a = say(f"{brother} moved to {brother_city} last year.", "", f"{brother_city} is a great city.", 2)
    ask("multi-hop", "Which city does my brother live in?", brother_city, brother_s, a)
    article = "an" if brother_job[0] in "aeiou" else "a"
    a = say(f"{brother} works as {article} {brother_job} now.", "", "Nice.", 5)
    ask("multi-hop", "What is my brother's job?", brother_job, brother_s, a)
    a = say(f"{friend} lives in {friend_city} these days.", "", "Do you visit her?", 6)
    ask("multi-hop", "Where does my best friend live?", friend_city, friend_s, a)
    a = say(f"{pet_name} turned {pet_age} last month.", "", "Happy birthday to them!", 8)
    ask("multi-hop", f"How old is my {pet}?", str(pet_age), pet_s, a)
    teacher = rng.choice(["Patel", "Okafor", "Hughes", "Brennan"])
    a = say(f"{son}'s teacher, Mrs {teacher}, says he is doing well.", "", "That's great news.", 9)
    ask("multi-hop", "What is my son's teacher called?", teacher, son_s, a)

    # preferences that flip (and flip back): the question wants the latest
    for topic, pool, question in (
        ("drink", EN_DRINKS, "What do I like to drink these days?"),
        ("food", EN_FOODS, "What is my favourite food now?"),
        ("music", EN_MUSIC, "What kind of music am I into at the moment?"),
        ("sport", EN_SPORTS, "Which sport do I currently enjoy most?"),
    ):
        first, second = rng.sample(pool, 2)
        values = [first, second, first] if rng.random() < 0.6 else [first, second]
        phrasing = {
            "drink": ["I really like {v}.", "These days I prefer {v}.", "Honestly I'm back to {v} now."],
            "food": ["My favourite food is {v}.", "I'm all about {v} lately.", "I've gone back to loving {v}."],
            "music": ["I mostly listen to {v}.", "I've switched to {v} recently.", "I'm into {v} again."],
            "sport": ["I love playing {v}.", "I've taken up {v} instead.", "I'm back to {v} these days."],
        }[topic]
        stated = []
        for k, v in enumerate(values):
            stated.append(say(phrasing[k].format(v=v), f"pref:{topic}", "Good choice.", not_before=k * 8))
        ask("preference-current", question, values[-1], stated[-1])

    # events told with relative dates: "When did I ...?" -> the absolute day
    for template, places, question in rng.sample(EN_EVENTS, len(EN_EVENTS)):
        place = rng.choice(places)
        s = say("{rel} I " + template.format(place=place) + ".", "event", "That sounds like quite a day.", 1)
        s.place = place
        q.append(
            {
                "category": "temporal",
                "question": question.format(place=place),
                "answer": None,
                "evidence": [s],
                "now": None,
                "_event": True,
            }
        )
    return p


# ---------------------------------------------------------------- Chinese person
ZH_SMALL_TALK = [
    ("今天天气怎么样？", "今天多云，晚上可能有雨。"),
    ("给我讲个笑话吧。", "为什么数学书总是很忧郁？因为它有太多的问题。"),
    ("我看了一个关于爬山的纪录片，风景真好。", "高山的风景确实很震撼。"),
    ("我同事每天喝好几杯咖啡。", "有些人离不开咖啡。"),
    ("今年冬天会下雪吗？", "现在还不好说。"),
    ("下雨天适合做什么菜？", "煮一锅热汤很不错。"),
    ("回家路上堵车堵得厉害。", "那一定很累吧。"),
    ("我该打扫厨房了。", "每天收拾一点就轻松多了。"),
    ("推荐一个播客吧。", "通勤的时候可以听听历史类的。"),
    ("邻居家的猫总趴在我们车上。", "猫喜欢暖和的地方。"),
    ("我今天有点累。", "早点休息吧。"),
    ("有什么好玩的桌游吗？", "可以试试卡坦岛。"),
    ("新闻里天天都在说选举。", "这几天确实到处都是。"),
    ("昨晚随便看了个做寿司的节目。", "寿司节目挺解压的。"),
    ("我朋友的姐姐在杭州当医生。", "医生工作很辛苦。"),
    ("东京现在几点？", "那边已经是半夜了。"),
    ("我很喜欢新鲜面包的味道。", "刚出炉的面包最香了。"),
    ("要不要换个新手机？", "旧的还好用就不急。"),
    ("市中心的博物馆有新展览。", "周末可以去看看。"),
    ("明天要给银行打电话。", "需要的话我可以提醒你。"),
    ("月亮离地球有多远？", "大约三十八万公里。"),
    ("我最喜欢秋天，颜色很漂亮。", "秋天的树叶确实好看。"),
    ("听说吃海鲜的人越来越多了。", "海鲜确实很受欢迎。"),
    ("公司楼下新开了一家奶茶店。", "可以去尝尝。"),
]
ZH_SISTERS = ["小红", "小芳", "丽丽", "婷婷", "晓雯", "佳佳"]
ZH_BROTHERS = ["大伟", "小军", "阿强", "志明", "浩然"]
ZH_JOBS = ["护士", "老师", "会计", "工程师", "医生", "律师", "厨师"]
ZH_CITIES = ["杭州", "苏州", "成都", "南京", "厦门", "青岛", "武汉"]
ZH_ALLERGENS = ["海鲜", "花生", "芒果", "青霉素", "花粉"]
ZH_PETS = [("狗", "豆豆"), ("猫", "年糕"), ("兔子", "雪球"), ("鹦鹉", "小绿"), ("猫", "汤圆")]
ZH_DRINKS = ["可乐", "咖啡", "绿茶", "奶茶", "豆浆"]
ZH_FOODS = ["火锅", "寿司", "饺子", "烤鸭", "麻辣烫", "小笼包"]
ZH_MUSIC = ["爵士乐", "摇滚", "古典音乐", "民谣", "流行歌"]
ZH_SPORTS = ["羽毛球", "游泳", "跑步", "乒乓球", "瑜伽"]
ZH_EVENTS = [
    ("去爬了{place}", ["黄山", "泰山", "华山", "峨眉山"], "我什么时候去爬的{place}？"),
    ("去了{place}", ["西湖", "故宫", "外滩", "鼓浪屿"], "我是哪天去的{place}？"),
    ("在{place}吃了晚饭", ["海底捞", "外婆家", "全聚德"], "我哪天在{place}吃的晚饭？"),
    ("去看了牙医，做了{place}", ["补牙", "洗牙", "拔牙"], "我哪天去看牙医做了{place}？"),
    ("在{place}划船", ["玄武湖", "东湖", "太湖"], "我什么时候在{place}划的船？"),
    ("去电影院看了{place}", ["流浪地球", "哪吒", "一部法国电影"], "我哪天去电影院看了{place}？"),
    ("在{place}跑了十公里", ["奥森公园", "世纪公园", "滨江公园"], "我什么时候在{place}跑的十公里？"),
    ("坐高铁去了{place}", ["上海", "北京", "广州"], "我哪天坐高铁去的{place}？"),
    ("去{place}面试了", ["一家银行", "一家设计公司", "区政府"], "我什么时候去{place}面试的？"),
    ("去听了{place}的演唱会", ["周杰伦", "五月天", "陈奕迅"], "我哪天去听的{place}的演唱会？"),
    ("和{place}去钓鱼了", ["我舅舅", "邻居老王", "老同学"], "我哪天和{place}去钓的鱼？"),
    ("把{place}刷了一遍漆", ["院子的栅栏", "小卧室", "大门"], "我什么时候把{place}刷的漆？"),
]


def chinese(rng: random.Random, owner: str) -> Person:
    p = Person(owner, "zh")
    q = p.questions
    sister, brother = rng.choice(ZH_SISTERS), rng.choice(ZH_BROTHERS)
    job, sister_job, brother_job = rng.sample(ZH_JOBS, 3)
    home, brother_city, friend_city = rng.sample(ZH_CITIES, 3)
    allergen = rng.choice(ZH_ALLERGENS)
    (pet, pet_name), (sister_pet, sister_pet_name) = rng.sample(ZH_PETS, 2)
    son = rng.choice(["乐乐", "豆丁", "小宝", "阳阳"])
    son_age, pet_age = rng.randint(5, 11), rng.randint(2, 12)
    friend = rng.choice(["王静", "李娜", "陈晨", "赵敏"])
    car = rng.choice(["蓝色的比亚迪", "白色的大众", "红色的丰田"])
    instrument = rng.choice(["钢琴", "吉他", "古筝"])

    def say(text, key="", reply="好的，我记住了。", not_before=0):
        s = Statement(text, key, reply, not_before)
        p.statements.append(s)
        return s

    def ask(category, question, answer, *evidence):
        q.append(
            {"category": category, "question": question, "answer": answer, "evidence": list(evidence), "now": None}
        )

    s = say(f"我是一名{job}，在市里上班。", "job", f"当{job}挺辛苦的吧。")
    ask("single-hop", "我是做什么工作的？", job, s)
    s = say(f"我对{allergen}过敏，吃东西得特别小心。", "allergy", "我会记住的。")
    s2 = say(f"提醒一下，我一碰{allergen}就过敏。", "allergy", "好的，会注意。", 12)
    ask("single-hop", "我对什么过敏？", allergen, s, s2)
    s = say(f"我们家住在{home}，离地铁站很近。", "home", f"{home}是个好地方。")
    ask("single-hop", "我住在哪个城市？", home, s)
    pet_s = say(f"我家的{pet}叫{pet_name}。", "pet", f"{pet_name}这个名字真可爱。")
    ask("single-hop", f"我家的{pet}叫什么名字？", pet_name, pet_s)
    son_s = say(f"我儿子{son}今年{son_age}岁了。", "son", f"{son_age}岁正是好玩的时候。")
    ask("single-hop", "我儿子几岁了？", str(son_age), son_s)
    sister_s = say(f"我姐姐叫{sister}。", "sister", "你们关系好吗？")
    ask("single-hop", "我姐姐叫什么？", sister, sister_s)
    brother_s = say(f"我弟弟叫{brother}。", "brother", "你们常见面吗？")
    ask("single-hop", "我弟弟叫什么名字？", brother, brother_s)
    friend_s = say(f"我最好的朋友是{friend}，我们是大学同学。", "friend", "大学的朋友最珍贵。")
    ask("single-hop", "我最好的朋友是谁？", friend, friend_s)
    s = say(f"我开一辆{car}，虽然旧但是很可靠。", "car", "可靠最重要。")
    ask("single-hop", "我开的是什么车？", car[-2:], s)
    s = say(f"我学{instrument}已经一年了。", "instrument", "坚持就会有进步。")
    ask("single-hop", "我在学什么乐器？", instrument, s)
    s = say("我老公在机场上夜班。", "husband", "夜班很辛苦。")
    ask("single-hop", "我老公在哪里工作？", "机场", s)
    age = rng.randint(31, 48)
    s = say(f"我今年{age}岁，膝盖开始不舒服了。", "age", "要注意保养。")
    ask("single-hop", "我今年多大？", str(age), s)

    a = say(f"我姐姐{sister}养了一只{sister_pet}。", "sister_pet", f"那只{sister_pet}叫什么？")
    b = say(f"{sister}家的{sister_pet}{sister_pet_name}又把她的鞋咬坏了。", "", "哈哈，真调皮。", 4)
    ask("multi-hop", "我姐姐养的宠物叫什么名字？", sister_pet_name, a, b)
    a2 = say(f"{sister}升职了，现在是高级{sister_job}。", "", "恭喜她！", 3)
    ask("multi-hop", "我姐姐是做什么工作的？", sister_job, sister_s, a2)
    a = say(f"{brother}去年搬到了{brother_city}。", "", f"{brother_city}是个好城市。", 2)
    ask("multi-hop", "我弟弟住在哪个城市？", brother_city, brother_s, a)
    a = say(f"{brother}现在当{brother_job}。", "", "挺好的。", 5)
    ask("multi-hop", "我弟弟是做什么的？", brother_job, brother_s, a)
    a = say(f"{friend}现在住在{friend_city}。", "", "你会去看她吗？", 6)
    ask("multi-hop", "我最好的朋友住在哪里？", friend_city, friend_s, a)
    a = say(f"{pet_name}上个月满{pet_age}岁了。", "", "祝它生日快乐！", 8)
    ask("multi-hop", f"我家的{pet}几岁了？", str(pet_age), pet_s, a)
    teacher = rng.choice(["张", "刘", "周", "黄"])
    a = say(f"{son}的班主任{teacher}老师说他表现很好。", "", "太好了。", 9)
    ask("multi-hop", "我儿子的班主任姓什么？", teacher, son_s, a)

    for topic, pool, question in (
        ("drink", ZH_DRINKS, "我现在喜欢喝什么？"),
        ("food", ZH_FOODS, "我现在最爱吃什么？"),
        ("music", ZH_MUSIC, "我最近喜欢听什么音乐？"),
        ("sport", ZH_SPORTS, "我现在最喜欢什么运动？"),
    ):
        first, second = rng.sample(pool, 2)
        values = [first, second, first] if rng.random() < 0.6 else [first, second]
        phrasing = {
            "drink": ["我很喜欢喝{v}。", "最近我更喜欢喝{v}了。", "我现在又改回喝{v}了。"],
            "food": ["我最爱吃{v}。", "最近迷上了{v}。", "我又开始爱吃{v}了。"],
            "music": ["我平时主要听{v}。", "最近改听{v}了。", "我又喜欢上{v}了。"],
            "sport": ["我很喜欢{v}。", "我最近开始练{v}了。", "我现在又回到{v}了。"],
        }[topic]
        stated = []
        for k, v in enumerate(values):
            stated.append(say(phrasing[k].format(v=v), f"pref:{topic}", "不错的选择。", not_before=k * 8))
        ask("preference-current", question, values[-1], stated[-1])

    for template, places, question in rng.sample(ZH_EVENTS, len(ZH_EVENTS)):
        place = rng.choice(places)
        s = say("{rel}我" + template.format(place=place) + "。", "event", "听起来很充实。", 1)
        s.place = place
        q.append(
            {
                "category": "temporal",
                "question": question.format(place=place),
                "answer": None,
                "evidence": [s],
                "now": None,
                "_event": True,
            }
        )
    return p


# ---------------------------------------------------------------- sessions
def place(rng: random.Random, person: Person, prefix: str) -> tuple[list[dict], list[dict]]:
    """Spread the person's statements over SESSIONS sessions with small talk; resolve the
    events' relative dates; number the turns. Returns (turns, questions)."""
    days = sorted(rng.sample(range(WEEKS * 7), SESSIONS))
    sessions: list[list[Statement | tuple[str, str]]] = [[] for _ in range(SESSIONS)]
    for s in person.statements:
        s.session = rng.randrange(min(s.not_before, SESSIONS - 1), SESSIONS)
    # keep the flips in order: re-sort each preference's sessions
    by_key: dict[str, list[Statement]] = {}
    for s in person.statements:
        if s.key.startswith("pref:"):
            by_key.setdefault(s.key, []).append(s)
    for group in by_key.values():
        spots = sorted(rng.sample(range(SESSIONS), len(group)))
        for s, spot in zip(group, spots):
            s.session = spot
    for s in person.statements:
        sessions[s.session].append(s)
    talk = EN_SMALL_TALK if person.lang == "en" else ZH_SMALL_TALK
    turns: list[dict] = []
    for k, items in enumerate(sessions):
        when = datetime.datetime.combine(START + datetime.timedelta(days=days[k]), datetime.time(rng.randint(8, 20)))
        items = items + [rng.choice(talk) for _ in range(rng.randint(3, 6))]
        rng.shuffle(items)
        session = f"{prefix}-s{k:02d}"
        for item in items:
            if isinstance(item, Statement):
                text = item.text
                if "{rel}" in text:
                    rel, event_day = (rel_en if person.lang == "en" else rel_zh)(rng, when.date())
                    text = text.replace("{rel}", rel)
                    item.text = text
                    item.event_day = event_day  # type: ignore[attr-defined]
                user, reply = text, item.reply
            else:
                user, reply = item
            for speaker, words in (("user", user), ("assistant", reply)):
                turn_id = f"{session}-t{len([t for t in turns if t['session'] == session]):02d}"
                if speaker == "user" and isinstance(item, Statement):
                    item.turn_id = turn_id
                turns.append(
                    {
                        "owner": person.owner,
                        "time": when.isoformat(timespec="seconds"),
                        "speaker": speaker,
                        "text": words,
                        "id": turn_id,
                        "session": session,
                    }
                )
                when += datetime.timedelta(seconds=rng.randint(20, 90))
    last = max(datetime.datetime.fromisoformat(t["time"]) for t in turns)
    # "what did I do on <day>?": days with exactly one event (the answer is what happened)
    events = [s for s in person.statements if hasattr(s, "event_day")]
    days: dict[datetime.date, list[Statement]] = {}
    for s in events:
        days.setdefault(s.event_day, []).append(s)  # type: ignore[attr-defined]
    single = [group[0] for group in days.values() if len(group) == 1]
    for s in rng.sample(single, min(4, len(single))):
        day = s.event_day  # type: ignore[attr-defined]
        question = (
            f"What did I do on {day.strftime('%B')} {day.day}?"
            if person.lang == "en"
            else f"我{day.month}月{day.day}日做了什么？"
        )
        person.questions.append({"category": "temporal", "question": question, "answer": s.place, "evidence": [s]})
    questions = []
    for n, q in enumerate(person.questions):
        evidence = q["evidence"]
        if q.get("_event"):
            q["answer"] = evidence[0].event_day.isoformat()
        now = last + datetime.timedelta(days=1)
        questions.append(
            {
                "owner": person.owner,
                "id": f"{prefix}-q{n:02d}",
                "now": now.replace(hour=9, minute=0, second=0).isoformat(timespec="seconds"),
                "category": q["category"],
                "question": q["question"],
                "answer": q["answer"],
                "evidence": [s.turn_id for s in evidence],
            }
        )
    return turns, questions


def generate(seed: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    turns: list[dict] = []
    questions: list[dict] = []
    people = [(english(rng, "emma"), "en1"), (chinese(rng, "lin"), "zh1")]
    people += [(english(rng, "oliver"), "en2"), (chinese(rng, "wei"), "zh2")]
    for person, prefix in people:
        t, q = place(rng, person, prefix)
        turns += t
        questions += q
    # split: every other question of each category (after a seeded shuffle) is held out
    by_category: dict[str, list[dict]] = {}
    for q in questions:
        by_category.setdefault(q["category"], []).append(q)
    for group in by_category.values():
        rng.shuffle(group)
        for k, q in enumerate(group):
            q["split"] = "tune" if k % 2 == 0 else "held"
    return turns, questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    turns, questions = generate(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "conversations.jsonl", "w", encoding="utf-8") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(turns)} turns, {len(questions)} questions -> {out}")


if __name__ == "__main__":
    main()
