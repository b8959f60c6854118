"""What a person says about themselves, read from their own words by rules (no model).

"My name is Tom", "I like hiking", "I don't like coffee", "my sister is called Anna",
"I'm going to Paris tomorrow", "我叫林", "我喜欢咖啡", "我女儿叫小雨", "我明天要去北京" are
first-person statements: the user's own word about the user, not something a model
inferred. The memory policy therefore treats a statement found here as confirmed (see
docs/MEMORY_SCHEMA.md, "Statements about oneself"), while anything a model concludes stays a
candidate.

Each statement becomes a keyed Fay observation, so a later statement with the same key
supersedes the earlier one ("I like coffee" → "I don't like coffee anymore"):

| kind | key | content (English / Chinese) |
|---|---|---|
| fact | `name` | `User's name is Tom.` / `用户的名字是林。` |
| preference | `taste:<thing>` | `User likes hiking.` / `User does not like coffee.` / `用户喜欢咖啡。` |
| fact | `family:<relation>` | `User's sister is called Anna.` / `User has a sister.` / `用户的女儿叫小雨。` |
| event | `plan:<when>` | `User is going to Paris on Saturday, 6 March 2027.` (said "tomorrow") / `用户明天要去北京。` |
| fact | `occupation`, `workplace` | `User teaches chemistry.` / `User works at Bosch.` / `用户是化学老师。` |
| fact | `home` | `User lives in Leeds.` / `用户住在杭州。` |
| fact | `age` | `User is 34 (as of 4 December 2026).` / `用户34岁（2026年12月4日时）。` |
| fact | `family:<relation>:passed` | `User's cat has died.` / `用户的妈妈去世了。` |
| fact | `hometown` | `User grew up in Swansea.` / `User is from Valencia.` / `用户的老家是成都。` |
| fact | `birthday` | `User's birthday is 24 March.` / `User was born on 3 May 1961.` / `用户的生日是3月24日。` |
| fact | `family:<relation>:age` | `User's daughter Lena turns 7 on Sunday, 6 December 2026.` |
| fact | `family:<relation>:birthday` | `User's mom's birthday is 3 March.` / `用户的妈妈的生日是3月3日。` |
| fact | `health:allergy:<allergen>` | `User is allergic to peanuts.` / `用户对花生过敏。` (both `peanut`) |
| fact | `health:avoid:<food>` | `User cannot eat gluten.` / `用户不能吃麸质。` |
| fact | `health:condition:<condition>` | `User has diabetes.` / `用户有糖尿病。` |
| fact | `health:medication:<medicine>` | `User takes metformin every morning.` / `用户每天吃降压药。` |
| fact | `health:allergy:<allergen>:<relation>` | `User's son Oliver is allergic to peanuts.` / `用户的儿子对花生过敏` |
| fact | `health:avoid:<food>:<relation>` | `User's father cannot eat shellfish.` / `用户的爸爸不能吃虾。` |
| fact | `health:avoid:<food>:household` | `User's home is kept free of tree nuts.` ("we keep the house nut free") |
| fact | `occupation:former` | `User used to teach piano.` / `用户以前当过海员。` / `用户退休前是老师。` |
| fact | `study` | `User is studying physics at Manchester.` / `用户在北京学中文。` |
| preference | `routine:<when>` | `User walks the dog every morning.` / `用户每天早上去公园遛狗。` |
| preference | `routine:<relation>_<when>` | `User's grandson Finn plays football every Saturday morning.` |
| event | `plan:<relation>_<day>` | `User's granddaughter Sofia starts ballet on Saturday, 5 December 2026.` |
| fact | `family:<relation>:job` | `User's son Andriy works as a developer in Berlin.` / `用户的老公在香港上班。` |
| fact | `household` | `User lives with their daughter Sue and their daughter's husband Mark.` |
| fact | `family:<relation>:likes` | `User's wife Sheila likes gardening.` / `用户的老伴喜欢跳广场舞。` |
| fact | `family:<relation>:school` | `User's son is in year 10.` / `用户的儿子在上高三。` |
| fact | `health:condition:<condition>:<relation>` | `User's husband Emmanuel has dementia.` |
| fact | `health:event:<what>:<relation>` | `User's husband Ken had a hip operation.` (when is not kept) |
| fact | `family:<pet>:breed` | `User's dog is a beagle.` / `用户的狗是金毛。` |
| preference | `address:formality` | `User wants to be addressed casually.` / `... formally.` (speaker card) |
| preference | `address:language` | `User wants to be answered in Chinese.` (speaker card) |

Relations are keyed in English whichever language they were said in (`family:daughter` for
"my daughter" and "我女儿"), allergens, conditions and medicines by the English key of the
tables in `health.py`. A day the statement names ("turns seven on Sunday", "下周日满七岁")
is resolved against the moment it was said (`extract_self_facts(text, now)`) and stored as a
date. The `health:*` facts are safety facts (`is_safety_key`): prompts never drop them.

Questions are never statements ("what is my name?", "我叫什么", "do I like tea?"), and
nothing is read from a sentence that reports someone else's words. The content names the
person "User"/"用户"; `render_fact()` puts the real name in for a prompt.

Pure Python, no ROS.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from ..text import when
from ..text.words import CJK_IDEOGRAPHS, and_list, as_written, has_cjk
from . import health

USER_EN = "User"
USER_ZH = "用户"


@dataclass(frozen=True)
class SelfFact:
    kind: str  # "fact", "preference" or "event" (the memory's kind: tag)
    key: str  # updatable-fact key, e.g. "name", "taste:coffee", "family:sister", "plan:tomorrow"
    value: str  # the bare value: "Tom", "coffee", "Anna", "going to Paris"
    content: str  # one plain sentence about the user, as stored in memory
    language: str  # "en" or "zh"

    @property
    def tags(self) -> tuple[str, ...]:
        # source:user: the person's own words (not a model's summary)
        return (f"kind:{self.kind}", "source:user")


# -- English --------------------------------------------------------------------------------
# Words that follow "I'm"/"I am" but are not names ("I'm Tired", "I am Fine" after ASR casing).
_NOT_NAMES = {
    # a faith is no name ("I'm Muslim")
    *("muslim", "christian", "jewish", "hindu", "sikh", "buddhist", "catholic", "protestant", "atheist"),
    "a",
    "an",
    "the",
    "so",
    "very",
    "really",
    "just",
    "not",
    "fine",
    "good",
    "great",
    "ok",
    "okay",
    "here",
    "back",
    "home",
    "sorry",
    "tired",
    "happy",
    "sad",
    "hungry",
    "busy",
    "ready",
    "sure",
    "glad",
    "well",
    "going",
    "from",
    "in",
    "at",
    "on",
    "feeling",
    "doing",
    "trying",
    "looking",
    "thinking",
    "also",
    "still",
    "always",
    "never",
    "english",
    "chinese",
    "american",
    "british",
    "bored",
    "excited",
    "fay",
    "your",
    "yours",
    "afraid",
    "bad",
    "sick",
    "cold",
    "hot",
    "done",
    "new",
    "old",
    "alone",
    "late",
    "early",
    "free",
    "working",
    "learning",
}
_NAME_WORD = r"[A-ZÀ-ÖØ-Þ][a-zA-ZÀ-ÖØ-öø-ÿ'\-]{1,30}"  # (Tomás, Zoë, Renée)
# A second name word is capitalised even in a case-insensitive pattern ("Mary Ann", not "Tom and").
_SURNAME = r"(?-i:[A-Z][a-zA-Z'\-]{1,30})"
# After "my name is", a lowercase word that ends the clause is a name too (ASR writes "my name is tom").
_LOWER_NAME_END = re.compile(r"\s*(?:[.!?,;]|$|\b(?:and|but)\b)", re.I)
# the days of the week as words ("on Sundays", "until Friday"), from the calendar's list
_DAYS_EN = "(?:" + "|".join(day.lower() for day in when.WEEKDAYS_EN) + ")"
_MONTHS_EN = "(?:" + "|".join(month.lower() for month in when.MONTHS_EN) + ")"
# "it's X" after a greeting that names no one ("hi! it's raining", "hello, it's Monday")
_NOT_A_NAME_AFTER_ITS = (
    rf"(?:[a-z]+(?:ing|ed)|{_DAYS_EN}|{_MONTHS_EN}|christmas|cold|hot|warm|sunny|windy|cloudy|wet|"
    r"late|early|lovely|nice|great|good|fine|quiet|busy|time|noon|midnight|me|you|him|her|us|them|ok|okay|true|"
    r"mine|yours|today|tomorrow|weird|funny|hard|easy|done|over|fay|fun|new|nice|amazing|awful|brilliant|"
    r"silly|strange|odd|exciting|boring|scary|sad|it|all|my|the|a|an|so|really|very|what|why|how)\b"
)
# Greetings before a name ("sup, Jamal here", "morning! Ray here", "hello dear, I'm Bea")
_GREETING = (
    # (an "oh" or "well" before it: "oh hello, it's Maureen")
    r"(?:(?:oh|ah|well|so),? )?"
    r"(?:hi|hello|hey|hiya|heya|yo|sup|wassup|howdy|alright|all right|morning|afternoon|evening|"
    r"good (?:morning|afternoon|evening)|"
    r"(?:hi|hello|hey|morning|afternoon|evening) (?:there|dear|fay|all|everyone|folks|love|darling|pet|duck|mate))"
)
_EN_NAME = [
    # what they ask to be called comes before their name ("My name is Zainab but just call me
    # Zee", "…but everyone calls me Winnie"); not "my friends call me Tommy"
    re.compile(
        rf"(?:^|[,;.!]\s*|\b(?:but|so|and|just|please|you can|you may|you could|feel free to)\s+)"
        rf"(?:just\s+|please\s+)?call me\s+((?:(?-i:Mr|Mrs|Ms|Dr|Miss|Professor)\.?\s+)?{_NAME_WORD})"
        r"(?!\s+(?-i:[A-Z]))|"
        rf"\b(?:everyone|everybody|people|all my \w+) calls? me\s+({_NAME_WORD})|"
        # "I'm Patricia, Pat for short"
        rf"(?:^|,\s*)({_NAME_WORD}) for short\b",
        re.I,
    ),
    re.compile(rf"\bmy name(?:'s| is)\s+({_NAME_WORD}(?:\s+{_SURNAME})?)", re.I),
    # "Wendell's my name", "Wendell's my name, Wendell Brooks"
    re.compile(
        rf"^(?:(?:good )?(?:morning|afternoon|evening)[!,.]*\s+)?"
        rf"(?!(?:that|this|it|what|which|who|here|there|so|yes|no|mine|yours)\b)({_NAME_WORD})'s my name\b",
        re.I,
    ),
    # "Harold's the name"; "hey Fay! it's Chloe" (after a greeting, the whole of what follows)
    re.compile(rf"\b({_NAME_WORD})'s the name\b", re.I),
    # "morning, the name's Bill"
    re.compile(rf"(?:^|[,.!]\s*)the name(?:'s| is) ({_NAME_WORD})\b", re.I),
    re.compile(
        rf"^(?:{_GREETING}[!,.]*\s+)+(?:it'?s|this is) (?!{_NOT_A_NAME_AFTER_ITS})({_NAME_WORD})[!.]*$",
        re.I,
    ),
    # "Oksana, pleased to meet you" (the name, then the pleasantry)
    re.compile(
        rf"^(?:{_GREETING}[!,.]*\s+)*({_NAME_WORD}),? (?:(?:very |so )?(?:pleased|nice|good|lovely|glad) to meet you|"
        r"how do you do)\b",
        re.I,
    ),
    # "Imogen here", "hiya!! Imogen here :)", "hello dear, Dorothy speaking"
    re.compile(rf"^(?:{_GREETING}[!,.]*\s+)*({_NAME_WORD}) (?:here|speaking)\b(?!\s+(?:is|are|was))", re.I),
    # "call me Mr Li": the title is part of how they want to be called (their speaker card)
    # (not a nickname others gave: "they used to call me Nurse Bill", "everyone calls me Red")
    re.compile(
        r"(?<!used to )(?<!they )(?<!they all )(?<!people )(?<!everyone )(?<!everybody )(?<!would )(?<!they'd )"
        rf"(?<!kids )\b(?:please\s+)?call me\s+((?:(?-i:Mr|Mrs|Ms|Dr|Miss|Professor)\.?\s+)?{_NAME_WORD})",
        re.I,
    ),
    # "I'm Tom" / "I am Tom": only a capitalised word that is not a common adjective (nor a day:
    # "I'm Tuesday, Thursday and Saturday now", the dialysis days)
    re.compile(
        rf"(?:^|[.!,;]\s*|\b(?i:hi|hello|hey|hiya)(?: there| dear| fay)?\b,?\s+)I(?:'m| am)\s+"
        rf"(?!(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)({_NAME_WORD})"
        r"(?=\s*(?:[.!,;]|$|\band\b|\bby the way\b|\bbtw\b))"
    ),
]
# The pets a person may name, among the family words (the fact answers list them as pets).
PETS = (
    *("dog", "cat", "puppy", "kitten", "rabbit", "hamster", "parrot", "bird", "horse", "budgie", "tortoise"),
    *("guinea pig", "goldfish", "gecko", "lizard", "snake", "ferret"),
)
# Family words a person may name; public, as the dialogue's fact answers read them too.
RELATIONS = (
    "wife",
    "husband",
    "son",
    "daughter",
    "mother",
    "mom",
    "mum",
    "father",
    "dad",
    "brother",
    "sister",
    "grandmother",
    "grandma",
    "grandfather",
    "grandpa",
    "granddaughter",
    "grandson",
    "grandchild",
    "partner",
    "better half",
    "other half",
    "friend",
    "best friend",
    "roommate",
    "flatmate",
    "housemate",
    "boyfriend",
    "girlfriend",
    "baby",
    "kid",
    "child",
    "toddler",
    "little girl",
    "little boy",
    "boy",
    "girl",
    # the wider family and the people around an older person
    *("aunt", "auntie", "uncle", "niece", "nephew", "cousin", "stepson", "stepdaughter"),
    *("son-in-law", "daughter-in-law", "fiancé", "fiancée", "fiance", "fiancee", "grandkid"),
    *("neighbour", "neighbor", "carer", "caregiver"),
    *PETS,
)
# the family words as one regex alternation, the longest first
RELATION_WORDS = "|".join(sorted((re.escape(r) for r in RELATIONS), key=len, reverse=True))
_REL = RELATION_WORDS
# a pet said by its breed ("an old springer spaniel called Bramble"): the dog, the cat
_BREEDS = {
    **dict.fromkeys(
        "spaniel terrier labrador lab collie poodle retriever alsatian greyhound whippet lurcher dachshund beagle "
        "pug bulldog corgi schnauzer husky chihuahua westie yorkie sheepdog setter pointer boxer dalmatian "
        "rottweiler doberman shih-tzu cockapoo cavapoo labradoodle jack-russell kelpie heeler cattle-dog "
        "staffie staffy mastiff pomeranian maltese bichon".split(),
        "dog",
    ),
    **dict.fromkeys("tabby moggy siamese persian ragdoll tomcat".split(), "cat"),
    **dict.fromkeys("gecko iguana chameleon".split(), "lizard"),
    "jack russell": "dog",
}
_PET_WORD = "|".join(sorted((re.escape(b) for b in _BREEDS), key=len, reverse=True))
# the young of a pet said for it ("my puppy is a beagle": the dog's breed)
YOUNG_PETS = {"puppy": "dog", "kitten": "cat"}
# The breed of a pet (`family:<pet>:breed`): "a beagle called Biscuit", "my dog is a springer
# spaniel", "a dog called Biscuit, he's a beagle"; a word before the breed that is part of it
_BREED_SAID = (
    r"((?:(?:springer|cocker|golden|border|german|bull|jack|yorkshire|west highland|english|french|irish|"
    r"scottish|welsh|black|chocolate|yellow|king charles|miniature|toy|standard) )?"
    rf"(?:{_PET_WORD}))\b"
)
# the user's own pet said by its breed, then named: "our beagle is called Biscuit", "my old
# spaniel Bramble"
_OWN_BREED_EN = re.compile(
    rf"\b(?:my|our) (?:old |little |young )?{_BREED_SAID}(?= is called | called | named | (?-i:[A-Z])[a-z]+\b)", re.I
)
_PET_AGE = r"(?:old |young |little |big |lovely |new )?"
_PET_BREED_EN = re.compile(
    rf"\b(?:an?|my|our) {_PET_AGE}{_BREED_SAID} (?:called|named)\b|"
    rf"\bmy (dog|cat|puppy|kitten)(?: (?-i:[A-Z])[a-z]+)?(?: is|'s) an? {_PET_AGE}{_BREED_SAID}|"
    rf"\b(?:an?|my|our) {_PET_AGE}(dog|cat|puppy|kitten) (?:called|named) [\w-]+,? (?:and )?(?:he|she|it)"
    rf"(?:'s| is) an? {_PET_AGE}{_BREED_SAID}",
    re.I,
)
_EN_FAMILY_NAMED = [
    re.compile(
        rf"\b(?:my|our) ({_REL})(?:'s name is| is called| is named|'s called|'s named| called| named)\s+({_NAME_WORD})",
        re.I,
    ),
    # "Aoife is my sister."
    re.compile(rf"^(?:and |oh |well )?((?-i:[A-Z][a-z]+)) is (?:my|our) ({_REL})\b", re.I),
    # "the wife's called Isla", "the missus is Jean"
    re.compile(rf"\bthe (wife|husband|missus|hubby|boss)(?:'s| is) (?:called |named )?({_NAME_WORD})\b", re.I),
    # "the wife, Morag, does the garden"
    re.compile(rf"\b(?:the|my|our) ({_REL}),\s+({_NAME_WORD})\s*,", re.I),
    # "my cat, a ginger tom called Marmalade"
    re.compile(rf"\b(?:my|our) ({_REL}),? (?:an?|the) (?:[\w-]+ ){{0,3}}?(?:called|named) ({_NAME_WORD})", re.I),
    re.compile(
        rf"(?:\b(?:I|we)(?: have|'ve got| have got|'ve)|^(?:(?:and|also|oh|plus),? )*(?:got|'ve got|have got)) an? "
        rf"(?:[\w-]+ ){{0,3}}?({_REL}|{_PET_WORD})\s+(?:called|named)\s+"
        rf"({_NAME_WORD})",
        re.I,
    ),
    # "My brother is Finn.", "my daughter's Sarah.", "my wife was Jean." (a capitalised name ending
    # the clause: not "my son is tall")
    re.compile(rf"\b(?:my|our|the) ({_REL})(?: is|'s| was) ({_NAME_WORD})(?=\s*(?:[.!;,]|$))", re.I),
    # "my sister Lena has a cat", "my daughter Lena turns seven": the name right after the word
    re.compile(
        rf"\b(?:my|our) (?:late )?({_REL}),?\s+"
        r"(?!(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday|christmas|easter)\b)"
        r"((?-i:[A-Z][a-z'\-]{1,30}))\b(?!'s\b| is called| is named)",
        re.I,
    ),
]
# "I live with two flatmates, Sam and Priya" (who they live with, by name)
_LIVE_WITH_EN = re.compile(
    r"\b(?:I|we) (?:live|am living|'m living|share a (?:flat|house) ) ?with (?:my |our )?(two|three|four|a|an)? ?"
    r"(flatmate|roommate|housemate)s?,? (?:called |named )?((?-i:[A-Z])[a-z]+(?:(?:,| and) (?-i:[A-Z])[a-z]+)*)",
    re.I,
)
# Who the user lives with, when family: "I live with my daughter Sue and her husband Mark" (key
# `household`; flatmates are `family:roommate`, above)
_LIVES_WITH_FAMILY_EN = re.compile(
    rf"\bI (?:live|am living|'m living|still live|now live) with ((?:my|our) (?:{_REL})\b.{{0,70}}?)"
    r"(?=\s*(?:[.!?;]|$|\b(?:but|because|since|so)\b))",
    re.I,
)
_EN_FAMILY_HAS = re.compile(
    # ("me and my wife Keisha have…", "my husband and I have…": theirs)
    rf"\b(?:I|we|(?:me|myself) and (?:my|our) [a-z]+(?: (?-i:{_NAME_WORD}))?|"
    rf"(?:my|our) [a-z]+(?: (?-i:{_NAME_WORD}))? and I)"
    rf"(?: have|'ve got| have got|'ve) (an?|one|two|three|four|five|twin) (?:little )?"
    rf"((?:{_REL})(?=s?\b)|(?:grand)?child(?=ren\b))(?:s|ren)?\b"
    # "two cats called Pickle and Mouse", "two dogs, Rex and Fido", "twin boys, Jayden and Jordan"
    rf"(?:,? (?:called |named )?((?-i:{_NAME_WORD})(?:(?:,| and) (?-i:{_NAME_WORD}))+))?"
    # ", they're seven": their age
    rf"(?:,? (?:they're|they are|both|who are) ({when.EN_NUMBER})(?: years old)?\b)?",
    re.I,
)
_STOP_CLAUSE = r"(?=\s*(?:[.!?;,]|$|\b(?:but|because|and i|so|when|if)\b))"
_STOP_LIST = (
    r"(?=\s*(?:[.!?;]|$|\b(?:but|because|and i|so|when|if)\b|,\s*and (?:my|our)\b))"  # "tea, cake and jazz" is one list
)
_EN_TASTE = [
    (re.compile(rf"\bI (?:do not|don't|dont|do n't) (?:really )?(?:like|love|enjoy)\s+(.+?){_STOP_LIST}", re.I), False),
    (re.compile(rf"\bI (?:hate|dislike|can't stand|cannot stand)\s+(.+?){_STOP_LIST}", re.I), False),
    (
        re.compile(
            rf"\bI(?:'m| am) (?:mad about|crazy about|nuts about|(?:a )?(?:big |huge )?fan of)\s+(.+?){_STOP_LIST}",
            re.I,
        ),
        True,
    ),
    (
        re.compile(
            rf"\bI (?:really |also |just |now |actually )?(?:like|love|enjoy|adore|prefer)\s+(.+?){_STOP_LIST}", re.I
        ),
        True,
    ),
    (
        re.compile(rf"\bI(?:'ve| have) (?:come to|started to|grown to) (?:like|love|enjoy)\s+(.+?){_STOP_LIST}", re.I),
        True,
    ),
    (re.compile(rf"\bI'm (?:really )?into\s+(.+?){_STOP_CLAUSE}", re.I), True),
    # a taste taken up again or switched to: "I'm back to cola now", "I've switched to decaf"
    # (not "I'm back to work", "I switched to a new phone": a place, a routine, one object)
    (
        re.compile(
            r"\bI(?:'m| am| have|'ve)? (?:back (?:to|on|into)|gone back to|switched (?:over )?to)\s+"
            rf"(?!(?:a|an|my|the|work|school|normal|bed|sleep|square one|basics)\b)(.+?){_STOP_CLAUSE}",
            re.I,
        ),
        True,
    ),
    # what they spend their days doing: "these days I potter about in the shed doing woodturning",
    # "I spend most of my time doing jigsaws"
    (
        re.compile(
            r"\bI (?:potter (?:about|around)|"
            r"spend (?:my|most of my|a lot of my|all my) (?:time|days|mornings|evenings)|"
            r"keep (?:myself )?busy)(?: (?:in|at|on|round) (?:the|my) \w+)? (?:doing|with) "
            rf"(?!(?:nothing|not much|this|that|it|stuff|things|bits)\b)(.+?){_STOP_CLAUSE}",
            re.I,
        ),
        True,
    ),
    # (a hobby taken up may be "the birdwatching", as people say it)
    (
        re.compile(
            r"\bI(?:'m| am| have|'ve)? (?:now into|hooked on|gotten into|got into|taken up|took up)\s+(?:the\s+)?"
            rf"(?!(?:a|an|my)\b)(.+?){_STOP_CLAUSE}",
            re.I,
        ),
        True,
    ),
]
# A habit the person has given up: the taste it stood for is no longer current ("I don't play
# games any more", "I no longer drink cola", "I stopped eating meat", "I gave up coffee").
# A habit said as current: "I drink tea now", "I mostly eat fish these days" (stored as said:
# "User drinks tea now.").
_EN_HABIT_NOW = re.compile(
    r"\bI(?: (?:now |usually |mostly |only |just )?(drink|eat|play|watch|read|listen to|do)|"
    # "I'm doing watercolours now", "I'm playing bowls these days"
    r"(?:'m| am) (?:now )?(doing|playing|reading|watching|drinking|eating|listening to))\s+"
    r"(?!(?:fine|well|ok|okay|good|great|better|worse|alright|all right|nothing|something|everything|more|less|"
    r"lots|loads|much|nights|overtime|shifts|the (?:washing|dishes|cleaning|ironing|shopping|cooking))\b)"
    r"(.+?)\s+(now|these days|nowadays|instead|every (?:day|morning|evening|night))\b",
    re.I,
)
# A skill being learnt, kept as a pastime under the thing's taste key, so that giving it up
# later ("I've given up the piano") replaces it: "I'm learning to play the piano" → "User is
# learning to play the piano." (key `taste:the_piano`), "I'm learning Spanish", "I'm learning to swim".
_EN_LEARNING = re.compile(
    r"\bI(?:'m| am|'ve been| have been) (?:now |just |still )?(?:learning|having lessons in|taking lessons in)\s+"
    r"(?:(?:how )?to (play|speak|paint|draw|knit|sew|swim|dance|drive|cook|sing|bake|crochet|ride|use)\b\s*)?"
    r"(?!(?:a lot|lots|loads|so much|much|more|a bit|fast|quickly|slowly|new things|things|every day|all the time|"
    r"from|about|that|how to live)\b)"
    rf"(.*?){_STOP_CLAUSE}",
    re.I,
)
# Stored as "User no longer drinks cola." (what they said, not "does not like").
_HABIT_VERBS = {
    "play": "plays",
    "watch": "watches",
    "drink": "drinks",
    "eat": "eats",
    "read": "reads",
    "listen to": "listens to",
    "do": "does",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
}
_GERUNDS = {
    "playing": "play",
    "watching": "watch",
    "drinking": "drink",
    "eating": "eat",
    "reading": "read",
    "listening to": "listen to",
    "doing": "do",
}
_HABIT = "|".join(_HABIT_VERBS)
_MEDICATION_NAMES_EN = health.names_pattern(health.MEDICATIONS)
_MED_WORDS = r"\b(?:pills?|tablets?|medications?|medicines?|meds|inhalers?|drops|injections?|capsules?)\b"
_EN_STOPPED = [
    re.compile(rf"\bI (?:don't|do not|dont) ({_HABIT})\s+(?:the\s+)?(.+?)\s*(?:any ?more|these days|now)\b", re.I),
    re.compile(rf"\bI no longer ({_HABIT})\s+(.+?){_STOP_CLAUSE}", re.I),
    re.compile(
        # (a medicine stopped is no habit: "I stopped taking aspirin", `_MED_STOPPED_EN`)
        rf"\bI(?:'ve| have)? (?:stopped|quit|gave up|given up) "
        r"(?!on\b|the idea|work(?:ing)? (?:at|as|in|for)\b|(?:(?:taking|using) )?(?:my |the |his |her )?"
        rf"(?:{_MEDICATION_NAMES_EN}|[\w ]*?{_MED_WORDS}))"
        rf"(?:({'|'.join(_GERUNDS)}) )?(.+?){_STOP_CLAUSE}",
        re.I,
    ),
]
# A time said after the thing ("I quit smoking last year", "I switched to tea last month"): not
# part of the thing.
_TRAILING_WHEN = re.compile(
    r"\s+(?:last (?:week|month|year)|this (?:week|month|year)|yesterday|today|tonight|tomorrow|a while ago"
    r"|(?:\w+ )?(?:days|weeks|months|years) ago"
    rf"|(?:on |last ){_DAYS_EN})$",
    re.I,
)
_HABIT_CONTENT = re.compile(
    rf"{USER_EN} (?:{'|'.join(_HABIT_VERBS.values())}) (.+?) (?:now|these days|nowadays|instead|every \w+)\.$"
)
_STOPPED_CONTENT = re.compile(rf"{USER_EN} (?:no longer (?:{'|'.join(_HABIT_VERBS.values())})|gave up) (.+?)\.$")
_EN_FAVORITE = re.compile(rf"\bmy (?:favou?rite) ([a-z]+) is\s+(.+?){_STOP_CLAUSE}", re.I)
_WHEN = (
    r"tomorrow (?:morning|afternoon|evening|night)|tomorrow|tonight|this weekend|next weekend|next week|next month"
    r"|(?:on |this |next |this coming )(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|later today|this evening"
    # Christmas: its day ("for Christmas" → "for Christmas (25 December 2029)")
    r"|(?:for|at|over) christmas|on christmas (?:day|eve)"
)
_EN_PLAN = [
    # (and "I'm going fishing with Ron on Saturday": going and what one does there)
    re.compile(
        rf"\b(?:I(?:'m| am)|we(?:'re| are)) (going to|planning to|gonna|off to|going(?= [a-z]+ing\b))\s+(.+?)\s+"
        rf"({_WHEN})\b",
        re.I,
    ),
    # "I'm flying to Rome next Friday", "I'm visiting my mum tomorrow"
    re.compile(
        rf"\b(?:I(?:'m| am)|we(?:'re| are)) "
        r"((?!(?:going|feeling|being|getting|thinking|hoping|trying|doing)\b)[a-z]+ing)"
        rf"\s+(.+?)\s+({_WHEN})\b",
        re.I,
    ),
    re.compile(
        rf"\b({_WHEN}),? (?:I(?:'m| am| will|'ll)|we(?:'re| are| will|'ll)) ((?:going to |gonna )?.+?){_STOP_CLAUSE}",
        re.I,
    ),
    re.compile(rf"\bI(?: will|'ll)\s+(.+?)\s+({_WHEN})\b", re.I),
    # "On Friday I've got my exam", "I've got a hospital appointment next Tuesday"
    re.compile(
        rf"\b({_WHEN}),? I(?:'ve got| have got| have) ((?:an?|my|the) .+?){_STOP_CLAUSE}",
        re.I,
    ),
    re.compile(
        rf"(?:\bI(?:'ve got| have got| have)|^(?:and |oh |also |so )?got) "
        rf"(an? .+?|my .+?|the (?:nurse|doctor|dentist|optician|physio).*?)\s+({_WHEN})\b",
        re.I,
    ),
    # "On Sunday my grandson Alfie is taking me to the garden centre"
    re.compile(
        rf"\b({_WHEN}),? (my [a-z]+(?: (?-i:[A-Z])[a-z]+)?) (?:is|'s|will be) (?:taking|bringing|driving) me "
        rf"((?:to|for|out) .+?){_STOP_CLAUSE}",
        re.I,
    ),
    # "I need to pick up my suit on Wednesday", "I've got to see the vet tomorrow"
    re.compile(
        rf"\bI(?: need to| have to|'ve got to| have got to| must| gotta)\s+(?:remember to\s+)?(?!be\b)"
        rf"(.+?)\s+({_WHEN})\b",
        re.I,
    ),
]
# Not about one's own taste: "I like to think", "I like it", "I love you" (said to Fay).
# "going to visit my mum" (a verb follows: "will visit"), not "going to the zoo" (a place)
# a verb in -ing that goes on ("visiting"), not a verb that ends so ("ring", "bring")
_GERUND = re.compile(r"(?!(?:ring|bring|sing|sting|string|swing|wring|cling|fling|spring)\b)[a-z]{2,}ing\b", re.I)
_GOING_TO_A_VERB = re.compile(
    r"^(?:gonna|going to)\s+(?!(?:the|a|an|my|his|her|our|their)\b|(?-i:[A-Z]))(?=[a-z]+\b)", re.I
)
_A_NUMBER = re.compile(rf"(?:\d+|{when.EN_NUMBER})\b", re.I)
_TASTE_OBJECT_SKIP = {
    "it",
    "that",
    "this",
    "you",
    "them",
    "him",
    "her",
    "us",
    "so",
    "too",
    "very",
    "much",
    "what",
    "how",
    "your",
    "talking",
    "talking to you",
    "you too",
    "it too",
    "to you",
    "to talk",
    "to talk to you",
}
# First person in a value becomes the user's: "visit my mom" -> "visit their mom".
_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "mine": "theirs", "i": "they"}
_QUESTION_EN = re.compile(
    # ("and what do I gotta do with the hearing aids every night, I forget": a question after "and")
    r"\?\s*$|^\s*(?:(?:and|so|now|well|oh|but|okay|ok|right)[,\s]+)*"
    r"(?:what|who|which|do|does|did|is|am|are|can|could|would|should|will|how|"
    r"why|where|when)\b|"
    # "tell me again what time I take the warfarin", "remind me where Sue lives"
    r"^\s*(?:(?:can|could|will|would) you )?(?:tell|remind) me(?: again)?,? "
    r"(?:what|where|when|who|which|how|whether)\b",
    re.I,
)
# Reported speech or a hypothetical: not a statement about oneself.
_NOT_OWN_EN = re.compile(r"\b(?:if|suppose|pretend|imagine|he said|she said|they said|says that)\b", re.I)
# A hedge or someone else's word takes the part of the sentence it is in ("Hi, I'm Tom, my
# wife says I snore": the name stands; "Maybe I'm allergic to cats": nothing does).
_HEDGED = re.compile(
    r"\b(?:says|thinks|claims|reckons|told me|wish|maybe|perhaps|might|probably)\b|"
    r"希望|也许|可能|或许|(?<![我你跟和对])说我|(?:觉得|认为|以为)我",
    re.I,
)


# -- Chinese --------------------------------------------------------------------------------
_ZH_STOP = "，。！？；、,.!?;~～ "
# The commonest Chinese surnames (those of about nine in ten people), for a name after 我是
ZH_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭"
    "陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧"
)
_ZH_NAME = [
    re.compile(
        r"我(?:叫|的名字(?:是|叫))([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)"
        r"(?=[" + _ZH_STOP + r"]|$|吧|哦|啊|呀|就)"
    ),
    re.compile(r"(?:你)?(?:可以)?叫我([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)(?=就|吧|[" + _ZH_STOP + r"]|$)"),
    # "我姓陈，陈志强", "我姓王，叫王建国": the full name said after the surname
    re.compile(
        r"我姓([" + CJK_IDEOGRAPHS + r"])[，,、\s]*(?:我)?(?:叫|名字叫|名字是)?(\1[" + CJK_IDEOGRAPHS + r"]{1,2})"
        r"(?=[" + _ZH_STOP + r"]|$)"
    ),
    # "我是刘建华", "我是婷婷", "我是老王": after 我是 only what reads as a name (a common surname and
    # a given name, a doubled name, 小/老/阿 and a name), not "我是老师", "我是江苏人", "我是高兴",
    # "我是妈妈"
    re.compile(
        rf"(?:^|[{_ZH_STOP}]|你好|您好|嗨|哈喽|喂)我是"
        r"(?!高兴|方便|马上|安全|真心|认真|开心|白领|蓝领|方言|(?P<kin>[妈爸哥姐弟妹奶爷叔伯姥舅婆公宝娃姑婶])(?P=kin))"
        + rf"(?P<name>(?:[{ZH_SURNAMES}][{CJK_IDEOGRAPHS}]{{1,2}}|(?P<doubled>[{CJK_IDEOGRAPHS}])(?P=doubled)|"
        + rf"[小老阿][{CJK_IDEOGRAPHS}])"
        # (the last character of a word for what someone is: 老师, 江苏人, 高中生, 老板, 老外)
        + r"(?<![人生的员师家长工者族座迷控粉友手士民女男孩娃子板白外总大二三学]))"
        r"(?=[" + _ZH_STOP + r"]|$|啊|呀|哦|呢)"
    ),
]
ZH_RELATIONS = (
    "老伴儿|老伴|老婆|妻子|太太|媳妇儿|媳妇|爱人|老公|丈夫|先生|儿子|儿媳妇|儿媳|女婿|女儿|妈妈|母亲|爸爸|父亲"
    "|哥哥|弟弟|姐姐|妹妹|奶奶|爷爷|外婆|外公|姥姥|姥爷|外甥女|外甥|侄女|侄子|叔叔|舅舅|姑姑"
    "|室友|朋友|女朋友|男朋友|狗|小狗|猫|小猫|兔子|仓鼠|鹦鹉|乌龟|金鱼|八哥|小鸟|鸟|孩子|外孙女|外孙|孙女|孙子|闺女|姑娘"
    "|邻居|保姆|妈|爸"
)
# the animals among the family words: they have no job, school or plans of their own
_ZH_PETS = frozenset("狗 小狗 猫 小猫 兔子 仓鼠 鹦鹉 乌龟 金鱼 八哥 小鸟 鸟".split())
_ZH_FAMILY_NAMED = re.compile(
    r"(?:(?:我|家里|我家|我们家|我们)(?:的|家(?:的)?|养的|(?:家)?(?:还)?(?:养了|有)(?:一|两)?(?:只|条|个)?)?|"
    # (a relative named after a comma, as "…，闺女叫刘静" is read)
    r"(?<=[，,]))(" + ZH_RELATIONS + r")[，,]?(?:它|他|她)?(?:叫|名字叫|的名字是)(?!我)"
    r"([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)"
    r"(?=[" + _ZH_STOP + r"]|$)"
)
# the name after something else said of them: "我女儿今年三岁了，叫豆豆"
_ZH_FAMILY_NAMED_AFTER = re.compile(
    r"我(?:的|家(?:的)?)?(" + ZH_RELATIONS + r")[^，,。！？!?]{1,12}[，,]\s*(?:她|他|它)?(?:叫|名字叫)(?!我)"
    r"([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,6}?)(?=[" + _ZH_STOP + r"]|$)"
)
_ZH_EACH_NAMED = re.compile(
    r"[，,、]\s*(大的|小的|老大|老二|老三|一个|另一个|哥哥|弟弟|姐姐|妹妹)叫([\u4e00-\u9fff]{1,3})"
)
_ZH_FAMILY_HAS = re.compile(r"(?:我|我家|我们家)(?:还)?有((?:一|两|三|四|五)?(?:个|只|条))(" + ZH_RELATIONS + r")")
# (?!的): "我喜欢的东西很多", "我最喜欢吃的是…" say no taste (a favourite is read separately)
_ZH_VERB = r"(?!(?:吃|喝|看|听|玩)?的)(?:吃|喝|看|听|玩)?"
_ZH_TASTE = [
    # a habit given up: "我不玩游戏了", "我现在不喝可乐了", "我再也不吃辣了"
    (re.compile(r"我(?:现在|已经|再也)?不(?:再)?(?:玩|喝|吃|看|打|听)(?!的)([^" + _ZH_STOP + r"]{1,8}?)了"), False),
    (
        re.compile(r"我(?:现在|已经)?(?:不太|不怎么|不再|不)(?:喜欢|爱)" + _ZH_VERB + r"([^" + _ZH_STOP + r"]{1,12})"),
        False,
    ),
    (re.compile(r"我(?:讨厌|受不了|不吃|不喝)(?!的)([^" + _ZH_STOP + r"]{1,12})"), False),
    (
        re.compile(
            # (爱人 is a husband or wife: "我爱人喜欢跳舞" is theirs)
            r"我(?:现在|最近)?(?:很|特别|最|也|非常|真的|更)?(?:喜欢|爱上了|爱(?!人))"
            + _ZH_VERB
            + r"([^"
            + _ZH_STOP
            + r"]{1,12})"
        ),
        True,
    ),
    # a taste taken up again or switched to: "我又开始喝可乐了", "我改喝咖啡了", "我现在换成喝茶了"
    (
        re.compile(
            r"我(?:现在|最近)?(?:又|重新)(?:开始)?(?:喝|吃|玩|看|听)(?:起)?([^" + _ZH_STOP + r"]{1,8}?)(?:了|啦)"
        ),
        True,
    ),
    (
        re.compile(
            r"我(?:现在|最近)?(?:改|换成|换|转)(?:喝|吃|玩|看|听)了?([^"
            + _ZH_STOP
            + r"]{1,8}?)(?:了|啦|$|(?=["
            + _ZH_STOP
            + r"]))"
        ),
        True,
    ),
    # the new taste after a comma, without its 我: "我不喝可乐了，现在喜欢咖啡"
    (
        re.compile(
            r"[，,](?:现在|如今|最近|但是?|不过)(?:更|开始)?(?:喜欢|爱上了|爱)"
            + _ZH_VERB
            + r"([^"
            + _ZH_STOP
            + r"]{1,12})"
        ),
        True,
    ),
]
_ZH_PARTICLES = re.compile(r"(?:了|啦|呢|吧|啊|呀)+$")
_ZH_FAVORITE = re.compile(r"我最(?:喜欢|爱)的([" + CJK_IDEOGRAPHS + r"]{1,4}?)是([^" + _ZH_STOP + r"]{1,12})")
_ZH_WHEN = (
    "(?:明天|今晚|(?:这个?|本|下个?)?周末|下周[一二三四五六日天]|下周|下个月|后天|今天下午|今天晚上"
    "|(?:这|本|下)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]"
    "|(?:(?:下|这)个?月)?[0-9一二三四五六七八九十]{1,3}[号日]|[0-9一二三四五六七八九十]{1,2}月[0-9一二三四五六七八九十]{1,3}[号日])"
    "(?:早上|上午|中午|下午|晚上)?"
)
_ZH_PLAN = re.compile(
    r"我(" + _ZH_WHEN + r")(?:要|打算|准备|会)([^" + _ZH_STOP + r"]{1,20})|"
    # "我们下个月去日本旅游" (going somewhere, said without 要)
    r"我们?(?:全家|一家人?|俩)?(" + _ZH_WHEN + r")((?:一起|全家)?(?:去|回|到)[^" + _ZH_STOP + r"]{1,20})|"
    # "这周六我们全家去爬泰山", "周六我和老婆去看电影"
    r"("
    + _ZH_WHEN
    + r")我(?:们)?(?:全家|一家人?|俩|[和跟][\u4e00-\u9fff]{1,4}?(?:一起)?)?(?:要|打算|准备|会)?((?:(?:带|陪)[^"
    + _ZH_STOP
    + r"去]{1,4})?去[^"
    + _ZH_STOP
    + r"]{1,20}|"
    r"(?<=要|算|备|会)[^" + _ZH_STOP + r"]{1,20})|"
    # "这个星期六我孙女小雨带我去动物园": someone takes them
    r"("
    + _ZH_WHEN
    + r")(?:我的?|我家)([\u4e00-\u9fff]{1,6}?)(?:要|会)?(?:带我|陪我|接我)(去[^"
    + _ZH_STOP
    + r"]{1,16})"
)
# Chinese hypotheticals and someone else's words about the user ("要是我叫…", "妈妈说我喜欢…").
_NOT_OWN_ZH = re.compile(r"如果|假如|假设|要是|倘若|万一|(?<![我你跟和对])说我")
# (几 in 十几年, 好几天, 几十岁 counts, it asks nothing)
_QUESTION_ZH = re.compile(
    # ("住几天", "待几天", "玩几天": a few days, said after the verb; "住几天？" still asks)
    r"[吗么呢？?]\s*$|什么|谁|哪|(?<![十好百千万住待玩呆歇])几(?![十百千万])|怎么|是不是|多少|啥|来着|咋|干嘛|有没有|对不对"
)
_ZH_NOT_NAMES = {"什么", "谁", "啥", "哪个", "您", "你"}


def is_question(text: str) -> bool:
    return bool(_QUESTION_EN.search(text) or _QUESTION_ZH.search(text))


def asks_something(text: str) -> bool:
    """True when one of the sentences of `text` is a question ("I'm allergic to peanuts. Can
    you suggest a snack?"), False for statements only."""
    return any(is_question(clause) for clause in _clauses(text))


# How a person wants to be addressed (their speaker card, dialogue/speaker_card.py): only what
# they say of themselves ("call me Mr Li", "不用叫我您"); "call him Bob" or "叫他小明" is about
# someone else and matches nothing here.
CASUAL, FORMAL = "casually", "formally"
ADDRESS_FORMALITY, ADDRESS_LANGUAGE = "address:formality", "address:language"
_ADDRESS_CASUAL = re.compile(
    r"\bno need to be (?:so )?formal\b|\b(?:you can |please )?(?:just )?be (?:more )?casual with me\b|"
    r"\bdon'?t call me (?:sir|madam|ma'?am|mister|miss)\b|\bdrop the formalit(?:y|ies)\b|"
    r"\btalk to me (?:casually|like a friend)\b|\bjust call me by my (?:first )?name\b|"
    r"不用(?:那么|这么)?客气|(?:别|不用|不要)(?:叫我|称呼我|对我用)?您|随便(?:叫|称呼)我|叫我名字就(?:行|好|可以)|"
    r"(?:别|不用|不要)(?:那么|这么)?正式",
    re.I,
)
_ADDRESS_FORMAL = re.compile(
    r"\bplease (?:be|stay|remain) formal with me\b|\baddress me formally\b|"
    r"\b(?:please )?call me (?-i:(?:Mr|Mrs|Ms|Dr|Miss|Professor|Sir|Madam)\b)|"
    r"请(?:对我)?用您|请?(?:叫|称呼)我["
    + CJK_IDEOGRAPHS
    + r"]{1,3}(?:先生|女士|老师|医生|教授)|(?:对我)?正式(?:一点|一些|些)",
    re.I,
)
_ADDRESS_LANGUAGES = {
    "english": "English",
    "chinese": "Chinese",
    "mandarin": "Chinese",
    "中文": "Chinese",
    "汉语": "Chinese",
    "普通话": "Chinese",
    "英文": "English",
    "英语": "English",
}
_ADDRESS_LANGUAGE = re.compile(
    r"\b(?:please )?(?:speak|talk|answer|reply)(?: to me| with me)? in (english|chinese|mandarin)\b|"
    r"\b(?:speak|talk) (english|chinese|mandarin) (?:to|with) me\b|"
    r"(?:跟|和|对)我(?:说|讲)(中文|汉语|普通话|英文|英语)|用(中文|汉语|普通话|英文|英语)(?:跟我|和我|对我)?(?:说|讲|聊|回答)",
    re.I,
)


def name_fact(name: str, language: str = "en") -> SelfFact:
    """The stored form of "my name is <name>" (the speaker card's name; also the admin page's
    edit of it)."""
    if language == "zh":
        return SelfFact("fact", "name", name, f"{USER_ZH}的名字是{name}。", "zh")
    return SelfFact("fact", "name", name, f"{USER_EN}'s name is {name}.", "en")


def formality_fact(formality: str, language: str = "en") -> SelfFact:
    """The stored form of how formally the person wants to be addressed (CASUAL or FORMAL)."""
    return SelfFact(
        "preference", ADDRESS_FORMALITY, formality, f"{USER_EN} wants to be addressed {formality}.", language
    )


def answer_language_fact(wanted: str, language: str = "en") -> SelfFact:
    """The stored form of the language the person wants answers in ("English" / "Chinese")."""
    return SelfFact("preference", ADDRESS_LANGUAGE, wanted, f"{USER_EN} wants to be answered in {wanted}.", language)


# The answer languages a card may name (the values of _ADDRESS_LANGUAGES).
ANSWER_LANGUAGES = ("English", "Chinese")


def _address(clause: str) -> list[SelfFact]:
    """How the speaker wants to be addressed (formality, the language of the answers)."""
    language = "zh" if has_cjk(clause) else "en"
    out: list[SelfFact] = []
    if _ADDRESS_FORMAL.search(clause):
        formality = FORMAL
    elif _ADDRESS_CASUAL.search(clause):
        formality = CASUAL
    else:
        formality = ""
    if formality:
        out.append(formality_fact(formality, language))
    m = _ADDRESS_LANGUAGE.search(clause)
    if m:
        wanted = _ADDRESS_LANGUAGES[next(g for g in m.groups() if g).lower()]
        out.append(answer_language_fact(wanted, language))
    return out


# All-lowercase words (typed, or a recogniser without casing): the word after a cue that names
# ("called biscuit", "my husband theo's the cook", "i live in bristol now") is capitalised, so
# the name patterns (which take a capital as the mark of a name) read it. Not these words:
_LOWER_NOT_NAMES = (
    frozenset(
        (
            "the a an my our your his her their this that it is was has had have and but or so who which "
            "loves likes lives works gets got says said does did can will would could should might must too "
            "now then here there even only always never just really also still usually often sometimes "
            "recently finally actually basically literally very quite pretty home work school town city "
            "abroad away back up down out over with for from in on at to of by about as not no yes "
            "retired married single divorced widowed pregnant allergic okay ok fine good great tired "
            "today tomorrow tonight yesterday later soon anytime whenever sometime again please maybe "
            "him them me us you someone somebody everyone nobody mummy daddy mam nan nana gran granny grandad "
            "training charge general particular private practice residence part full"
        ).split()
    )
    | _NOT_NAMES
    | {r for r in RELATIONS if " " not in r}  # ("my sister called mum": no sister named Mum)
)
_NOT_A_LOWER_NAME = (
    "(?!(?:" + "|".join(sorted((re.escape(w) for w in _LOWER_NOT_NAMES), key=len, reverse=True)) + r")\b)"
)
_LOWER_NAME_CUES = re.compile(
    # ("i'm X" only after a greeting: "i'm teetotal", "i'm vegetarian and…" are no names)
    rf"\b(?:called|named|name is|name's|names are|calls? me|"
    r"(?:hi|hello|hey|hiya|heya|alright|morning|good morning|afternoon|good afternoon|evening|good evening)"
    r"(?: there| fay| dear| love)?[,!.]?\s+"
    rf"I(?:'m| am)|"
    rf"(?:my|our|her|his|their) (?:late |little |eldest |youngest |older |younger |baby )?(?:{_REL}|{_PET_WORD}),?|"
    r"(?:my|our) (?:youngest|eldest|oldest),|"
    r"(?:bungalow|flat|house|cottage|apartment|terrace|semi|village|town|city|care home) (?:in|near)|"
    r"live in|lives in|living in|lived in|moved to|moving to|from|grew up in|born in|raised in|flying to|near|"
    # ("a pit village outside barnsley", "down here in norwich", "with my daughter in cincinnati")
    r"outside|here in|(?:daughter|son|sister|brother|family|kids|children) in|engaged to|married to|marrying|"
    r"job in|moved up to|moved down to|moved out to|moved back to|out in|up in|down in|"
    r"retired in|retired to|away in|year at|year in|studying at|student at|"
    # ("my daughter claire is a nurse in leeds", "i work in leeds")
    r"(?:is|'s|'m|am|are) an? [a-z]+ (?:in|at)|works? in|working in|"
    rf"the (?:wife|husband|missus|hubby),|the (?:wife|husband|missus|hubby)(?:'s| is) called|"
    rf"^(?:{_GREETING}[!,.]*\s+)*{_GREETING}[!,.]*|"
    r"travelling to|traveling to|off to|trip to|holiday in)\s+" + _NOT_A_LOWER_NAME + r"(?P<name>[a-z][a-z'\-]+)"
    # (a word that is no name is not taken: "my mum lives in guangzhou" leaves "lives in" to its cue)
    r"(?='s\b|\s*(?:[.!?,;:]|$|\b(?:and|for|who|is|was|has|had|have|lives|"
    r"works|now|originally|with|since|but|too|here|there|these days|nowadays|by the way|btw|next|this|on|until|till|"
    r"doing|studying|for|\d+|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|"
    r"passed|died|"
    r"tomorrow|tonight|in|tho|though|lad|lass|girl|boy|born|turns|turned|turning|will|just|last|recently|"
    r"yesterday|today|called|rang|phoned|visited|came|said|told|texted|popped)\b|"
    # a name, then what it does ("our rabbit clementine keeps chewing"); not a verb itself
    # ("my dog loves walks": "loves" ends in -s too)
    r"(?<!s)\s+[a-z]+s\b))",
)


# "my daughter's sarah, she's a nurse", "my eldest is mark": a name said as what the relative
# is, at the end of its clause. A state or a number is said the same way ("my son's fine, thanks",
# "my grandson's eleven", "my wife's poorly and…"), so the word must be none of these either.
_LOWER_NAME_AS_RELATIVE = re.compile(
    rf"\b(?:my|our) (?:late |little |eldest |youngest |older |younger |baby )?(?:{_REL}|{_PET_WORD})(?:'s| is) "
    r"(?P<name>[a-z][a-z'\-]+)(?=\s*(?:[.!?,;:]|$)|\s+(?:and (?:she|he|they|her|his)|who|she|he)\b)"
)
_NOT_A_NAME_AS_RELATIVE = re.compile(
    # (the words `_LOWER_NOT_NAMES` has and the past tenses are turned away by `_name_capitalised`)
    r"[a-z]+ing|"
    r"(?:poorly|ill|unwell|grand|lovely|better|worse|dead|gone|alive|older|younger|young|big|small|little|tall|"
    r"short|due|lonely|lucky|healthy|diabetic|deaf|blind|disabled|coeliac|vegan|vegetarian|bedbound|housebound|"
    r"cross|upset|mad|brilliant|wonderful|fab|smart|clever|kind|nice|naughty|spoilt|poor|fit|strong|weak|frail|"
    r"mobile|independent|local|nearby|overseas|inside|outside|asleep|awake|off|same|similar|different|bright|"
    r"quiet|shy|loud|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    # ("what's my dog's name, my neighbour asked?": what of the relative is asked about)
    r"name|names|surname|nickname|birthday|age|job|address|number|phone|email|called|what|where)"
)


# a past-tense verb after a cue is no name ("my dog died last week", "my son visited last week";
# Ted, Fred and Ned are names)
_A_VERB_NOT_A_NAME = re.compile(r"[a-z]{3,}ed|died|left|came|went|got|made|ran|fell|broke|lost|won|sold|bought|took")


# Where one name stands in an all-lowercase line, in this order: before a pleasantry ("oksana,
# pleased to meet you", "i'm kwame, nice to meet you"), an utterance that starts with it ("jamal
# here"), "it's X" after a greeting ("hey fay! it's chloe"), before "'s my name", "'s the name",
# "for short"
_LOWER_NAME_SPOTS = [
    re.compile(
        rf"(?:^|[.!?]\s*)(?:{_GREETING}[!,.]*\s+)*(?:[iI]'?m |[iI] am )?(?P<name>[a-z][a-z'-]+)"
        r"(?=,? (?:(?:very |so )?(?:pleased|nice|good|lovely|glad) to meet you|how do you do)\b)"
    ),
    re.compile(rf"^(?:{_GREETING}[!,.]*\s+)*(?P<name>[a-z][a-z'-]+)(?= (?:here|speaking)\b)"),
    re.compile(
        rf"^(?:{_GREETING}[!,.]*\s+)+(?:it'?s|this is) (?!{_NOT_A_NAME_AFTER_ITS})(?P<name>[a-z][a-z'-]+)(?=[!.]*$)"
    ),
    re.compile(r"(?:^|[.!?,]\s*)(?P<name>[a-z][a-z'-]+)(?='s my name\b|'s the name\b| for short\b)"),
    re.compile(r"(?:^|[.!?,]\s*)the name(?:'s| is) (?P<name>[a-z][a-z'-]+)"),
]


def _names_capitalised(text: str) -> str:
    """`text` with the names after naming cues capitalised, when it has no capitals of its own
    (the pronoun "I" apart)."""
    if re.search(r"[A-Z]", re.sub(r"\bI\b", "", text)):
        return text
    # "i live with two flatmates, sam and priya", "we have twin boys, jayden and jordan": the names
    # after them
    text = re.sub(
        r"(\blive with (?:my |our )?(?:two |three |four |a |an )?(?:flatmates?|roommates?|housemates?),? |"
        r"\b(?:have|'ve got|have got|'ve) (?:twin|two|three|four|five) (?:little )?"
        r"(?:boys|girls|sons|daughters|kids|children|grandsons|granddaughters|grandkids|grandchildren|dogs|cats),? "
        r"(?:called |named )?|\b(?:my|our) twins?(?: boys| girls)?,? (?:called |named )?)"
        r"([a-z]+(?:(?:, | and )[a-z]+)*)(?=\s*(?:[.!?,;]|$)|,? (?:are|turn|will|who)\b)",
        lambda m: (
            m.group(1)
            + re.sub(
                r"[a-z]+",
                lambda w: w.group(0) if w.group(0) in _LOWER_NOT_NAMES else w.group(0).capitalize(),
                m.group(2),
            )
        ),
        text,
    )
    # "my name's helen okafor": a first name and a surname
    text = re.sub(
        r"\bmy name(?:'s| is) ([a-z][a-z'-]+) ([a-z][a-z'-]+)(?=\s*(?:[.!?,;]|$|\b(?:and|but)\b))",
        lambda m: (
            m.group(0)
            if {m.group(1), m.group(2)} & _LOWER_NOT_NAMES
            else m.group(0)[: m.start(1) - m.start(0)] + m.group(1).capitalize() + " " + m.group(2).capitalize()
        ),
        text,
    )
    for spot in _LOWER_NAME_SPOTS:
        text = spot.sub(_name_capitalised, text)
    text = _LOWER_NAME_AS_RELATIVE.sub(
        lambda m: m.group(0) if _NOT_A_NAME_AS_RELATIVE.fullmatch(m.group("name")) else _name_capitalised(m, True),
        text,
    )
    return _LOWER_NAME_CUES.sub(partial(_name_capitalised, verbs_too=True), text)


def _name_capitalised(m: re.Match[str], verbs_too: bool = False) -> str:
    """The match with the word of its `name` group capitalised, unless that word is no name
    (`verbs_too`: nor a past-tense verb, after the cues that a verb may follow)."""
    name = m.group("name")
    if name in _LOWER_NOT_NAMES or verbs_too and _A_VERB_NOT_A_NAME.fullmatch(name):
        return m.group(0)
    start, end = m.start("name") - m.start(), m.end("name") - m.start()
    return m.group(0)[:start] + name.capitalize() + m.group(0)[end:]


# Chinese as a recogniser writes what people say: a filler before what they say ("就是我有个孙子…",
# "嗯那个我…") and no commas ("我老伴叫张国强他以前是司机", "孙子叫张小宝今年五岁"): the
# filler goes, and a comma comes where a new clause starts (a pronoun as its subject after a
# name, or what is said of someone right after their name)
_ZH_LEADING_FILLER = re.compile(r"^(?:(?:嗯+|呃+|额|啊|哦|那个|这个|就是|然后|那)[，,、\s]*)+(?=我)")
_ZH_PRONOUN_CLAUSE = re.compile(
    r"(?<=[\u4e00-\u9fff])(?<![和跟给让叫对把被说与同陪带找问帮我你您的是为替])"
    r"(?=[他她它](?:以前|今年|现在|已经|每天|也|是|在|住|对|有|得了|喜欢|最|很|不|还|刚|才))"
)
_ZH_AFTER_NAME = re.compile(r"(叫[\u4e00-\u9fff]{2,3}?)(?=今年|去年|以前|现在|已经|住在|在|是|也)")


# a space between two Chinese words is where a speaker paused (the recogniser writes one there,
# and people type one): a comma ("我跟我老伴住 她叫王秀英")
_ZH_SPACE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


# a relative's full name said right after the relation, then what they do: "我儿子王磊在深圳当工程师"
# reads as "我儿子叫王磊，在深圳当工程师" (a surname, then one or two characters)
_ZH_KIN_FULL_NAME = re.compile(
    rf"((?:我(?:的|家)?|(?<=[，,]))(?:{ZH_RELATIONS}))([{ZH_SURNAMES}][{CJK_IDEOGRAPHS}]{{1,2}}?)"
    r"(?=在|是|今年|住|也|已经|当|做|去年|现在|以前|之前|原来|退休|刚|和|跟|[，,])"
)


def _zh_as_written(text: str) -> str:
    if not has_cjk(text):
        return text
    text = _ZH_LEADING_FILLER.sub("", _ZH_SPACE.sub("，", text.strip()))
    text = _ZH_KIN_FULL_NAME.sub(r"\1叫\2，\1", text)
    # a medicine said first: "降压药我一天吃一片" is "我一天吃一片降压药"
    text = re.sub(
        r"^([\u4e00-\u9fff]{1,6}?药)我((?:每天|一天|早上|晚上|每晚)?[^，,。！？]{0,6}?(?:吃|服)(?:[一两二三半]?(?:片|粒|颗))?)(?=[，,。！？]|$)",
        r"我\2\1",
        text,
    )
    # a number, time or weekday put right in the same breath ("我今年七十四，不对不对，七十五了",
    # "每天下午两点钟，不对，两点半，就去打麻将"): the later one stands
    text = when.put_right_zh(text)
    # a time, then what is done then, after a comma ("每天下午两点半，就去茶馆打麻将"): one clause
    text = re.sub(r"(?<=[点半刻分钟])[，,]\s*(?=就|便)", "", text)
    # a correction's lead ("不对不对，我说错了，儿媳妇是教中学的"): what follows is the statement
    # ("对不对" in it would read as a question)
    text = re.sub(r"^(?:(?:不对|不是|哦不|错了)[，,、\s]*)+(?:我?说错了[，,。\s]*|应该是)?", "", text)
    return _ZH_AFTER_NAME.sub(r"\1，", _ZH_PRONOUN_CLAUSE.sub("，", text))


# A word put right in the same breath: "my son's called stephen, no wait, i always get that wrong,
# it's steven with a v" is "my son's called steven"; "on tuesday, sorry, i mean wednesday"
_CORRECTED_EN = re.compile(
    r"\b(?!(?:no|yes|oh|well|ok|okay|sorry|right|so|and|but)\b)(?P<old>[A-Za-z]+),? "
    r"(?:no wait|no sorry|sorry no|sorry|i mean|I mean|or rather|no no),? "
    # (an aside only before "it's": "no wait, i always get that wrong, it's steven")
    r"(?:(?:[^,.!?]{1,40}, )?(?:it'?s|it is|I mean|i mean|I meant|i meant) )?(?P<new>[A-Za-z]+)"
    r"(?: with an? [a-z]\b)?(?=\s*(?:[,.!?;]|$))",
    re.I,
)


# A joint said of as the subject is the condition of having it bad: "my knees are bad" is "I have
# bad knees", "my back's playing up" is "I have a bad back" (health.CONDITIONS names them so)
_BAD_JOINT_EN = re.compile(
    r"\bmy (knees|knee|back|hips|hip)(?: is| are|'s| has been| have been) (?:really |very |quite |a bit |so )?"
    r"(?:bad|dodgy|playing up|not (?:good|great|too good|so good)|giving me (?:trouble|gyp|grief))\b",
    re.I,
)


def _bad_joint_said(m: re.Match[str]) -> str:
    joint = m.group(1).lower()
    return "I have bad knees" if joint == "knees" else f"I have a bad {joint.rstrip('s')}"


# Spoken shortcuts that hide a statement: "can't eat prawns or any shellfish mate" is "I can't eat
# prawns or shellfish" (the subject left out, "any" before the last item, a word of address); an
# allergy found out about is still one ("found out I was allergic to shellfish the hard way" is "I'm
# allergic to shellfish": how they found out is no part of the allergen); a joint said bad
_SPOKEN_EN: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # "I've got a tortoise, called Mabel": the name after a comma is the pet's
    (re.compile(rf"\b(an? (?:{'|'.join(PETS)}|{_PET_WORD})),? (called|named)\b", re.I), r"\1 \2"),
    (
        re.compile(
            r"\b(?:I )?(?:found out|discovered|learn(?:ed|t)|realised|realized|(?:it )?turned out)(?: that)? I was "
            r"(?=(?:very |really |severely |badly |deathly )?allergic\b)",
            re.I,
        ),
        "I'm ",
    ),
    (re.compile(r"(?<=\w) the hard way\b", re.I), ""),
    (_BAD_JOINT_EN, _bad_joint_said),
    (
        re.compile(
            r"^(?:(?:and|oh|well|so|but|also),? )?(?=(?:can'?t|cannot|can not) (?:eat|have|drink|touch)\b)", re.I
        ),
        "I ",
    ),
    (re.compile(r"\b(or|and) any (?=[a-z])", re.I), r"\1 "),
    (re.compile(r",? \b(?:mate|love|dear|pet|duck|darling|pal|buddy)\b(?=\s*(?:[,.!?;]|$))", re.I), ""),
)


def _spoken_en(text: str) -> str:
    for pattern, said in _SPOKEN_EN:
        text = pattern.sub(said, text)
    return text


def _corrected_en(text: str) -> str:
    def put_right(m: re.Match[str]) -> str:
        old, new = m.group("old"), m.group("new")
        if new.lower() in _LOWER_NOT_NAMES | {"it", "that", "the", "a", "an", "i", "my", "was", "is"}:
            return m.group(0)
        return new.capitalize() if old[:1].isupper() else new

    return _CORRECTED_EN.sub(put_right, text)


def extract_self_facts(
    text: str, now: datetime.datetime | None = None, before: str = "", known: Sequence[tuple[str, str]] = ()
) -> list[SelfFact]:
    """The statements about oneself in `text` (one utterance of the user), in order; [] for
    questions and for anything that is not plainly a first-person statement. `now`: when it
    was said (default: the current local time); a day it names ("turns seven on Sunday") is
    stored as the date it was then. `before`: what the user said just before, read only for
    whom "she" or "he" means ("I look after my mum." then "She's coeliac."). `known`: the
    relatives named in earlier sessions (`relatives_known`), read by name alone ("Claire is
    getting married in June")."""
    now = now or datetime.datetime.now().astimezone()
    text = _names_capitalised(_widowed_spouse(as_written(_zh_as_written(text))))
    text = text if has_cjk(text) else _spoken_en(_corrected_en(text))
    # "hey Fay! it's Chloe": the greeting and the name, one clause
    text = re.sub(
        rf"^((?:{_GREETING}[!,.]*\s+)*{_GREETING})[!.]+\s+(?=it'?s [A-Z][a-z'-]+[!.]*$)", r"\1, ", text, flags=re.I
    )
    facts: list[SelfFact] = []
    before = _names_capitalised(as_written(before)) if before else before
    relative = _last_relative(before)
    named = [*known, *_named_relatives(before)]
    for clause in _clauses(text):
        clause = _names_as_relatives(clause, named)
        # "our beagle is called Biscuit, she's eleven": the dog (its breed kept), and "she" is the dog
        bred = None if has_cjk(clause) else _OWN_BREED_EN.search(clause)
        if bred:
            breed = bred.group(1).lower()
            kind = _BREEDS.get(breed.split()[-1], "dog")
            clause = clause[: bred.start(1)] + kind + clause[bred.end(1) :]
            facts.append(_breed_fact(kind, breed))
        clause, relative = _pronouns_as_relative(clause, relative)
        clause = _DIAGNOSED.sub(
            "", _ORDERED.sub(lambda m: "我不能" if has_cjk(m.group(0)) else "I must avoid ", _before_supposing(clause))
        )
        if not clause or _NOT_OWN_EN.search(clause) or _NOT_OWN_ZH.search(clause):
            continue
        clause = _without_hedged_parts(clause)
        if not clause:
            continue
        clause = _instead_on_the_day_before(clause, before)
        if is_question(clause):
            # "My name is Tom, what's yours?" / "我叫林，你呢？": the statement before the question
            clause = _statement_before_question(clause)
            if not clause:
                continue
        if has_cjk(clause):
            clause = _zh_subject_carried(clause)
            facts += _without_echoed_routines(_zh(clause, now) + _zh_more(clause, now))
        else:
            clause = _APPOSITION_EN.sub(
                lambda m: (
                    f"{m.group(1)}, I am a {m.group(2)}"  # "I'm seventy nine, retired postman"
                    if m.group(2).lower().startswith("retired ")
                    and not re.match(r"retired (?:as|from)\b", m.group(2), re.I)
                    else f"{m.group(1)}, {'I' if re.match(r'(?:used|worked|retired)', m.group(2), re.I) else 'I am'} "
                    + m.group(2)
                ),
                clause,
            )
            facts += _without_echoed_routines(_en(clause, now) + _en_more(clause, now))
        facts += _address(clause)
    # a relative named before, read by name ("Jordan is allergic to kiwi" after "twin boys, Jayden
    # and Jordan"), is no new "is called" of their kind (one of several would replace the
    # statement that names them all)
    names = {name for _relation, name in named}
    # (their death is new: "sadly buster died on saturday" after "our dog buster is fourteen")
    facts = [
        f
        for f in facts
        if not (
            f.key.count(":") == 1
            and f.key.startswith("family:")
            and f.value in names
            and not re.search(r"\blate\b|去世|过世", f.content)
        )
    ]
    facts = _ages_of_several(facts, named + _several_named(text))
    # one fact per key: the last statement in the utterance wins
    by_key: dict[str, SelfFact] = {}
    for fact in facts:
        by_key.pop(fact.key, None)
        by_key[fact.key] = fact
    return list(by_key.values())


def _ages_of_several(facts: list[SelfFact], named: Sequence[tuple[str, str]]) -> list[SelfFact]:
    """The age of one of several of a kind, each under its own key (`family:<relation>:age_<name>`):
    "Lily is nine and Max is six" after "two grandchildren, Lily and Max" kept one age for both
    keys, and said Lily's for Max."""
    names: dict[str, set[str]] = {}
    for relation, name in named:
        names.setdefault(relation_key(relation), set()).add(name.lower())
    several = {key: len(each) for key, each in names.items()}
    out = []
    for fact in facts:
        parts = fact.key.split(":")
        who = name_in_age(fact.content)
        if len(parts) == 3 and parts[0] == "family" and parts[2] == "age" and who and several.get(parts[1], 0) > 1:
            fact = SelfFact(fact.kind, f"{fact.key}_{who.lower()}", fact.value, fact.content, fact.language)
        out.append(fact)
    return out


# what they are, said after a comma: "I'm eighty seven, a retired school secretary" ("…, I'm a
# retired school secretary")
_APPOSITION_EN = re.compile(
    r"^(I(?:'m| am) [^,]{1,40}),\s+(an? (?!lot\b|bit\b|little\b)[a-z]|used to (?:be|work|drive|teach|run)\b|"
    r"worked as\b|retired (?:as|from)\b|"
    # a job without its article: "I'm seventy nine, retired postman"
    r"retired (?!(?:and|but|now|since|in|to|last|this|early|when|after|so|for|at|on)\b)"
    r"(?=[a-z-]+(?: [a-z-]+)?\s*(?:[.!?]|$)))",
    re.I,
)
_MENTIONED_RELATIVE = re.compile(
    # ("we've got a cat called Biscuit, she's three": had, not "my")
    rf"\b(?:my|our|(?:we've got|we have got|we have|we got|i've got|i have got|i have|i got) an?) "
    rf"(?:late |little (?!girl\b|boy\b)|eldest |youngest |older |younger |old )?({_REL})\b"
    # (a pronoun after the comma is no name: "I look after my dad, he's got dementia")
    r"(?:,? (?!(?:He|She|They|It|We|I|You|His|Her|Who|Which|That|This|And|But|So)\b)((?-i:[A-Z][a-z]+))\b|"
    r" (?:is called|is named|called|named|'s name is|'s called|'s named) ((?-i:[A-Z][a-z]+))\b)?",
    re.I,
)
_PRONOUN_EN = re.compile(
    r"(?:^|(?<=\band )|(?<=\bbut )|(?<=\bso )|(?<=\bbecause )|(?<=, ))(she|he|her|his)\b(?=(?:'s|\s)\s*(?!self\b))",
    re.I,
)


_MENTIONED_RELATIVE_ZH = re.compile(r"(?:我(?:的|家(?:的)?)?|^|[，,])(?:大|小|二)?(" + ZH_RELATIONS + r")")


def pronoun_context(before: str, text: str) -> str:
    """What to keep as `before` for the user's next words: these words after what was kept when
    they name a relative ("she" is then the last one named, and each one named by name stays
    known by name: "Emmanuel can't have grapefruit" two lines after "my husband Emmanuel"), else
    what was kept ("I look after my mum." stays through "Her name is Beatrice." for "She's
    coeliac.")."""
    found = _MENTIONED_RELATIVE_ZH if has_cjk(text or "") else _MENTIONED_RELATIVE
    if found.search(text or "") or _several_named(_names_capitalised(as_written(text or ""))):
        kept = before if not before or before.endswith((".", "!", "?", "。", "！", "？")) else before + "."
        return f"{kept} {text}".strip()[-400:]
    # a plan's day is kept too, for "we're going to Mull instead" (said on that day)
    if re.search(rf"\b(?:{_WHEN})\b", text or "", re.I):
        return f"{before} {text}".strip()[-400:]
    return before


def _widowed_spouse(text: str) -> str:
    """ "I'm a widower, my Edna passed four years ago": the late wife ("my wife Edna passed…");
    a widow's "my Frank died": the late husband. (A name said with no relation word is read as
    the spouse only beside "widow"/"widower".)"""
    m = re.search(r"\bwidow(er)?\b", text, re.I)
    if m is None:
        return text
    spouse = "wife" if m.group(1) else "husband"
    return re.sub(
        rf"\bmy (?!(?:{_REL})\b)([A-Za-z][a-z'-]+) (?=(?:{_DIED_EN}))",
        lambda n: n.group(0) if n.group(1).lower() in _LOWER_NOT_NAMES else f"my {spouse} {n.group(1)} ",
        text,
        flags=re.I,
    )


def _named_relatives(text: str) -> list[tuple[str, str]]:
    """Every relative `text` names with a name ("me, my wife Funmi and our little girl Tolu":
    [("wife", "Funmi"), ("little girl", "Tolu")]; "我外孙女叫朵朵": [("外孙女", "朵朵")])."""
    if not text:
        return []
    zh = [
        (m.group(1), m.group(2))
        for pattern in (_ZH_FAMILY_NAMED, _ZH_FAMILY_NAMED_AFTER, _ZH_NICKNAMED)
        for m in pattern.finditer(text)
    ]
    return (
        [
            (m.group(1).lower(), m.group(2) or m.group(3))
            for m in _MENTIONED_RELATIVE.finditer(text)
            if m.group(2) or m.group(3)
        ]
        + _several_named(text)
        + zh
    )


def _several_named(text: str) -> list[tuple[str, str]]:
    """Each one of several of a kind `text` names ("we have twin boys, Jayden and Jordan":
    [("boy", "Jayden"), ("boy", "Jordan")])."""
    return [
        (m.group(2).lower(), name)
        for m in _EN_FAMILY_HAS.finditer(text or "")
        if m.group(3)
        for name in re.split(r",\s*|\s+and\s+", m.group(3))
    ]


# a word said before a name at the start of what one says ("actually biscuit is four now")
_SAID_FIRST = (
    "|".join(
        f"(?<=^[{w[0].upper()}{w[0]}]{re.escape(w[1:])} )"
        for w in ("actually", "oh", "well", "sorry", "no", "now", "so", "sadly", "i'm afraid")
    )
    + ")"
)


def _names_as_relatives(clause: str, named: list[tuple[str, str]]) -> str:
    """ "Funmi can't eat shellfish" after "my wife Funmi and our little girl Tolu": "my wife Funmi
    can't eat shellfish", so the readers of a relative's facts read it; "下周三朵朵过生日" after
    "我外孙女叫朵朵": "下周三我外孙女朵朵过生日"."""
    if has_cjk(clause):
        for relation, name in named:
            if has_cjk(name) and relation not in clause:
                said_alone = rf"(?<![叫是])(?<!{re.escape(relation)}){re.escape(name)}"
                clause = re.sub(said_alone, f"我{relation}{name}", clause, count=1)
        return clause
    for relation, name in named:
        # (said already: "my wife Funmi"; not another of that kind: "my grandchild Lily is nine and Max…")
        if re.search(rf"\b(?:my|our) {re.escape(relation)}\b(?! (?!{re.escape(name)}\b)(?-i:[A-Z]))", clause, re.I):
            continue
        clause = re.sub(
            rf"(?:^|(?<=, )|(?<=\band )|(?<=\bbut )|{_SAID_FIRST}(?i:{re.escape(name)})"
            r"(?='s |\s+(?:is|has|can't|cannot|can|won't|takes|turned|turns|was|will|starts|goes|loves|hates|"
            r"works|lives|needs|must|should|isn't|doesn't|died|passed|was put down|"
            # (what a relative does for them, as a routine: "Paul rings me every Sunday evening")
            r"rings|calls|phones|visits|comes|pops|drops|texts|emails|brings|picks|drives|helps|plays|does|"
            r"got engaged|just got|has just|took|moved|got a|has moved|is moving)\b)",
            f"my {relation} {name}",
            clause,
            count=1,
        )
    return clause


def _last_relative(text: str) -> str:
    """The last relative `text` names, with the name said with it ("my mum" → "mum", "my
    daughter is called Leela" → "daughter Leela"), or ""."""
    if has_cjk(text or ""):
        zh = list(_MENTIONED_RELATIVE_ZH.finditer(text))
        return zh[-1].group(1) if zh else ""
    found = list(_MENTIONED_RELATIVE.finditer(text or ""))
    if not found:
        return ""
    m = found[-1]
    return " ".join(filter(None, (m.group(1).lower(), m.group(2) or m.group(3))))


# relatives "he" and "she" may both mean (a toddler, a partner, a pet)
_EITHER_SEX = {"child", "kid", "baby", "toddler", "grandchild", "partner", "friend", "best_friend", "dog", "cat"}


def _zh_pronouns_as_relative(clause: str, relative: str) -> tuple[str, str]:
    """ "他对花生过敏" after "我外孙叫糖糖" → "我外孙对花生过敏" (他 for a male or either-sex
    relative, 她 for a female one); "小孙子叫豆豆" is the user's grandson."""
    clause = re.sub(r"^(?:大|小|二)?(?=(?:" + ZH_RELATIONS + r")叫)", "我", clause)
    named = _last_relative(clause.split("他")[0].split("她")[0]) or relative
    if not named or not has_cjk(named):
        return clause, _last_relative(clause) or relative
    key = relation_key(named)

    def fits(m: re.Match[str]) -> str:
        female = m.group(3) == "她"
        wrong = MALE_RELATIONS if female else FEMALE_RELATIONS
        if named in wrong or key in wrong:
            return m.group(0)
        return f"{m.group(1)}我{named}{m.group(2) or ''}"  # (the relative, then the day: as said of them)

    # (a day may come first: "…，下个星期三他就满十岁了")
    day = (
        r"((?:下个?|这个?)?(?:星期|周|礼拜)[一二三四五六日天]|明天|后天|今年|明年|下个?月|"
        r"[0-9一二三四五六七八九十]{1,3}月[0-9一二三四五六七八九十]{1,3}[号日])?"
    )
    clause = re.sub(
        r"(^|[，,])"
        + day
        # ("不对，她七岁了": an age said right after them)
        + r"(他|她)(?=对|有|是|今年|以前|原来|过去|不能|不吃|每天|也|才|已经|在|得了|患有|叫|就|满|要|喜欢|爱|最爱|"
        r"[0-9一二三四五六七八九十两]{1,3}岁|"
        # ("他周六要去参加数学比赛": the day after him)
        r"(?:这|下)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|明天|后天|今晚|周末|下个?月)",
        fits,
        clause,
    )
    return clause, _last_relative(clause) or relative


def _split_relative(relative: str) -> tuple[str, str]:
    """ "little girl Saoirse" → ("little girl", "Saoirse"); "mum" → ("mum", "")."""
    words = relative.split()
    if len(words) > 1 and words[-1][:1].isupper():
        return " ".join(words[:-1]), words[-1]
    return relative, ""


def _pronouns_as_relative(clause: str, relative: str) -> tuple[str, str]:
    """`clause` with "she"/"he" (and "her"/"his" before a noun) said as the relative last named
    ("My son Rory is five and he's allergic to eggs" → "… and my son is allergic to eggs"),
    when the pronoun fits the relative's sex, and the relative's name said alone as the
    relative ("Jayden's got a nut allergy" after "my grandson Jayden"); and the relative named
    last, for what follows."""
    if has_cjk(clause):
        return _zh_pronouns_as_relative(clause, relative)
    if has_cjk(relative):  # "我女朋友叫小雨, she's a doctor": the relative in English words
        relative = relation_key(re.sub(r"\s.*", "", relative))
    # "Sorry, mum is 88, not 86": a parent's word said as a name is the user's own parent
    clause = re.sub(
        r"(?:^|(?<=, )|(?<=\bbut )|(?<=\band ))(mum|mom|dad|mother|father|grandma|grandpa|gran|nan)(?= is |'s )",
        r"my \1",
        clause,
        flags=re.I,
    )
    word, named = _split_relative(relative)
    if named and not re.search(rf"\b(?:my|our) {re.escape(word)}\b", clause, re.I):
        clause = re.sub(
            rf"(?:^|(?<=, )|(?<=\band )|(?<=\bbut )|{_SAID_FIRST}{re.escape(named)}"
            r"(?='s |'s$| is | has | can't | cannot | takes | turned )",
            f"my {relative}",
            clause,
        )
    key = relation_key(word) if word else ""
    out: list[str] = []
    at = 0
    for m in _PRONOUN_EN.finditer(clause):
        before = _last_relative(clause[: m.start()])
        if before:
            relative = before
            word, _ = _split_relative(relative)
            key = relation_key(word)
        elif re.search(r"\b(?:called|named) [A-Za-z]", clause[: m.start()]):
            continue  # someone or something else named just before: "an old kelpie called Smoko, he's 13"
        female = m.group(1).lower() in ("she", "her")
        other_sex = MALE_RELATIONS if female else FEMALE_RELATIONS
        if not key or key in other_sex or (key not in FEMALE_RELATIONS | MALE_RELATIONS | _EITHER_SEX):
            continue
        said = f"my {relative}" if m.group(1).lower() in ("she", "he") else f"my {word}'s"
        if m.group(1)[0].isupper() and m.start() == 0:
            said = said[0].upper() + said[1:]
        out += [clause[at : m.start()], said]
        at = m.end()
    clause = "".join(out) + clause[at:]
    return clause, _last_relative(clause) or relative


def states_fact(texts: list[str], key: str, content: str, known: Sequence[tuple[str, str]] = ()) -> bool:
    """True when the user's own words in `texts` state this fact: same key, and the stated
    value is in `content` (the memory policy's check that a `user_confirmed` self-statement
    really came from the user, and says what they said). `known`: the relatives named before
    (`relatives_known`), for words that name one alone ("Claire is getting married in June")."""
    if not key:
        return False
    # (each text with the last one before it that named a relative, in their order: "She's
    # coeliac" after "I look after my mum" and "Her name is Beatrice")
    before = ""
    for text in texts:
        said = extract_self_facts(text, before=before, known=known)
        if any(f.key == key and _says_value(f, content) for f in said):
            return True
        before = pronoun_context(before, text)
    return False


_NEGATED = re.compile(r"\b(?:not|don't|doesn't|never|no longer)\b|不|没", re.I)


def _says_value(fact: SelfFact, content: str) -> bool:
    """`content` says the value of `fact`: the whole value ("Tom", not "Tommy"; "林", not
    "林小雨"), with the same polarity ("likes tea", not "does not like tea")."""
    if content.strip() == fact.content:
        return True  # as the dialogue writes it ("用户明天要去北京。" for the value "明天去北京")
    stored_name = name_from_content(content)
    if fact.key == "name" and stored_name:
        return stored_name.lower() == fact.value.lower()
    if bool(_NEGATED.search(content)) != bool(_NEGATED.search(fact.content)):
        return False
    if has_cjk(fact.value):
        return fact.value in content  # no word boundaries in Chinese
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(fact.value)}(?![A-Za-z0-9])", content, re.I) is not None


def render_fact(content: str, name: str = "") -> str:
    """A stored self-fact as a prompt line: "User likes hiking." → "Tom likes hiking."."""
    if not name:
        return content
    if content.startswith(USER_EN + "'s name is") or content.startswith(USER_ZH + "的名字是"):
        return content  # "User's name is Tom." stays as it is: it says who the user is
    if content.startswith(USER_EN):
        return name + content[len(USER_EN) :]
    if content.startswith(USER_ZH):
        return name + content[len(USER_ZH) :]
    return content


def taste_from_content(content: str) -> tuple[str, bool] | None:
    """(thing, likes it) from a stored taste ("User likes hiking." / "User does not like tea." /
    "用户喜欢咖啡。"), else None."""
    m = re.match(rf"(?:{USER_EN} (likes|does not like) (.+?)\.|{USER_ZH}(喜欢|不喜欢)(.+?)。)$", content.strip())
    if not m:
        stopped = _STOPPED_CONTENT.match(content.strip())  # "User no longer drinks cola."
        if stopped:
            return stopped.group(1), False
        habit = _HABIT_CONTENT.match(content.strip())  # "User drinks tea now."
        return (habit.group(1), True) if habit else None
    return (m.group(2) or m.group(4)), (m.group(1) or m.group(3)) in ("likes", "喜欢")


def given_up(content: str) -> bool:
    """Whether a stored taste is a habit given up ("User gave up the piano.", "User no longer
    drinks cola."): said as such, never as a dislike."""
    return _STOPPED_CONTENT.match(content.strip()) is not None


def name_from_content(content: str) -> str:
    """The name in a stored name fact ("User's name is Tom." / "用户的名字是林。"), else ""."""
    m = re.match(rf"(?:{USER_EN}'s name is|{USER_ZH}的名字是)\s*(.+?)[.。]?$", content.strip())
    return m.group(1).strip() if m else ""


def _statement_before_question(clause: str) -> str:
    """The statement before a question in one clause: "My name is Tom, what's yours?" →
    "My name is Tom"; "" when the clause opens with the question."""
    head: list[str] = []
    for part in re.split(r"\s*[,，]\s*", clause)[:-1]:
        if is_question(part):
            break
        head.append(part)
    return ", ".join(head)


# A diagnosis is the person's own fact, not hearsay: "the doctor says I'm coeliac" is "I'm coeliac"
# (a health fact left out would let the reply guard offer bread); "she told me I'm…" stays hedged.
_CLINICIAN = r"(?:the|my|our|a|me) (?:doctor|gp|consultant|specialist|dietitian|dietician|allergist|cardiologist)s?"
_DIAGNOSED = re.compile(
    rf"\b{_CLINICIAN} (?:says|said|told me|has told me|confirmed|reckons)"
    r"(?: (?:in|over|during|back in|last|this|at) (?:the )?[a-z]+(?: [a-z]+)?)?(?: that)?,? (?=I\b)|"
    r"(?:医生|大夫)(?:说|告诉我|确诊)(?=我)",
    re.I,
)
# ...and so is what they ordered: "the doctor says no red meat", "my GP told me to cut out salt"
# (read as "I must avoid red meat")
_ORDERED = re.compile(
    rf"\b{_CLINICIAN} (?:says|said|told me|has told me|wants me|'s told me|has put me|put me)(?: that)?,? "
    r"(?:no (?:more )?|to (?:avoid|cut out|cut down on|stay off|keep off|stop eating|stop drinking|give up) |"
    r"(?:I )?(?:should|must|need to|have to) (?:avoid|cut out|stay off|keep off|give up) |"
    r"(?:I )?(?:can't|cannot|mustn't|shouldn't) (?:have|eat|drink) )|"
    # "the doctor won't let me eat sugar"
    rf"\b{_CLINICIAN} (?:won't|will not|doesn't|does not) (?:let|allow) me (?:to )?(?:have|eat|drink) |"
    # "医生不让我吃甜的", "医生让我别吃咸的", "医生不许我喝酒"
    r"医生(?:不让|不许|不准|让我别|叫我别|要我别|让我不要|叫我不要)(?:我)?(?=吃|喝)",
    re.I,
)


def _instead_on_the_day_before(clause: str, before: str) -> str:
    """ "We're going to Mull instead" right after "we're off to Skye this Friday": the plan
    changed, not its day, so the new one is read on that day (and replaces the old one, which
    has the same key)."""
    if not before or not re.search(r"\binstead\b", clause, re.I) or re.search(rf"\b(?:{_WHEN})\b", clause, re.I):
        return clause
    # (a plan for a plan: "I've taken up jigsaws instead" after "Carol came home on Tuesday" is no plan)
    going = r"\b(?:going|off to|visiting|flying|driving|heading|travel+ing|meeting|seeing|having)\b"
    if not (re.search(going, clause, re.I) and re.search(going, before, re.I)):
        return clause
    said = list(re.finditer(rf"\b({_WHEN})\b", before, re.I))
    return re.sub(r"\s*\binstead\b", f" {said[-1].group(1)} instead", clause, count=1, flags=re.I) if said else clause


def _before_supposing(clause: str) -> str:
    """The clause up to a later comma-separated part that supposes ("Ray here, Raymond if my
    mother's listening": the name stands); a clause that opens with one stays whole (and is then
    dropped: "If I had a dog, I'd call it Rex")."""
    parts = re.split(r"\s*,\s*", clause)
    for i, part in enumerate(parts[1:], 1):
        if _NOT_OWN_EN.search(part) and not _NOT_OWN_EN.search(", ".join(parts[:i])):
            return ", ".join(parts[:i])
    return clause


def _without_hedged_parts(clause: str) -> str:
    """The clause without its comma-separated parts that hedge or report ("maybe shellfish",
    "my doctor says I have diabetes")."""
    if not _HEDGED.search(clause):
        return clause
    # (a hedge after "so": "I've got gout so my wife says I'm grumpy": the gout stands)
    parts = re.split(r"\s*[,，]\s*|\s+(?=(?:so|but|because) )", clause)
    return ", ".join(p for p in parts if not _HEDGED.search(p))


# A new first-person clause after a comma ("I don't like cola any more, I like coffee now"):
# its own statement, so a list ("tea, cake and jazz") does not run into it.
# ("This weekend, I'm going hiking" stays whole: only a clause that opens with a verb of taste.)
_EN_NEW_CLAUSE = re.compile(r",\s*(?=(?:but |and |so |now |actually )?I (?!am\b|will\b)[a-z])", re.I)


def _clauses(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？；;])\s*", text.strip())
    return [c for part in parts for c in _by_language(part)]


def _by_language(sentence: str) -> list[str]:
    """A sentence's clauses, and a line that changes language at a comma as one clause per
    language ("hi, I'm Sam, 我在上海教英语"; "I'm allergic to cats, 一碰猫就打喷嚏"): each read by
    its own language's patterns."""
    clauses = [c.strip() for c in _EN_NEW_CLAUSE.split(sentence) if c.strip()]
    out: list[str] = []
    for clause in clauses:
        parts = [p for p in re.split(r"\s*[,，]\s*", clause) if p]
        scripts = [has_cjk(p) and not re.search(r"[A-Za-z]{2,}(?:\s+[A-Za-z']+){2,}", p) for p in parts]
        if len(set(scripts)) < 2:
            out.append(clause)
            continue
        start = 0
        for i in range(1, len(parts) + 1):
            if i == len(parts) or scripts[i] != scripts[start]:
                out.append(("，" if scripts[start] else ", ").join(parts[start:i]))
                start = i
    return out


def _clean_object(value: str) -> str:
    value = re.sub(r"^(?:to\s+)?(?:eat|drink|eating|drinking)\s+", "", value.strip(), flags=re.I)
    value = _TRAILING_WHEN.sub("", value)
    value = re.sub(
        r"(?:\s+(?:very much|a lot|so much|too|anymore|any more|now|these days|nowadays|lately|instead|"
        r"proper|properly|again|seriously|either|as well|also))+$",
        "",
        value,
        flags=re.I,
    )
    return value.strip(" .,!;\"'").lower()


# Words a thing one likes does not start with ("nearer the Dales", "when it rains", "how you talk").
_NOT_A_THING_START = {"nearer", "near", "closer", "better", "more", "less", "when", "how", "because", "if", "about"}


def _is_taste_object(thing: str) -> bool:
    words = thing.strip(" ,.;!?").split()
    if not words or thing.strip(" ,.;!?") in _TASTE_OBJECT_SKIP:
        return False
    first = words[0].strip(",.;!?")
    return first not in _TASTE_OBJECT_SKIP and first not in _NOT_A_THING_START


def _third_person(value: str) -> str:
    return re.sub(r"\b(my|me|myself|mine|I)\b", lambda m: _PRONOUNS[m.group(1).lower()], value)


def _split_objects(value: str) -> list[str]:
    """ "hiking and coffee" / "tea, cake and jazz" -> one object each."""
    parts = [
        re.sub(r"^(?:both|especially|mostly|mainly)\s+", "", p.strip(), flags=re.I)
        for p in re.split(r",\s*(?:and|or)\s+|,\s*|\s+and\s+|\s+or\s+|、|和|还有", value)
        if p.strip()
    ]
    return parts if parts and all(len(p.split()) <= 4 for p in parts) else [value]


def _key_part(value: str) -> str:
    return re.sub(r"\s+", "_", value.strip().lower())[:60]


def _their_age(relation: str, who: str, said: str, now: datetime.datetime) -> list[SelfFact]:
    """The one age of several of a kind ("twin boys Jayden and Jordan are 7 (as of …)")."""
    age = when.number(said)
    if age is None or not 0 <= age <= 120:
        return []
    date = when.format_date(now.date(), zh=False, weekday=False)
    return [
        _fact("fact", f"family:{relation_key(relation)}:age", str(age), f"{USER_EN}'s {who} are {age} (as of {date}).")
    ]


# Twins by that word ("my twins, Amara and Kofi, turn ten on Sunday", "we've got twins called
# Amara and Kofi", "our twin girls Mia and Ella are six"): both named, and their one age
_TWINS_EN = re.compile(
    rf"\b(?:(?:my|our) twin(?:s| (?P<kind>boys|girls|sons|daughters))|"
    rf"(?:I|we)(?: have|'ve got| have got|'ve) (?:a pair of )?twin(?:s| (?P<kind2>boys|girls|sons|daughters))),? "
    rf"(?:(?:are |who are )?(?:called|named) )?(?P<names>(?-i:{_NAME_WORD}) and (?-i:{_NAME_WORD}))\b,?"
    rf"(?: (?:turn|will turn|are turning|will be|'ll be) (?P<turn>{when.EN_NUMBER})(?: years old)?,? "
    rf"(?P<day>{when.EN_DAY})(?!\w)|,? (?:are|they're|they are|both) (?P<age>{when.EN_NUMBER})(?: years old)?\b)?",
    re.I,
)
_TWIN_KINDS = {"boys": "son", "sons": "son", "girls": "daughter", "daughters": "daughter"}


def _twins(clause: str, now: datetime.datetime) -> list[SelfFact]:
    m = _TWINS_EN.search(clause)
    if m is None:
        return []
    kind = (m.group("kind") or m.group("kind2") or "").lower()
    relation = _TWIN_KINDS.get(kind, "child")
    twins = f"twin {kind}" if kind else "twins"
    names = re.split(r"\s+and\s+", m.group("names"))
    out = [_fact("fact", f"family:{relation}", twins, f"{USER_EN} has {twins}, called {and_list(names)}.")]
    who = f"{twins} {and_list(names)}"
    age = when.number(m.group("turn")) if m.group("turn") else None
    day = when.resolve_day(m.group("day"), now) if m.group("day") else None
    if age is not None and day is not None and 0 <= age <= 120:
        on = when.format_date(day, zh=False)
        out.append(_fact("fact", f"family:{relation}:age", str(age), f"{USER_EN}'s {who} turn {age} on {on}."))
    elif m.group("age"):
        out += _their_age(relation, who, m.group("age"), now)
    return out


def _en(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = []
    for i, pattern in enumerate(_EN_NAME):
        m = pattern.search(clause)
        if m:
            name = (m.group(1) or m.group(2) or m.group(3)).strip() if i == 0 else m.group(1).strip()
            first = name.split()[0]
            if first.lower() in _NOT_NAMES or re.fullmatch(_GREETING, first, re.I):
                continue
            if not first[0].isupper():
                if i != 1 or " " in name or not _LOWER_NAME_END.match(clause, m.end()):
                    continue
                name = first.capitalize()
            out.append(name_fact(name, "en"))
            break
    # each pattern's first match that does not overlap an earlier one ("my wife Beverley and I
    # have a budgie named Marley": both)
    spans: list[tuple[int, int]] = []
    for i, pattern in enumerate(_EN_FAMILY_NAMED):
        m = pattern.search(clause)
        if m and any(m.start() < end and start < m.end() for start, end in spans):
            m = None
        said_name, said_relation = (
            (m.group(1), m.group(2)) if m and i == 1 else (m.group(2), m.group(1)) if m else ("", "")
        )
        if m and said_name[0].isupper() and re.sub(r"'s$", "", said_name).lower() not in RELATIONS:
            # ("My sister called Mum": a call, not a sister named Mum)
            relation, name = said_relation.lower(), re.sub(r"'s$", "", said_name)
            relation = _BREEDS.get(relation, relation)
            # "I lost my wife Margaret three years ago", "my late husband Tom": not "is called"
            late = re.search(rf"\b(?:lost|late|passed away|died)\b[^.!?]*\b{re.escape(relation)}\b", clause, re.I) or (
                re.search(
                    rf"\b{re.escape(relation)}\b[^.!?]*\b(?:died|passed away|passed on|{_PASSED_ON_EN})\b",
                    clause,
                    re.I,
                )
            )
            content = (
                f"{USER_EN}'s late {relation} was called {name}."
                if late
                else f"{USER_EN}'s {relation} is called {name}."
            )
            out.append(SelfFact("fact", f"family:{relation_key(relation)}", name, content, "en"))
            spans.append(m.span())
    if (household := _LIVES_WITH_FAMILY_EN.search(clause)) and not _LIVE_WITH_EN.search(clause):
        who = re.sub(r"\bour\b", "their", _third_person(household.group(1)), flags=re.I)
        out.append(SelfFact("fact", "household", who, f"{USER_EN} lives with {who}.", "en"))
    m = _LIVE_WITH_EN.search(clause)
    if m:
        names = [n for n in re.split(r",\s*|\s+and\s+", m.group(3)) if n]
        said = f"{USER_EN} lives with {m.group(1) + ' ' if m.group(1) else ''}{m.group(2)}s, {and_list(names)}."
        if len(names) == 1:
            said = f"{USER_EN}'s {m.group(2)} is called {names[0]}."
        out.append(SelfFact("fact", f"family:{relation_key(m.group(2))}", and_list(names), said, "en"))
        spans.append(m.span())
    # "the wife's called Isla and we've three kids": the count too, where no name was read
    m = _EN_FAMILY_HAS.search(clause)
    # (from the count on: "me and my wife Keisha have twin boys" names the wife before it)
    if m and not any(m.start(1) < end and start < m.end() for start, end in spans):
        count, relation = m.group(1).lower(), m.group(2).lower()
        noun = relation if count in ("a", "an", "one") else relation + ("ren" if relation.endswith("child") else "s")
        names = [n for n in re.split(r",\s*|\s+and\s+", m.group(3) or "") if n and n[0].isupper()]
        called = f", called {and_list(names)}" if len(names) > 1 else ""
        out.append(
            SelfFact(
                "fact",
                f"family:{relation_key(relation)}",
                f"{count} {noun}",
                f"{USER_EN} has {count} {noun}{called}.",
                "en",
            )
        )
        if m.group(4) and len(names) > 1:  # "…, they're seven"
            out += _their_age(relation, f"{noun} {and_list(names)}", m.group(4), now)
    m = _EN_FAVORITE.search(clause)
    if m:
        what, value = m.group(1).lower(), _clean_object(m.group(2))
        if value:
            out.append(
                SelfFact(
                    "preference", f"favorite:{_key_part(what)}", value, f"{USER_EN}'s favorite {what} is {value}.", "en"
                )
            )
    # tastes in the words before a favourite ("I love brass band music, and my favourite meal is…")
    taste_words = re.sub(r"[,\s]*(?:\b(?:and|but|so|while)\b)?[,\s]*$", "", clause[: m.start()]) if m else clause
    if taste_words.strip():
        taken: list[tuple[int, int]] = []
        for pattern, likes in _EN_TASTE:
            for m in pattern.finditer(taste_words):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue
                taken.append(m.span())
                value = _clean_object(m.group(1))
                if not value or len(value.split()) > 8:
                    continue
                verb = "likes" if likes else "does not like"
                # each object on its own: "I like it, nearer the Dales" names no taste at all
                for thing in _split_objects(_third_person(value)):
                    if _is_taste_object(thing):
                        out.append(
                            SelfFact(
                                "preference", f"taste:{_key_part(thing)}", thing, f"{USER_EN} {verb} {thing}.", "en"
                            )
                        )
    m = _EN_HABIT_NOW.search(clause)
    if m:
        thing = _third_person(_clean_object(m.group(3)))
        key = f"taste:{_key_part(thing)}"
        if thing and thing.split()[0] not in _TASTE_OBJECT_SKIP and len(thing.split()) <= 4:
            said = (m.group(1) or "").lower() or _GERUNDS[m.group(2).lower()]
            verb = _HABIT_VERBS[said]
            out = [f for f in out if f.key != key]
            out.append(SelfFact("preference", key, thing, f"{USER_EN} {verb} {thing} {m.group(4).lower()}.", "en"))
    m = _EN_LEARNING.search(clause)
    if m:
        skill, thing = (m.group(1) or "").lower(), _third_person(_clean_object(m.group(2) or ""))
        learnt = f"to {skill} {thing}".strip() if skill else thing
        named = thing or skill  # "to swim": the skill itself
        if named and named.split()[0] not in _TASTE_OBJECT_SKIP and len(learnt.split()) <= 6:
            key = f"taste:{_key_part(named)}"
            out = [f for f in out if f.key != key]
            out.append(SelfFact("preference", key, named, f"{USER_EN} is learning {learnt}.", "en"))
    for pattern in _EN_STOPPED:
        m = pattern.search(clause)
        if m:
            thing = _third_person(_clean_object(m.group(2)))
            if thing and thing.split()[0] not in _TASTE_OBJECT_SKIP and len(thing.split()) <= 4:
                verb = (m.group(1) or "").lower()
                said = f"no longer {_HABIT_VERBS[_GERUNDS.get(verb, verb)]}" if verb else "gave up"
                key = f"taste:{_key_part(thing)}"
                out = [f for f in out if f.key != key]  # "I don't like X any more" is said once
                out.append(SelfFact("preference", key, thing, f"{USER_EN} {said} {thing}.", "en"))
            break
    for i, pattern in enumerate(_EN_PLAN):
        m = pattern.search(clause)
        if not m:
            continue
        if i in (0, 1):
            what, when = f"{m.group(1).lower()} {m.group(2).strip()}", m.group(3).lower()
            what = re.sub(r"^(?:gonna|going to|off to)\s+", "going to ", what)
        elif i == 2:
            when, what = (
                m.group(1).lower(),
                re.sub(_GOING_TO_A_VERB, "", m.group(2).strip()),
            )
        elif i == 4:
            when, what = m.group(1).lower(), "have " + m.group(2).strip()
            if re.match(r"have (?:nothing|no |not |a (?:cold|cough|headache)|the flu|time|plenty)", what, re.I):
                continue  # "On Monday I've got nothing on"
        elif i == 5:
            what, when = "have " + m.group(1).strip(), m.group(2).lower()
        elif i == 6:
            when, what = m.group(1).lower(), f"going {m.group(3).strip()} with {m.group(2)}"
        else:
            what, when = m.group(1).strip(), m.group(2).lower()
        # what follows the day belongs to the plan ("a hospital appointment next Thursday for my eyes")
        after = re.match(
            r"\s*,?\s*((?:for|with|about) (?!the (?:weekend|week|day|night|morning|afternoon|evening)\b)"
            r"(?:my|the|our|a|an) [\w' ]{1,30}?)\s*[.!]?$",
            clause[m.end() :],
        )
        if after and i in (0, 1, 3, 5, 7) and not re.search(r"\b(?:for|with|about) ", what):
            what = f"{what.strip(' .,!')} {after.group(1)}"
        what = _third_person(what.strip(" .,!"))
        if _A_NUMBER.match(re.sub(r"^(?:be|turn)\s+", "", what)):
            continue  # "It was my birthday on Monday, I'm seventy-one now", "I'll be seventy on Sunday": an age
        # "I will call you tomorrow" is about Fay too: said back it would read "You will call you"
        if what and len(what.split()) <= 14 and not re.search(r"\b(?:you|your|yours)\b", what, re.I):
            # "visiting my mum" is going on ("is visiting"), "see my doctor" will be ("will see")
            verb = ("is " if _GERUND.match(what) else "will ") + what
            said = _plan_day(when, now, zh=False)  # a day that is said again weeks later: its date
            # (the value is what they will do: a stored line says it whichever way it names the day)
            out.append(SelfFact("event", f"plan:{_key_part(when)}", what, f"{USER_EN} {verb} {said}.", "en"))
        break
    return out


_WEEKEND_EN = re.compile(r"(?:this |at the |on the |over the |the )?(next )?weekend", re.I)
_WEEKEND_ZH = re.compile(r"(?:这个?|本)?(下个?)?周末")
_WEEK_EN = re.compile(r"(?:this |(next ))week", re.I)
_WEEK_ZH = re.compile(r"(?:这个?|本)?(下个?)?(?:周|星期|礼拜)")
# a plan's words for today, said with the date (they name no other day)
_TODAY_WORDS = ("tonight", "later today", "this evening", "今晚", "今天下午", "今天晚上")


def _plan_day(said: str, now: datetime.datetime, zh: bool) -> str:
    """ "next friday" -> "on Friday, 12 March 2027", "明天" -> "2027年3月6日（星期六）" (the day it
    names when it was said), so a plan read back a week later names the right day; a weekend or
    a week by the day it starts ("on the weekend of 12 December 2026", "2026年12月14日开始的那一
    周"), and today's words with today's date ("tonight (Monday, 7 December 2026)"), so each
    passes as its days do (`fact_answers.plan_still_ahead`)."""
    part = ""
    # "星期五下午", "tomorrow morning": the day, then the part of it
    m = re.fullmatch(r"(.+?)(早上|上午|中午|下午|晚上)" if zh else r"(.+?)( (?:morning|afternoon|evening|night))", said)
    said, part = (m.group(1), m.group(2)) if m else (said, "")
    today = now.date()
    if said + part in _TODAY_WORDS:  # "tonight (Sunday, 6 December 2026)": a week on it is no more
        return (
            f"{said + part}（{when.format_date(today, zh=True, weekday=False)}）"
            if zh
            else (f"{said + part} ({when.format_date(today, zh=False)})")
        )
    weekend = _WEEKEND_ZH.fullmatch(said) if zh else _WEEKEND_EN.fullmatch(said)
    if weekend:  # "this weekend", "周末" ("next weekend", 下周末): the Saturday it starts on, so it passes too
        date = when.format_date(when.weekend_start(today, following=bool(weekend.group(1))), zh=zh, weekday=False)
        return f"{date}开始的那个周末{part}" if zh else f"on the weekend of {date}"
    week = _WEEK_ZH.fullmatch(said) if zh else _WEEK_EN.fullmatch(said)
    if week:  # "next week", 下周: the Monday it starts on
        monday = today - datetime.timedelta(days=today.weekday()) + datetime.timedelta(days=7 if week.group(1) else 0)
        date = when.format_date(monday, zh=zh, weekday=False)
        return f"{date}开始的那一周{part}" if zh else f"in the week of {date}"
    if said in ("next month", "下个月", "下月"):  # the month it names when said: "in January 2027", "2027年1月"
        return _coming_day(said, now, zh)
    christmas = None if zh else re.fullmatch(r"(for|at|over|on) christmas( day| eve)?", said, re.I)
    if christmas:  # the coming one, by its date, so it passes as other plans do
        eve = (christmas.group(2) or "").strip().lower() == "eve"
        name = "Christmas Eve" if eve else "Christmas"
        month_day = when.fixed_date_day(name)
        assert month_day is not None  # (both are in when.FIXED_DATE_DAYS_EN)
        christmas_day = when.next_anniversary(*month_day, today)
        return f"{christmas.group(1).lower()} {name} ({when.format_date(christmas_day, zh=False)})"
    month = None if zh else re.fullmatch(rf"in ({_MONTHS_EN})", said, re.I)
    if month:  # "in March": the next March (this one while it lasts), with its year
        number = [m.lower() for m in when.MONTHS_EN].index(month.group(1).lower()) + 1
        return f"in {when.MONTHS_EN[number - 1]} {today.year + (number < today.month)}"
    day = None if said in _TODAY_WORDS else when.resolve_day(said, now)
    if day is None:
        return said + part
    if zh:
        return when.format_date(day, zh=True) + part
    return f"on the{part} of {when.format_date(day, zh=False)}" if part else f"on {when.format_date(day, zh=False)}"


_ZH_GOES_ON = re.compile(
    r"(?<=[，,])\s*(?=(?:现在|平时|每天|也|还|都|一直|已经|去年|今年|上个?月|上周|最近|前年|以前|之前|原来|过去)?"
    r"(?:早上|晚上|中午)?"
    r"(?:(?:跟|和)[^，,]{1,6}一起)?"
    r"(?:住在|吃|喜欢|爱|有|对|不能|不吃|是|在|养了|学的是|今年|退休|已经退休|早就退休|过了|打|服用|搬到|学|老家|"
    # an age said alone: "我是陈华，六十八岁，退休工人"
    r"(?:\d{1,3}|[零一二两三四五六七八九十]{1,3})(?:周)?岁|" + health.names_pattern(health.CONDITIONS, zh=True) + r"))"
    # a condition said alone after the user's words: "我不能吃太咸的，血压高"
)


def _zh_subject_carried(clause: str) -> str:
    """ "我是退休教师，住在成都" -> "我是退休教师，我住在成都": a clause that goes on without a subject
    after one about the user (not "我女儿叫朵朵，…", whose next clause may be about her)."""
    # "我有一个女儿，叫刘芳，在上海当护士": what goes on without a subject is the daughter's
    introduced = re.match(r"我(?:还|只)?有(?:一|两|三|几)?(?:个|位)?(" + ZH_RELATIONS + r")(?=[，,]|叫)", clause)
    if introduced:
        return _ZH_GOES_ON.sub("我" + introduced.group(1), clause)
    relative = re.match(r"我(?:的|家)?(" + ZH_RELATIONS + r")", clause)
    if relative and re.match(r"我(?:的|家)?(?:" + ZH_RELATIONS + r")叫[^，,]{1,4}[，,]", clause):
        # "我女儿叫小丽，住在北京": what goes on without a subject after a relative's name is theirs
        # (it was taken for the user's home); an age there is read with the name already
        # ("我女儿叫朵朵，今年六岁": 用户的女儿朵朵6岁)
        age = re.compile(r"\s*(?:今年|现在|已经)?(?:都)?(?:" + when.ZH_NUMBER + r"|\d{1,3})(?:周)?岁")
        named = re.match(r"我(?:的|家)?(?:" + ZH_RELATIONS + r")叫[^，,]{1,4}[，,]", clause)
        assert named is not None
        return _ZH_GOES_ON.sub(
            # (an age right after the name is read with it; one after more of them is carried)
            lambda m: "" if age.match(clause, m.end()) and m.start() == named.end() else "我" + relative.group(1),
            clause,
        )
    if relative and "叫" not in clause:  # "我儿子周磊在深圳上班，今年四十岁": the age is the son's
        age_next = r"(?<=[，,])\s*(?=(?:今年|现在|已经)(?:都)?(?:" + when.ZH_NUMBER + r")(?:周)?岁)"
        return re.sub(age_next, "我" + relative.group(1), clause)
    # (after a filler or a remark: "哦对了，我上个月搬家了，现在住在天河")
    if not re.match(
        r"(?:(?:哦|噢|嗯|唉|那个|对了|哦对了|还有|另外|跟你说|我跟你说|告诉你|你知道吗|早上好|你好|您好|嗨|哈喽|"
        r"晚上好|下午好|早|早啊)[，,…。!！]*\s*)*我(?!(?:的|家)?(?:" + ZH_RELATIONS + r"))",
        clause,
    ):
        return clause
    return _ZH_GOES_ON.sub("我", clause)


# Dog and cat breeds said for the pet ("我们家还养了一只金毛，叫旺财": a dog)
_ZH_BREEDS = {
    **dict.fromkeys(
        "金毛 泰迪 柯基 哈士奇 拉布拉多 博美 比熊 柴犬 边牧 萨摩耶 雪纳瑞 德牧 吉娃娃 阿拉斯加".split(), "狗"
    ),
    **dict.fromkeys("英短 美短 布偶 橘猫 狸花猫 暹罗猫 加菲猫 蓝猫".split(), "猫"),
}
_ZH_BREED = re.compile("|".join(sorted(_ZH_BREEDS, key=len, reverse=True)))
# A relative named right after the relation, as nicknames are ("我孙子小宝下个月上小学", "我外孙女乐乐"):
# 小/阿 and one character, or one character twice; not the words that look like them (小时候, 天天)
_ZH_NICKNAMED = re.compile(
    r"我(?:的|家)?(" + ZH_RELATIONS + r")"
    r"((?:小|阿)(?!时|学|区|孩|心|的|吃|朋友|狗|猫|姑娘|伙|店|镇|说|事|点|声|组|号|些|姨)[" + CJK_IDEOGRAPHS + r"]|"
    r"(?!天天|常常|刚刚|渐渐|慢慢|好好|偷偷|悄悄|样样|人人|往往|明明|谢谢|哈哈|呵呵|每每|久久|早早)"
    r"([" + CJK_IDEOGRAPHS + r"])\3)(?!叫)"
)


def _zh(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = []
    breed = _ZH_BREED.search(clause)
    if breed and re.search(r"养|有|是", clause):  # "我家有一只金毛，叫旺财": its breed, `family:dog:breed`
        kind = _ZH_BREEDS[breed.group(0)]
        said = f"{USER_ZH}的{kind}是{breed.group(0)}。"
        out.append(SelfFact("fact", f"family:{relation_key(kind)}:breed", breed.group(0), said, "zh"))
    clause = _ZH_BREED.sub(lambda b: _ZH_BREEDS[b.group(0)], clause)
    for pattern in reversed(_ZH_NAME):  # (what they ask to be called before their name)
        # "不用叫我您，叫我小王就行": the first "叫我" names no one
        m = next((m for m in pattern.finditer(clause) if m.group(1) not in _ZH_NOT_NAMES), None)
        if m:
            # ("我姓陈，陈志强": the full name, the last group)
            name = m.group("name") if "name" in pattern.groupindex else m.group(m.lastindex or 1)
            out.append(name_fact(name, "zh"))
            break
    m = _ZH_FAMILY_NAMED.search(clause) or _ZH_FAMILY_NAMED_AFTER.search(clause)
    if m:
        relation, name = m.group(1), m.group(2)
        out.append(SelfFact("fact", f"family:{relation_key(relation)}", name, f"{USER_ZH}的{relation}叫{name}。", "zh"))
    elif m := _ZH_NICKNAMED.search(clause):
        relation, name = m.group(1), m.group(2)
        out.append(SelfFact("fact", f"family:{relation_key(relation)}", name, f"{USER_ZH}的{relation}叫{name}。", "zh"))
    else:
        m = _ZH_FAMILY_HAS.search(clause)
        if m:
            # and each one's name: "我有两个孙子，大的叫乐乐，小的叫天天"
            names = _ZH_EACH_NAMED.findall(clause[m.end() :])
            each = "，".join(f"{which}叫{name}" for which, name in names) if len(names) > 1 else ""
            out.append(
                SelfFact(
                    "fact",
                    f"family:{relation_key(m.group(2))}",
                    f"{m.group(1)}{m.group(2)}",
                    f"{USER_ZH}有{m.group(1)}{m.group(2)}{'，' + each if each else ''}。",
                    "zh",
                )
            )
    m = _ZH_FAVORITE.search(clause)
    if m:
        what, value = m.group(1), m.group(2)
        out.append(SelfFact("preference", f"favorite:{what}", value, f"{USER_ZH}最喜欢的{what}是{value}。", "zh"))
    taken: list[tuple[int, int]] = []
    for pattern, likes in _ZH_TASTE:
        for m in pattern.finditer(clause):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            taken.append(m.span())
            value = _ZH_PARTICLES.sub("", m.group(1).strip())
            # "我喜欢你的声音", "我喜欢和你聊天": about the companion, not a taste
            if value and value not in ("你", "它", "这个", "那个") and not value.startswith(("你", "和你", "跟你")):
                verb = "喜欢" if likes else "不喜欢"
                for thing in _split_objects(value):
                    out.append(SelfFact("preference", f"taste:{thing}", thing, f"{USER_ZH}{verb}{thing}。", "zh"))
    m = _ZH_PLAN.search(clause)
    if m:
        when = m.group(1) or m.group(3) or m.group(5) or m.group(7)
        what = m.group(2) or m.group(4) or m.group(6) or f"和{m.group(8)}一起{m.group(9)}"
        what = re.sub(r"我(?!们)", USER_ZH, what)  # ("回广州看我妈": the user's mum, said back as 你妈)
        said = _plan_day(when, now, zh=True)
        out.append(SelfFact("event", f"plan:{when}", what, f"{USER_ZH}{said}要{what}。", "zh"))
    elif (m := _ZH_RELATIVE_PLAN.search(clause)) and (m["relation"] or m["relation_after"]) not in _ZH_PETS:
        relation, when_said = m["relation"] or m["relation_after"], m["when"] or m["when_first"]
        named, what = m["name"] or m["name_after"] or "", re.sub(r"我(?!们)", USER_ZH, m["what"])
        said = _plan_day(when_said, now, zh=True)
        key = f"plan:{relation_key(relation)}_{when_said}"
        out.append(SelfFact("event", key, what, f"{USER_ZH}的{relation}{named}{said}{what}。", "zh"))
    return out


# A relative's plan: "下个月儿子放假回来", "我女儿周六要来看我", "这周日我老伴去北京出差"
# (key `plan:<relation>_<day>`, as "my son is visiting on Friday"); a name said with the relation
# is a nickname or a full name ("我外孙女朵朵下周来")
def _zh_kin_name(doubled: str) -> str:
    """A name said after a relation word (`doubled`: its group's name, one per use)."""
    ideograph = f"[{CJK_IDEOGRAPHS}]"
    return rf"(?:[小阿]{ideograph}|(?P<{doubled}>{ideograph})(?P={doubled})|[{ZH_SURNAMES}]{ideograph}{{1,2}})"


_ZH_RELATIVE_PLAN = re.compile(
    rf"(?:^|[，,])(?:(?:我(?:的|家)?)?(?P<relation>{ZH_RELATIONS})(?P<name>{_zh_kin_name('d1')})?(?P<when>{_ZH_WHEN})|"
    rf"(?P<when_first>{_ZH_WHEN})[，,]?(?:我(?:的|家)?)?(?P<relation_after>{ZH_RELATIONS})"
    rf"(?P<name_after>{_zh_kin_name('d2')})?)"
    rf"(?:也|就|还)?(?P<what>(?:要|会|打算|准备)?[^{_ZH_STOP}]{{0,10}}?"
    r"(?:回来|回家|过来|来看|来|去|放假|结婚|出差|考试|毕业|出院|住院|开学|搬家|生孩子|陪|带|接)"
    rf"[^{_ZH_STOP}]{{0,10}})(?=[{_ZH_STOP}]|$)"
)


# -- occupation, home, ages and birthdays, health (EN and ZH) ------------------------------------
# Keys: `occupation` and `workplace` and `home` (one value each, a new one supersedes),
# `family:<relation>:age` and `family:<relation>:birthday` (the relation in English, whichever
# language it was said in), `health:allergy:<allergen>`, `health:avoid:<food>`,
# `health:condition:<condition>`, `health:medication:<medicine>` (one key each: several hold
# at once; allergens, conditions and medicines in English words from `health`).

# A family word in English or Chinese -> the key's relation, so that "我女儿" and "my daughter"
# are one person. Words with no one-to-one English counterpart (哥哥, 奶奶) keep their own key.
_RELATION_KEYS = {
    # "my youngest, David, has a peanut allergy"
    "youngest": "child",
    "eldest": "child",
    "oldest": "child",
    "little one": "child",
    "mom": "mother",
    "mum": "mother",
    "mother": "mother",
    "妈妈": "mother",
    "母亲": "mother",
    "dad": "father",
    "father": "father",
    "爸爸": "father",
    "父亲": "father",
    "wife": "wife",
    "老婆": "wife",
    "妻子": "wife",
    "太太": "wife",
    "媳妇": "wife",
    "媳妇儿": "wife",
    "husband": "husband",
    "老公": "husband",
    "丈夫": "husband",
    "先生": "husband",
    "儿媳妇": "daughter-in-law",
    "儿媳": "daughter-in-law",
    "女婿": "son-in-law",
    # (the same grandparents as 外婆 and 外公, in the north's words)
    "姥姥": "外婆",
    "姥爷": "外公",
    "son": "son",
    "儿子": "son",
    "daughter": "daughter",
    "女儿": "daughter",
    "闺女": "daughter",
    "姑娘": "daughter",
    "friend": "friend",
    "朋友": "friend",
    "girlfriend": "girlfriend",
    "女朋友": "girlfriend",
    "boyfriend": "boyfriend",
    "男朋友": "boyfriend",
    "dog": "dog",
    "狗": "dog",
    "小狗": "dog",
    "cat": "cat",
    "猫": "cat",
    "小猫": "cat",
    "rabbit": "rabbit",
    "兔子": "rabbit",
    "hamster": "hamster",
    "仓鼠": "hamster",
    "parrot": "parrot",
    "鹦鹉": "parrot",
    "乌龟": "tortoise",
    "金鱼": "goldfish",
    "八哥": "bird",
    "小鸟": "bird",
    "鸟": "bird",
    "kid": "child",
    "child": "child",
    "孩子": "child",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "better half": "partner",
    "little girl": "daughter",
    "girl": "daughter",
    "boy": "son",
    "little boy": "son",
    "roommate": "roommate",
    "flatmate": "roommate",
    "housemate": "roommate",
    "室友": "roommate",
    "other half": "partner",
    "老伴": "partner",
    "老伴儿": "partner",
    "爱人": "partner",
    "孙子": "grandson",
    "外孙": "grandson",
    "孙女": "granddaughter",
    "外孙女": "granddaughter",
    "auntie": "aunt",
    "fiancé": "fiance",
    "fiancée": "fiance",
    "fiancee": "fiance",
    "grandkid": "grandchild",
    "neighbor": "neighbour",
    "邻居": "neighbour",
    "妈": "mother",
    "爸": "father",
    "caregiver": "carer",
    "保姆": "carer",
}
# who "she"/"he" can be, for a question about "her birthday"
FEMALE_RELATIONS = {
    *("mother", "wife", "daughter", "sister", "grandmother", "girlfriend", "granddaughter"),
    *("aunt", "niece", "stepdaughter", "daughter-in-law"),
    *("姐姐", "妹妹", "奶奶", "外婆", "孙女", "外孙女", "外甥女", "侄女", "姑姑"),
}
MALE_RELATIONS = {
    *("father", "husband", "son", "brother", "grandfather", "boyfriend", "grandson"),
    *("uncle", "nephew", "stepson", "son-in-law"),
    *("哥哥", "弟弟", "爷爷", "外公", "孙子", "外孙", "外甥", "侄子", "叔叔", "舅舅"),
}


_EN_MY_RELATION = re.compile(rf"\bmy ({_REL})\b", re.I)
_ZH_MY_RELATION = re.compile(r"我(?:的|家)?(" + ZH_RELATIONS + r")")
# a stored family fact that names them: the relation (English or Chinese) and the name
_RELATIVE_SAID = re.compile(
    rf"^(?:{USER_EN}'s (?:late )?([a-z -]+?) (?:is|was) called |{USER_ZH}的(\w+?)叫)(.+?)[.。]$"
)


def relations_in(text: str) -> set[str]:
    """The relation keys a text speaks of as the user's own ("What does my sister do?" →
    {"sister"}, "我姐姐养的猫" → {"姐姐"}), as the family facts are keyed."""
    found = [m.group(1) for m in _EN_MY_RELATION.finditer(text)] + [m.group(1) for m in _ZH_MY_RELATION.finditer(text)]
    return {relation_key(word) for word in found}


def name_of_relative(content: str) -> str:
    """The name in a stored family fact ("User's sister is called Ella." / "用户的姐姐叫小红。"), else ""."""
    m = _RELATIVE_SAID.match(content.strip())
    return m.group(3).strip() if m else ""


_NAMED_AGE = re.compile(r"User's [a-z ]+? ((?-i:[A-Z])[a-z]+) (?:is|turns) ")


def name_in_age(content: str) -> str:
    """The one name in a relative's stored age ("User's grandchild Lily is 9 (as of …)."), else ""."""
    m = _NAMED_AGE.match(content)
    return m.group(1) if m else ""


def relation_key(word: str) -> str:
    """The key part of a family word: "mum" → "mother", "女儿" → "daughter", "哥哥" → "哥哥"."""
    w = word.strip().lower()
    return _RELATION_KEYS.get(w, _key_part(w))


# Keys whose facts keep the user safe: allergies, foods they cannot eat, health conditions,
# medication. They are never trimmed from a prompt, and a reply never contradicts them.
SAFETY_KEY_PREFIXES = ("health:allergy:", "health:avoid:", "health:condition:", "health:medication:")


def household_member(key: str) -> str:
    """The household member a health fact is about ("health:allergy:peanut:son" -> "son"), ""
    for the user's own ("health:allergy:peanut") or a key that is no health fact."""
    parts = key.split(":")
    return parts[3] if len(parts) == 4 and parts[0] == "health" else ""


def is_safety_key(key: str) -> bool:
    """True for a fact key that is safety-relevant (an allergy, a food the user cannot eat,
    a health condition, a medicine): other code puts these first and never drops them."""
    return key.startswith(SAFETY_KEY_PREFIXES)


def safety_facts(facts: dict[str, str]) -> dict[str, str]:
    """The safety-relevant ones of `facts` (key → content), in their order."""
    return {key: content for key, content in facts.items() if is_safety_key(key)}


_OCCUPATIONS_EN = (
    "teacher|nurse|doctor|physician|surgeon|dentist|engineer|developer|programmer|coder|designer|architect|"
    "lawyer|solicitor|barrister|attorney|judge|accountant|chef|baker|butcher|driver|pilot|farmer|student|"
    "scientist|researcher|professor|lecturer|writer|author|journalist|reporter|editor|artist|painter|musician|"
    "singer|actor|actress|photographer|police officer|policeman|policewoman|officer|firefighter|soldier|"
    "electrician|plumber|carpenter|mechanic|builder|cleaner|cashier|waiter|waitress|salesman|saleswoman|"
    "salesperson|manager|consultant|analyst|pharmacist|vet|veterinarian|therapist|psychologist|"
    "psychiatrist|social worker|librarian|secretary|receptionist|translator|interpreter|hairdresser|barber|"
    "midwife|paramedic|caregiver|carer|nanny|shop assistant|shopkeeper|retiree|pensioner|banker|economist|"
    "tutor|coach|postman|courier|civil servant|entrepreneur|freelancer|administrator|clerk|technician|"
    "optician|physiotherapist|biologist|physicist|mathematician|housewife|homemaker|stay-at-home (?:mom|mum|dad)|"
    "gardener|tailor|security guard|guard|miner|fisherman|sailor|dancer|librarian|bartender|barista|welder|"
    "forklift driver|lorry driver|truck driver|bus driver|taxi driver|postwoman|milkman|docker|labourer|"
    "cook|headteacher|headmaster|head teacher|typist|bookkeeper|machinist|joiner|bricklayer|"
    "student nurse|intern|apprentice|director|executive|ceo|founder|owner|priest|pastor|monk|"
    "locksmith|caretaker|janitor|porter|florist|estate agent|care worker|support worker|teaching assistant|"
    "dental nurse|decorator|roofer|glazier|tiler|plasterer|chauffeur|delivery driver|warehouse worker|packer|"
    "radiographer|sonographer|hygienist|dietitian|nutritionist|counsellor|counselor|childminder|nursery nurse|"
    "vicar|rabbi|imam|prison officer|surveyor|curator|archivist|dj|producer|animator|illustrator|tester|"
    "recruiter|marketer|copywriter|zookeeper|ranger|groundskeeper|greenkeeper|dog walker|groomer|beautician|"
    "stylist|tattoo artist|personal trainer|fitness instructor|instructor|lifeguard|auditor|actuary|"
    "software developer|web developer|data scientist|project manager|product manager|mechanic|fitter|"
    "seamstress|potter|jeweller|jeweler|upholsterer|cobbler|shoemaker|blacksmith|gamekeeper|shepherd|"
    # (the older trades people tell of: "I used to be a dinner lady at the primary school")
    "dinner lady|lollipop lady|lollipop man|tea lady|cleaning lady|school cook|bus conductor|conductor|"
    "signalman|train driver|engine driver|barmaid|landlady|publican|usherette|telephonist|switchboard operator|"
    "factory worker|mill worker|steelworker|shipbuilder|machine operator"
)
# "I'm a good cook", "I'm a bit of a singer": a judgement, not a job
_NOT_A_JOB = (
    r"good|bad|terrible|great|big|huge|decent|keen|amateur|aspiring|wannabe|bit|lousy|awful|natural|"
    r"born|hobby|hopeless|lousy|fan|former|retired from"
)
# "I'm a teacher now": a word of time after the job is not part of it
_NOW_EN = r"(?:\s+(?:now|these days|nowadays|at the moment|currently))?"
_OCC_EN = re.compile(
    rf"\bI(?:'m| am) (?:now |currently |actually )?((?:an?) (?!(?:[\w-]+ )*?(?:{_NOT_A_JOB})\b)"
    rf"(?:[\w-]+ ){{0,3}}?(?:{_OCCUPATIONS_EN})s?"
    # "a nurse on nights at the Royal Infirmary"
    rf"(?: on (?:nights|days|lates|earlies|shifts|call|the wards|(?:the |a )?(?:night|day|early|late) shifts?))?"
    rf"(?: (?:at|in|for|with|of) .+?)?"
    # "I'm the caretaker at a primary school": the one post at a place
    rf"|the (?:[\w-]+ ){{0,2}}?(?:{_OCCUPATIONS_EN}) (?:at|in|for|of) .+?){_NOW_EN}{_STOP_CLAUSE}",
    re.I,
)
_OCC_AS_EN = re.compile(
    rf"\bI(?: currently| now)? (work|worked)(?: [a-z]+){{0,5}}? as (an? .+?|the .+?){_NOW_EN}{_STOP_CLAUSE}|"
    rf"\bI(?:'m| am) (?:currently |now )?(?:employed|working) as (an? .+?){_NOW_EN}{_STOP_CLAUSE}|"
    rf"\bI(?:'m| am) (an? .+?) by (?:profession|trade){_STOP_CLAUSE}|"
    # "I started a new job as a teacher", "I've got a job as a nurse now"
    rf"\bI(?:'ve| have)? (?:just )?(?:started|got|found|took|taken|begun|began) (?:a |my )?(?:new )?job as "
    rf"(an? .+?){_NOW_EN}{_STOP_CLAUSE}",
    re.I,
)
_FOR_A_LIVING_EN = re.compile(
    r"\bI (do|make|write|sell|fix|build|drive|design|clean|teach|cook) (.+?) for a living\b", re.I
)
# "I drive buses in Glasgow", "I run a small bakery", "I fly planes": a job said by its verb (only
# with the things a job is done with: not "I drive to work", "I run marathons")
_DRIVE_FOR_EN = re.compile(
    rf"\bI (drive|deliver|clean|cook|write) for (an? (?:[\w-]+ ){{0,3}}?(?:firm|company|business|"
    r"restaurant|hotel|school|council|band|newspaper|paper|charity|club|team|agency|bakery|shop)|"
    r"the [\w-]+(?: [\w-]+){0,3}?)"
    rf"{_STOP_CLAUSE}",
    re.I,
)
_FARM_EN = re.compile(
    r"\bI (farm|breed|raise|keep) "
    r"(sheep|cattle|cows|pigs|goats|chickens|hens|bees|horses|alpacas|dairy cows|beef cattle)"
    r"(?: (?:up |down |out )?(?:near|in|on|outside) ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?))?",
    re.I,
)
# what a person drives, flies, runs or owns for a living ("I run a café", "my dad runs a garage")
_JOB_THINGS = (
    r"(?:bus|buses|taxi|taxis|cab|cabs|truck|trucks|lorry|lorries|train|trains|tram|trams|ambulance|ambulances|"
    r"forklift|forklifts|plane|planes|helicopter|helicopters|delivery van|van|vans|shop|restaurant|bakery|cafe|café|"
    r"bar|pub|farm|hotel|salon|business|company|store|clinic|garage|kindergarten|nursery)"
)
_JOB_VERB_EN = re.compile(
    r"\bI(?: currently| now)? (drive|fly|run|own|manage) ((?:an? |the )?(?:small |little |local |big )?(?:[a-z]+ )?"
    + _JOB_THINGS
    + rf"(?: (?:in|at|for|near) .+?)?){_STOP_CLAUSE}",
    re.I,
)
_JOB_IS_EN = re.compile(rf"\bmy (?:job|profession|occupation) is (?:being )?(an? .+?|\w+ing\b.*?){_STOP_CLAUSE}", re.I)
_TEACH_EN = re.compile(
    # not "I teach you", "I teach my kids to swim": a lesson, not a job; "I'm teaching driving
    # part time now"
    r"\b(?:I(?: currently| now)? teach|I(?:'m| am) (?:now )?teaching(?= [a-z]+ (?:part[- ]time|full[- ]time|now)\b)) "
    r"(?!you\b|them\b|him\b|her\b|it\b|myself\b|(?:my|our) (?:kids|children|son|daughter|dog)\b)"
    rf"(.+?){_STOP_CLAUSE}",
    re.I,
)
# A job they had ("I used to be a postman", "I was a nurse for thirty years", "I retired as a
# headteacher", "before I retired I was an engineer"): key `occupation:former`, next to the
# current `occupation` (often "retired"), never taking its place.
_FORMERLY = (
    r"(?: (?:for (?:\w+ ){0,3}?(?:years|decades)|(?:\w+ )?years ago|a long time ago|back then|"
    r"in the (?:\d0s|\w+ies)|when I was young(?:er)?|until I retired))*"
)
# A trade told in the past tense, and how it is said of a former job ("User used to teach piano.")
_PAST_TRADES = {
    "taught": "teach",
    "drove": "drive",
    "ran": "run",
    "managed": "manage",
    "nursed": "nurse",
    "farmed": "farm",
    "fixed": "fix",
    "repaired": "repair",
    "built": "build",
    "delivered": "deliver",
    "sold": "sell",
    "cooked": "cook",
    "cleaned": "clean",
    "coached": "coach",
    "trained": "train",
    "sailed": "sail",
    "flew": "fly",
}
_FORMER_JOB_EN = re.compile(
    rf"\bI used to (?:be|work as) (an? (?:[\w-]+ ){{0,3}}?[\w-]*(?:{_OCCUPATIONS_EN}))s?\b|"
    rf"\bI was (an? (?:[\w-]+ ){{0,3}}?[\w-]*(?:{_OCCUPATIONS_EN}))s?(?: for (?:[\w-]+ ){{0,3}}?(?:years|decades))?"
    r"(?=\s*(?:[.!;,]|$|\b(?:and|but|before|until|all|in|at|for|on|with)\b))|"
    # "worked as" / "retired as" name a job whatever the word
    rf"\bI (?:worked|retired) as (an? (?:[\w-]+ ){{0,3}}?[\w-]+?){_FORMERLY}{_STOP_CLAUSE}|"
    rf"\bbefore I retired,? I (?:was|worked as) (an? (?:[\w-]+ ){{0,3}}?[\w-]+?){_FORMERLY}{_STOP_CLAUSE}|"
    rf"\bI(?:'m| am) an? retired ((?:[\w-]+ ){{0,2}}?[\w-]*(?:{_OCCUPATIONS_EN}))s?\b|"
    # "I taught piano for forty years", "I drove a cab for thirty years": what they did for years
    rf"\bI ((?:{'|'.join(_PAST_TRADES)}) (?:[\w-]+ ){{0,3}}?[\w-]+) for (?:[\w-]+ ){{0,3}}?(?:years|decades)\b|"
    # a place worked at: "I used to work in a biscuit factory", "I worked at the post office for
    # thirty years" (said back as told: "User used to work in a biscuit factory.")
    r"\bI used to work ((?:in|at|for) (?:an?|the|my) (?:[\w'-]+ ){0,3}?[\w'-]+)"
    r"(?=\s*(?:[.!;,]|$|\b(?:and|but|for|until)\b))|"
    r"\bI worked ((?:in|at|for) (?:an?|the|my) (?:[\w'-]+ ){0,3}?[\w'-]+) for (?:[\w-]+ ){0,3}?(?:years|decades)\b",
    re.I,
)
_FORMER_JOB_ZH = re.compile(
    r"我(?:以前|之前|过去|原来|从前|年轻的?时候|退休(?:以)?前)是做([^" + _ZH_STOP + r"]{1,8}?)的|"
    # "我以前在纺织厂当会计": where, and the job
    r"(?:我|^|(?<=[，,]))(?:以前|之前|过去|原来|从前|年轻的?时候|退休(?:以)?前)在([^" + _ZH_STOP + r"]{1,10}?)"
    r"(当|做|干|开|教|管|修|卖|种|跑)"
    r"(?:了[^" + _ZH_STOP + r"]{1,4}年)?([^" + _ZH_STOP + r"的了]{1,8}?)(?=[" + _ZH_STOP + r"]|$|了|的)|"
    r"(?:我|^|(?<=[，,]))(?:以前|之前|过去|原来|从前|年轻的?时候?|退休(?:以)?前)(?:一直)?(是|当过|做过|干过|当)(?:一名|一个|个|名)?"
    r"(?!住|在|很|不|这|那|个|一个|挺|非常|特别|做)([^" + _ZH_STOP + r"的了]{1,8}?)(?:的)?(?=[" + _ZH_STOP + r"]|$|了)|"
    # "我叫张秀英，退休老师", "我是退休工人": the job they retired from
    r"(?:我(?:是)?|^|(?<=[，,]))(?:一名|一个|个)?退休(?:的)?([^" + _ZH_STOP + r"的了]{2,4})(?=[" + _ZH_STOP + r"]|$)"
)
# "I've started a part-time job at the garden centre", "I got a new job with the council"
# "I started at a bike shop on Monday, fixing bikes now": a new job where, then what they do
_STARTED_AT_EN = re.compile(
    rf"\bI(?:'ve| have)? (?:just )?started (?:work(?:ing)? )?(?:at|with) (an? .+?|the .+?){_STOP_CLAUSE}"
    r"(?:,\s*([a-z]+ing) ([a-z]+(?: [a-z]+)?) now\b)?",
    re.I,
)
_NEW_JOB_AT_EN = re.compile(
    rf"\bI(?:'ve| have)? (?:just |recently )?(?:started|got|found|taken|took) an? "
    rf"((?:(?:new|part-time|part time|full-time|full time|little|weekend|evening|night|temporary|volunteer) )*"
    rf"job (?:at|in|with|for) .+?){_STOP_CLAUSE}",
    re.I,
)
# What they study: "I'm doing a nursing degree", "I'm studying physics at Leeds" (key `study`)
_STUDY_EN = re.compile(
    # "second year at Manchester doing physics": the subject and the place
    r"\b(?:first|second|third|fourth|final|last) year (?:at|in) ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?),? "
    r"(?:doing|studying|reading) ((?:[\w-]+ ){0,2}?[\w-]+)(?=\s*(?:[.!?,;]|$|\b(?:and|but)\b))|"
    rf"\bI(?:'m| am) (?:doing|taking) an? ((?:[\w-]+ ){{1,3}}?)(?:degree|course|diploma|apprenticeship|phd|masters)\b|"
    rf"\bI(?:'m| am) (?:studying|reading) ((?:[\w-]+ ){{0,3}}?[\w-]+?)"
    r"(?: at ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?))?"
    rf"(?= (?:at|in|for|now|this)\b|{_STOP_CLAUSE})",
    re.I,
)
_RETIRED_EN = re.compile(
    r"\bI(?:'m| am| have| 've|'ve)? (?:now |fully |officially |finally |properly )*(?:retired|been retired)\b(?! from)",
    re.I,
)
_WORK_AT_EN = re.compile(
    rf"\bI(?:(?: currently| now| also)? work|(?:'m| am)(?: currently| now| also)? working)"
    r"(?: part-time| part time| full-time| full time| weekends| evenings| nights|"
    r" on weekends| at weekends)?"
    # ("I work on the tills at the garden centre": the post, then where)
    r"(?: (?:on|in) the (?:tills?|checkouts?|counter|desk|reception|front desk|kitchen|shop floor|wards?|"
    r"night shift|day shift|deli|bar))? "
    rf"(at|for) (?!home\b|night\b|nights\b|the moment\b)(.+?)(?= as an? \w|{_NOW_EN}{_STOP_CLAUSE})|"
    r"\bI(?: currently| now)? work(?: part[- ]time| full[- ]time)? in "
    r"(IT|finance|sales|marketing|healthcare|health care|"
    r"education|construction|"
    r"retail|hospitality|tech|software|insurance|banking|law|government|the NHS|(?:a|an) (?:hospital|school|"
    r"office|bank|shop|store|factory|restaurant|hotel|lab|laboratory|hospital|nursing home|care home|"
    r"supermarket|warehouse|library|university|bakery|pharmacy|clinic)|the (?:library|post office|hospital|"
    r"school|bank|bakery|pharmacy|council|museum|garden centre|local shop|village shop|corner shop)"
    r"(?: in (?-i:[A-Z])[\w-]+)?)\b",
    re.I,
)
_PLACE_NOUNS = r"(?:city|town|village|suburbs?|countryside|flat|apartment|house|area|region|county|state|country)"
_DWELLINGS = "flat|house|bungalow|cottage|apartment|home|place"  # (where one lives, in a move's words)
_HOME_EN = re.compile(
    rf"\b(?:I|we)(?:(?: currently| now| all)? (?:live|am living|'m living|are living|'re living|reside|"
    rf"have been living|have lived)|'ve been living|'ve lived)(?: (?:on my own|alone|by myself|on our own))? "
    rf"((?:in|near|outside|just outside|close to) .+?)"
    rf"(?:(?= (?:for )?(?:\w+ )?(?:years?|months?|ages|a while|decades?)\b| since\b)|{_STOP_CLAUSE})|"
    rf"\bI(?:'m| am) (?:currently |now )?based in (.+?){_STOP_CLAUSE}|"
    # "I've been down here in Norwich since 1970", "I moved in with my daughter in Cincinnati"
    r"\bI(?:'ve| have) been (?:down |up |over |out )?here in ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    r"\b(?:I|we)(?:'ve| have)?(?: just| now| recently)? moved in with (?:my|our) [a-z]+(?: [A-Z][a-z]+)? in "
    r"((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    # "now I'm retired in Leicester", "we retired to Devon"
    rf"\b(?:I(?:'m| am)|we(?:'re| are))(?: now)? retired (?:in|to) ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    rf"\b(?:I|we) retired to ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    rf"\bmy home is in (.+?){_STOP_CLAUSE}|"
    rf"\b(?:I|we|(?-i:[A-Z])[a-z]+ and I)(?:'ve| have)?(?: just| recently)? moved (?:in)?to (?:an? |the )?"
    rf"(?:[\w-]+ ){{0,3}}?(?:{_DWELLINGS}|care home) (?:in|near) "
    rf"((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    rf"\b(?:I|we)(?:'ve| have)?(?: just| recently)? moved from (?-i:[A-Z])[\w-]+ to ((?-i:[A-Z])[\w-]+)|"
    # "we've sold the house and moved to Derby"
    rf"\b(?:I|we)(?:'ve| have)? [a-z ]{{2,30}}? and (?:just )?moved to ((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)|"
    rf"\b(?:I|we)(?:'ve| have)?(?: just| recently)? moved to (.+?)"
    rf"(?= (?:last|this|in|a|two|three|recently|now)\b|{_STOP_CLAUSE})|"
    # "I'm in a ground floor flat in Scarborough now", "we're in a little bungalow near Whitby"
    rf"\b(?:I(?:'m| am)|we(?:'re| are))(?: now| living)? in (?:a|an|the|my|our) (?:[\w-]+ ){{0,4}}?"
    rf"(?:{_DWELLINGS}|semi|terrace) "
    rf"((?:in|near) (?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)",
    re.I,
)
_NOT_HOMES = {"fear", "hope", "peace", "denial", "the moment", "the past", "a dream", "luxury", "harmony", "poverty"}
_FAMILY_EN = rf"\b(?:my|our) ({_REL})(?:,? ((?-i:[A-Z][a-z]+)),?)?"
# "My daughter is called Leela, she's nine.", "我女儿叫朵朵，今年六岁。": the age of the member
# just named, said with a pronoun (or no subject at all in Chinese) after the comma
_NAMED_THEN_AGE_EN = re.compile(
    rf"\bmy ({_REL})(?:'s name is| is called| is named| called| named)\s+((?-i:[A-Z][a-z]+)),?\s*(?:and\s+)?"
    rf"(?:she|he)(?:'s| is) (?:now |just )?({when.EN_NUMBER})(?: years? old)?(?=\s*(?:[.!;,]|$|\band\b))",
    re.I,
)
_AGE_TURNS_EN = re.compile(
    rf"{_FAMILY_EN} (?:turns|will turn|is turning|'s turning|will be|'ll be|is going to be) ({when.EN_NUMBER})"
    rf"(?: years old)?,? ({when.EN_DAY})\b",
    re.I,
)
_AGE_IS_EN = re.compile(
    rf"{_FAMILY_EN}(?: is|'s| just turned|'s just turned| has just turned) (?:now |already |just )?"
    rf"({when.EN_NUMBER})(?: years? old| years of age)?(?: this year| now)?"
    r"(?! (?:of|times|minutes|hours|days|weeks|months|kilos|pounds|feet|cm|percent)\b)"
    r"(?=\s*(?:[.!?;,]|$|\b(?:but|because|and|so|when|if)\b))",
    re.I,
)
_AGE_HAVE_EN = re.compile(
    rf"\bI(?: have|'ve got| have got) an? ({when.EN_NUMBER})[- ]years?[- ]old ({_REL})"
    rf"(?: (?:called|named) ((?-i:[A-Z][a-z]+)))?\b",
    re.I,
)
_MONTH_DAY_EN = r"(?:\d{1,2}(?:st|nd|rd|th)? (?:of )?[A-Za-z]{3,9}|[A-Za-z]{3,9} (?:the )?\d{1,2}(?:st|nd|rd|th)?)"
_BIRTHDAY_EN = re.compile(
    rf"\bmy ({_REL})(?:'s| ((?-i:[A-Z][a-z]+))'s) birthday is (?:on )?(?:the )?({_MONTH_DAY_EN})\b|"
    rf"{_FAMILY_EN} was born on (?:the )?({_MONTH_DAY_EN})(?:,? (\d{{4}}))?",
    re.I,
)
# the day a birthday falls on, said as a day ("my mum's birthday is on Saturday", "it's my dad's
# birthday tomorrow", "Friday is my son's birthday"): stored as that date
_BIRTHDAY_ON_EN = re.compile(
    rf"\bmy (?P<rel>{_REL})(?: (?P<name>(?-i:[A-Z][a-z]+)))?'s birthday(?: is|'s)? (?P<day>{when.EN_DAY})(?!\w)|"
    rf"^(?:and |oh |so )?(?P<day2>{when.EN_DAY}) is my (?P<rel2>{_REL})(?: (?P<name2>(?-i:[A-Z][a-z]+)))?'s birthday\b",
    re.I,
)
# a list of foods ends where the next statement starts: "I can't eat gluten, I'm celiac"
# (", and my son is allergic to eggs": another person's statement starts)
_STOP_ITEMS = (
    r"(?=\s*(?:[.!?;]|$|,\s*(?:I|i)\b|\b(?:but|because|and i|so|when|if|since|as|btw|by the way|tho|though)\b|"
    r"I(?:'m|'ve|'d| am| have| was| carry)\b|"
    # ", found out the hard way", ", the doctor was very firm": a remark after the list, not an item
    r",\s*(?:found|the|my|so|which|it|that|this|since|because|though|although|especially|ever|apparently|"
    r"according|we|they|he|she|learned|discovered|turns?|doctor|ended|landed|nearly|almost|had|went|got|was|"
    r"been|once|twice|big time|really|seriously|badly|lol|haha|poor|bless|sadly|unfortunately|annoyingly|"
    r"ate|eaten|tried|took|swelled|couldn't|could not)\b|"
    r",?\s*and (?:my|our) \w+(?: [A-Z][a-z]+)? (?:is|has|'s|can|can't|cannot|must|should)\b))"
)
_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORDINAL_BIRTHDAY_EN = re.compile(
    rf"\bmy ({_REL})(?: ((?-i:[A-Z][a-z]+)))?'s (\d{{1,3}}(?:st|nd|rd|th)|{'|'.join(_ORDINALS)}|"
    rf"(?:twent|thirt|fort|fift|sixt|sevent|eight|ninet)ieth|"
    rf"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-\w+)(?: birthday)?(?:'s| is) ({when.EN_DAY})\b",
    re.I,
)
_ALLERGY_EN = re.compile(
    rf"(?:\bI(?:'m| am) |^(?:oh |and |also |btw,? |by the way,? )?)"
    rf"(?:very |really |severely |badly |seriously |deathly |highly |quite |also )?allergic to "
    rf"(.+?){_STOP_ITEMS}|"
    r"\bI(?: have|'ve got| have got|'ve) (?:an? |severe |bad |serious |a severe |a bad |a serious )*"
    r"((?!(?:an?|any|the|some|no) allerg)(?:[a-z]+ )?[a-z]+) allerg(?:y|ies)\b|"
    rf"\bI(?: have|'ve got| have got|'ve) (?:an? )?(?:severe |bad |serious )?allerg(?:y|ies) to (.+?){_STOP_ITEMS}",
    re.I,
)
# A household member's allergy or a food they cannot eat: "My son Oliver is allergic to peanuts",
# "my wife has a gluten allergy", "my dad can't eat shellfish" (a capitalised name may follow
# the relation). Keyed `health:allergy:<allergen>:<relation>` / `health:avoid:<food>:<relation>`:
# a safety fact of the household (the reply guard keeps the food out of every suggestion: meals
# are shared), apart from the user's own (`health.avoided_keys`, "what am I allergic to?").
_RELATIVE_EN = rf"\b(?:my|our) ({_REL}|youngest|eldest|oldest)(?:,? ((?-i:[A-Z][a-z]+)),?)?"
_FAMILY_ALLERGY_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (?:very |really |severely |badly |seriously |deathly |highly |quite |also )?"
    rf"allergic to (.+?){_STOP_ITEMS}|"
    rf"{_RELATIVE_EN}(?: has|'s got| has got|'s) (?:an? |severe |bad |serious |really bad |nasty )*"
    r"((?!(?:an?|any|the|some|no) allerg)(?:[a-z]+ )?[a-z]+) allerg(?:y|ies)\b",
    re.I,
)
# A household kept free of a food for someone's sake ("we keep the house nut free", "ours is a
# nut-free home"): `health:avoid:<food>:household`, kept out of every suggestion
_HOUSE_FREE_EN = re.compile(
    r"\b(?:keep|kept) (?:the|our) (?:house|home|kitchen|flat) ([a-z]+)[- ]free\b|"
    r"\b(?:our|the) (?:house|home|kitchen|flat) is ([a-z]+)[- ]free\b|"
    r"\ba ([a-z]+)[- ]free (?:house|home|household|kitchen)\b",
    re.I,
)
_FAMILY_MED_EN = re.compile(rf"{_RELATIVE_EN}(?: (takes|is on|uses|needs)|('s on)) (.+?){_STOP_LIST}", re.I)
_FAMILY_AVOID_EN = re.compile(
    rf"{_RELATIVE_EN} (?:can't|cannot|can not|mustn't|must not|shouldn't|should not|isn't allowed to|"
    rf"is not allowed to) (eat|have|drink) (.+?){_STOP_ITEMS}",
    re.I,
)
_AVOID_EN = re.compile(
    rf"\bI(?: |(?='))(can't|cannot|can not|mustn't|must not|shouldn't|should not|am not allowed to|'m not allowed to|"
    rf"am not supposed to|'m not supposed to) (eat|have|drink|tolerate|digest|stomach) (.+?){_STOP_ITEMS}",
    re.I,
)
# "I must avoid sugar", "I'm gluten intolerant", "I have a gluten intolerance"
_AVOID_MORE_EN = re.compile(
    rf"\bI (?:must|have to|need to|should|'ve got to|am supposed to|'m supposed to) avoid (.+?){_STOP_ITEMS}|"
    r"\bI(?:'m| am) ([a-z]+) intolerant\b|\bI(?: have|'ve got| have got|'ve) an? ([a-z]+) intolerance\b|"
    # "I'm not allowed red meat", "(I'm on warfarin so) no cranberry juice for me"
    rf"\bI(?:'m| am) not (?:allowed|supposed to have) (?!to\b)(.+?){_STOP_ITEMS}|"
    r"(?:^|\bso |, ?)no (?:more )?(?!(?:thanks|problem|worries|idea|time|way|excuses?|rush)\b)"
    r"((?:[a-z]+ ){0,2}[a-z]+) for me\b",
    re.I,
)
# "I don't eat pork", "I never drink milk": a safety fact only when the tables know the food
# (health.known_food; "I don't eat breakfast" is none)
_DONT_EAT_EN = re.compile(
    rf"\bI (?:don't|do not|never|no longer) (eat|drink) (.+?){_STOP_ITEMS}|"
    # "no pork for me" (a known food only, below)
    r"(?:^(?:and |also |oh |so )?|\bso |, ?)no ()([a-z]+(?: [a-z]+)?) for me\b",
    re.I,
)
# "I don't drink." (alone: alcohol), "I'm teetotal"
_NO_ALCOHOL_EN = re.compile(
    r"\bI (?:don't|do not|never) drink(?: any ?more| at all)?(?=\s*(?:[.!,;]|$))|"
    r"\bI(?:'m| am) (?:a )?teetotal(?:ler)?\b|\bI(?:'m| am) (?:a )?non-drinker\b",
    re.I,
)
_DIET_NAMES_EN = "|".join(sorted((re.escape(n) for d in health.DIETS for n in d.en), key=len, reverse=True))
# "I'm vegetarian", "I've been vegan for years", "I went vegetarian last year"
_DIET_EN = re.compile(
    rf"\bI(?:'m| am)(?: now| also| actually| still)? (?:(?:a|strictly|strict|lifelong|full)\s)*({_DIET_NAMES_EN})\b|"
    rf"\bI(?:'ve| have)(?: recently| just)? (?:been|gone|become|turned) (?:a )?({_DIET_NAMES_EN})\b|"
    rf"\bI (?:went|turned|became) (?:a )?({_DIET_NAMES_EN})\b",
    re.I,
)
# "I'm allergic to eggs, proper anaphylactic": how bad, not what
_NOT_AN_ALLERGEN = re.compile(r"\b(?:anaphyla\w*|proper|epipen|severe\w*|badly|really|deadly|seriously)\b", re.I)
_NOT_FOODS = {
    *("now", "anything", "that", "it", "this", "much", "more", "today", "right now", "yet", "them", "those"),
    # "fish, any kind": how much, not what
    *("any kind", "any type", "any sort", "of any kind", "at all", "all of it", "whatsoever", "either", "any"),
}
_CONDITION_NAMES_EN = health.names_pattern(health.CONDITIONS)
# a condition said as what someone is ("diabetic"), and the kind or degree said before its name
_CONDITION_ADJECTIVES = "diabetic|asthmatic|epileptic|coeliac|celiac|lactose intolerant"
_TYPE_OR_DEGREE = r"(?:type (?:[12]|one|two)|mild|severe|bad|chronic)"
_FAMILY_CONDITION_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (?:also |now )?(?:type (?:[12]|one|two) )?({_CONDITION_ADJECTIVES})\b|"
    rf"{_RELATIVE_EN}(?: has| has got|'s got| suffers from| lives with) (?:an? )?"
    rf"(?:{_TYPE_OR_DEGREE} )?({_CONDITION_NAMES_EN})\b",
    re.I,
)
_CONDITION_EN = re.compile(
    rf"\bI(?:'m| am) (?:also )?(?:[a-z]+ and )?({_CONDITION_ADJECTIVES}|pregnant)\b|"
    rf"\bI(?: have|'ve got| have got|'ve| suffer from| live with| was diagnosed with| got diagnosed with) "
    rf"(?:an? )?(?:{_TYPE_OR_DEGREE} )?({_CONDITION_NAMES_EN})\b",
    re.I,
)
_MED_WHEN = (
    r"(?:every (?:morning|evening|night|day)(?: and (?:morning|evening|night))?|each (?:morning|evening|"
    r"night|day)|daily|twice a day|once a day|three times a day|in the morning|at night|before bed|"
    r"(?:before|after|with) (?:my |your )?(?:meals|breakfast|dinner|lunch|tea|supper|food))"
)
_MED_EN = re.compile(
    rf"\bI(?: also)? (take|use|need)(?: my)? (.+?){_STOP_LIST}|\bI(?:'m| am)(?: also)? (taking|on) (.+?){_STOP_LIST}|"
    # "the doctor's got me on metformin", "they've put me on statins": prescribed by someone
    rf"\b(?:doctor|doc|gp|consultant|nurse|they|he|she)(?:'s|'ve| has| have)? (?:got|put|started|has|have) me "
    rf"(on) (.+?){_STOP_LIST}",
    re.I,
)
# A medicine stopped: "I've stopped taking aspirin", "the doctor stopped my aspirin", "I'm off the
# statins now", "I don't take warfarin any more"
_MED_STOPPED_EN = re.compile(
    r"\bI(?:'ve| have)? (?:stopped|quit|come off|came off|given up|gave up) (?:taking |using )?(.+?)"
    rf"(?: now| any ?more| altogether)?{_STOP_LIST}|"
    r"\b(?:doctor|gp|consultant|nurse|they|he|she)(?:'s|'ve| has| have)? (?:stopped|taken me off|took me off) "
    rf"(.+?)(?: now| any ?more)?{_STOP_LIST}|"
    rf"\bI(?:'m| am) (?:off|no longer on|not on) (.+?)(?: now| any ?more)?{_STOP_LIST}",
    re.I,
)
_MED_SPLIT = re.compile(rf"^(.+?)(?:\s+({_MED_WHEN}.*|\d+\s?mg.*|for (?:my|the) .+))?$", re.I)
_NOT_MEDS = re.compile(
    r"^(?:the|a|an|my|their|some|it|this|that|you|care|part|turns|photos?|pictures?|notes?|lessons?|classes|"
    r"breaks?|naps?|showers?|baths?|walks?|runs?|turns|time|notice|place|action|advantage|charge|risks?|"
    r"steps?|shifts?|calls?|orders?)\b",
    re.I,
)


def _fact(kind: str, key: str, value: str, content: str, zh: bool = False) -> SelfFact:
    return SelfFact(kind, key, value, content, "zh" if zh else "en")


def _clause_end(value: str) -> str:
    return value.strip(" .,!;\"'")


# "I drove a black cab forty years before I retired", "I was the postmistress in the village for
# thirty years before I retired", "I taught second grade at Hodge Elementary thirty years before I
# retired": the job is what follows the verb, up to where, how long, or the retiring
_BEFORE_RETIRING_EN = re.compile(
    rf"\bI (was|{'|'.join(_PAST_TRADES)}) ((?:an?|the) )?([\w-]+(?: [\w-]+){{0,3}}?)"
    r"(?= (?:at|in|for|on|with|from|down|up)\b| [\w-]+ (?:years|decades)\b| before I retired)"
    r"[^.;!?]*?\bbefore I retired\b",
    re.I,
)


def _former_job(clause: str, zh: bool) -> list[SelfFact]:
    """A job they had (`occupation:former`): "User used to be a postman." / "用户以前是邮递员。"."""
    m = (_FORMER_JOB_ZH if zh else _FORMER_JOB_EN).search(clause)
    if not m and not zh:
        b = _BEFORE_RETIRING_EN.search(clause)
        # ("I was happy before I retired": a job is "a…" / "the…" after "was")
        if (
            b
            and (b.group(2) or b.group(1).lower() != "was")
            and not re.search(rf"\b(?:{_NOT_A_JOB})\b", b.group(3), re.I)
        ):
            verb, job = b.group(1).lower(), _third_person((b.group(2) or "") + b.group(3))
            what = f"{_PAST_TRADES[verb]} {job}" if verb in _PAST_TRADES else job
            said = f"used to {what}" if verb in _PAST_TRADES else f"used to be {what}"
            return [_fact("fact", "occupation:former", what, f"{USER_EN} {said}.")]
    if not m:
        return []
    if zh:
        if m.group(2):  # at a place
            what = m.group(4)
            content = f"{USER_ZH}以前在{m.group(2)}{m.group(3)}{what}。"
            return [_fact("fact", "occupation:former", what, content, zh=True)]
        if m.group(7):  # "退休老师"
            return [_fact("fact", "occupation:former", m.group(7), f"{USER_ZH}退休前是{m.group(7)}。", zh=True)]
        what = m.group(1) or m.group(6)
        verb = "是做" if m.group(1) else {"当": "当过"}.get(m.group(5), m.group(5))
        tail = "的" if m.group(1) else ""
        return [_fact("fact", "occupation:former", what, f"{USER_ZH}以前{verb}{what}{tail}。", zh=True)]
    what = next(g for g in m.groups() if g)
    if m.group(7) or m.group(8):  # a place: "work in a biscuit factory"
        if re.search(r"\b(?:garden|house|home|kitchen|yard|allotment|shed|a lot|hard|late|nights)\b", what, re.I):
            return []  # ("I used to work in the garden a lot": no job)
        what = f"work {_third_person(what)}"
        return [_fact("fact", "occupation:former", what, f"{USER_EN} used to {what}.")]
    if re.search(rf"\b(?:{_NOT_A_JOB})\b", what, re.I):
        return []
    verb, _, rest = what.partition(" ")
    if verb.lower() in _PAST_TRADES:  # "taught piano": "used to teach piano"
        what = f"{_PAST_TRADES[verb.lower()]} {_third_person(rest)}"
        return [_fact("fact", "occupation:former", what, f"{USER_EN} used to {what}.")]
    if m.group(5):  # "I'm a retired electrician": an electrician
        what = ("an " if what[:1].lower() in "aeiou" else "a ") + what
    what = _third_person(what)
    return [_fact("fact", "occupation:former", what, f"{USER_EN} used to be {what}.")]


# "我在北京学中文，已经一年了", "我在学画画" (key `study`; not 学校, 学会, 学过)
_STUDY_ZH = re.compile(
    r"(?:我|(?<=[，,])(?=现在|最近|目前))(?:现在|目前|正在|最近|这段时间|这阵子|(?:上个?|这个?)(?:星期|礼拜|周|月))?"
    r"(?:跟着?[^学，,。！？\s]{1,6}?)?(?:在([^学，,。！？\s]{1,8}?))?(?:在|开始)?"
    r"(?<![大中小])(?:学习|学)(?!习|校|生|会|着|了|过|到|期|院)"
    r"([^，,。！!？?\s的了]{1,6}?)(?=[，,。！!？?]|$|呢|呀|啊|了)|"
    # "现在在武汉读研究生", "我在北京上大学"
    r"(?:我|^|(?<=[，,]))(?:现在|目前|正在)?在([^，,。！？\s]{1,8}?)(?:读|念|上)(研究生|大学|博士|硕士|高中|中学|本科|研)|"
    # "现在改成去老年大学学书法", "我每周去社区学太极"
    r"(?:我|^|(?<=[，,]))(?:现在|最近|每周|每个?星期[一二三四五六日天]?)?(?:改成|开始|又)?去([^学，,。！？\s]{1,8}?)"
    r"(?:学习|学)([^，,。！!？?\s的了]{1,6}?)(?=[，,。！!？?]|$|呢|呀|啊|了)"
)


def _zh_study(clause: str) -> list[SelfFact]:
    m = _STUDY_ZH.search(clause)
    if m and m.group(6):  # learnt at a place gone to: "去老年大学学书法"
        return [_fact("fact", "study", m.group(6), f"{USER_ZH}在{m.group(5)}学{m.group(6)}。", zh=True)]
    if m and m.group(4):
        said = f"{USER_ZH}在{m.group(3)}读{m.group(4)}。"
        return [_fact("fact", "study", f"{m.group(3)}{m.group(4)}", said, zh=True)]
    if not m or m.group(2) in ("东西", "什么", "啥", "一下"):
        return []
    where = f"在{m.group(1)}" if m.group(1) else ""
    return [_fact("fact", "study", m.group(2), f"{USER_ZH}{where}学{m.group(2)}。", zh=True)]


def _en_study(clause: str) -> list[SelfFact]:
    m = _STUDY_EN.search(clause)
    if not m:
        return []
    if m.group(1):  # "second year at Manchester doing physics"
        what = f"{m.group(2)} at {m.group(1)}"
        return [_fact("fact", "study", what, f"{USER_EN} is studying {what}.")]
    what = _third_person((m.group(3) or m.group(4) or "").strip())
    where = f" at {m.group(5)}" if m.group(5) else ""
    if not what or len(what.split()) > 4 or what.lower() in ("it", "that", "this", "hard", "a lot"):
        return []
    return [_fact("fact", "study", what + where, f"{USER_EN} is studying {what}{where}.")]


# The user's own birthday: "My birthday is March 24", "my birthday's on the 24th of March", "I was
# born on 3 May 1961"; "我的生日是三月二十四号", "我是1961年5月3日出生的" (key `birthday`)
# (a birthday on a feast day: "my birthday's on the 24th, christmas eve", "on Christmas Day")
_FEAST_DAYS = {
    "christmas eve": (12, 24),
    "christmas day": (12, 25),
    "christmas": (12, 25),
    "boxing day": (12, 26),
    "new year's eve": (12, 31),
    "new year's day": (1, 1),
    "valentine's day": (2, 14),
    "halloween": (10, 31),
}
_FEAST_DAY = "|".join(re.escape(d) for d in sorted(_FEAST_DAYS, key=len, reverse=True))
_OWN_BIRTHDAY_EN = re.compile(
    rf"\bmy birthday(?:'s| is) (?:on )?(?:the )?(?:\d{{1,2}}(?:st|nd|rd|th),? )?({_FEAST_DAY})\b|"
    rf"\bmy birthday(?:'s| is) (?:on )?(?:the )?({_MONTH_DAY_EN})\b|"
    rf"\bI was born on (?:the )?({_MONTH_DAY_EN})(?:,? (\d{{4}}))?",
    re.I,
)
_OWN_BIRTHDAY_ZH = re.compile(
    rf"我(?:的)?生日(?:是|在)?({when.ZH_NUMBER})月({when.ZH_NUMBER})[号日]|"
    rf"我(?:是)?(\d{{4}})年({when.ZH_NUMBER})月({when.ZH_NUMBER})[号日](?:出生|生)"
)


# Where the user is from (key `hometown`): "I grew up in Swansea", "I'm from Valencia originally",
# "I was born in Cork", "my hometown is Lyon"; "我老家是成都的", "我是在西安长大的", "我出生在广州"
_PLACE_EN = r"((?-i:[A-Z])[\w'-]+(?:,? (?-i:[A-Z])[\w'-]+){0,2})"
_HOMETOWN_EN = re.compile(
    rf"\bI (?:grew up|was raised|was brought up|was born and raised|was born and bred) in {_PLACE_EN}|"
    # "I grew up in a pit village outside Barnsley": the town it is near
    r"\bI (?:grew up|was raised|was brought up|was born) in an? (?:[a-z]+ ){0,2}?(?:village|hamlet|town|farm|place)"
    rf" (?:just )?(?:outside|near|close to) {_PLACE_EN}|"
    rf"\bI(?:'m| am) (?:originally )?from {_PLACE_EN}(?=\s*(?:originally|[.!?,;]|$|\b(?:and|but|so)\b))|"
    rf"\bI(?:'m| am) (?:originally )?from {_PLACE_EN} originally|"
    rf"\bI(?:'m| am) (?-i:[A-Z])[a-z]+,? (?:originally )?from {_PLACE_EN}"
    r"(?=\s*(?:originally|[.!?,;]|$|\b(?:and|but|so)\b))|"
    rf"\bI was born in {_PLACE_EN}|\bmy home ?town is {_PLACE_EN}|"
    # "I'm a Dundee lad originally", "grew up in Grimsby tho", "came over from Kingston, Jamaica"
    r"\bI(?:'m| am) an? ([A-Za-z]+) (?:lad|lass|girl|boy|native|man|woman)\b(?= originally| born| through|\s*[,.!]|$)|"
    rf"^(?:and |oh |well |so )?grew up in {_PLACE_EN}|^(?:i'm |I'm |I am )?originally from {_PLACE_EN}|"
    # ("…, moved here from Poland ten years ago": "moved" only with "here" or "over")
    rf"(?:\bI |\bwe |^(?:and |oh |well |so )?|,\s*)(?:just |only |recently )?"
    rf"(?:came (?:over )?(?:here )?|(?:moved|emigrated) (?:over )?here |"
    rf"moved over |emigrated )from {_PLACE_EN}",
    re.I,
)


def _hometown(clause: str, zh: bool) -> list[SelfFact]:
    # the last one said ("我是印度人，从浦那来的": the city)
    m = ([None] + list((_HOMETOWN_ZH if zh else _HOMETOWN_EN).finditer(clause)))[-1]
    if m is None:
        return []
    place = next(g for g in m.groups() if g)
    if zh:
        if re.search(r"哪|什么|这里|那里|这儿|那儿|家里|医院", place):
            return []
        return [_fact("fact", "hometown", place, f"{USER_ZH}的老家是{place}。", zh=True)]
    place = place[:1].upper() + place[1:]
    if place.lower() in _LOWER_NOT_NAMES or place.lower() in ("big", "local", "country", "city", "london lad"):
        return []
    grew = re.search(r"grew up|raised|brought up", m.group(0), re.I)
    # (moved from a place: as said, it may not be where they are from; one came over or emigrated from is)
    moved = re.search(r"\bmoved\b", m.group(0), re.I)
    said = (
        f"{USER_EN} grew up in {place}."
        if grew
        else f"{USER_EN} moved here from {place}."
        if moved
        else f"{USER_EN} is from {place}."
    )
    return [_fact("fact", "hometown", place, said)]


# A death in the family, or of a pet, told without the name ("My mum passed away last year", "our
# cat died on Saturday", "我的狗去年死了"): key `family:<relation>:passed` (a named one is "late",
# `family:<relation>`); the name they told before is then said of the past
# ("passed" alone is a death, not "passed his exams", "passed her driving test")
_PASSED_ON_EN = r"passed(?!\s+(?:her|his|my|the|a|an|their|its|it|all|with|by|through|out|your|our)\b)"
_DIED_EN = rf"(?:has |had |just |sadly )*(?:died|passed away|passed on|{_PASSED_ON_EN}|was put down|was put to sleep)\b"
_DIED_ZH = r"(?:去世了|过世了|(?<![飞跑溜出搬])走了|死了|不在了)"  # (飞走了, 跑走了: lost, not dead)
_DEATH_EN = re.compile(
    rf"\b(?:my|our) (?:dear |beloved |old |poor )?({_REL}|{_PET_WORD})(?! (?-i:[A-Z])[a-z]+ )(?:,)? {_DIED_EN}|"
    rf"\bI (?:just |recently )?lost my ({_REL}|{_PET_WORD})\b(?! (?:keys|phone|wallet|job))",
    re.I,
)
_DEATH_ZH = re.compile(
    r"(?:我(?:的|家)?(?:的|养的|家的)?(?:那|这)?(?:只|条|个|位)?|^)("
    + ZH_RELATIONS
    + r"|狗|猫|小狗|小猫)[^，,。！!？?]{0,6}?(?:"
    + _DIED_ZH
    + r"|离开了我们)"
)


def _death(clause: str, zh: bool) -> list[SelfFact]:
    m = (_DEATH_ZH if zh else _DEATH_EN).search(clause)
    if m is None:
        return []
    word = next(g for g in m.groups() if g)
    if zh:
        relation = {"小狗": "狗", "小猫": "猫"}.get(word, word)
        return [
            _fact(
                "fact", f"family:{relation_key(relation)}:passed", relation, f"{USER_ZH}的{relation}去世了。", zh=True
            )
        ]
    relation = _BREEDS.get(word.lower(), word.lower())
    return [_fact("fact", f"family:{relation_key(relation)}:passed", relation, f"{USER_EN}'s {relation} has died.")]


# A relative's big day: "my brother Sam is getting married on the 16th of January", "my daughter's
# wedding is on 3 June" (a plan of the household, keyed by whose and what)
_RELATIVE_EVENT_EN = re.compile(
    rf"\bmy ({_REL})(?: ((?-i:[A-Z])[a-z]+))?(?:'s| is) getting (married|engaged) (?:on )?(?:the )?"
    rf"({_MONTH_DAY_EN}|\d{{1,2}}(?:st|nd|rd|th))\b|"
    rf"\bmy ({_REL})(?: ((?-i:[A-Z])[a-z]+))?'s (wedding|graduation|christening|retirement party) is "
    rf"(?:on )?(?:the )?({_MONTH_DAY_EN})\b",
    re.I,
)


# What someone does regularly: "I walk the dog every morning", "every Sunday we go to chapel", "my
# grandson Finn plays football every Saturday morning", "我每天早上去公园遛狗" (key
# `routine:<when>`, a relative's `routine:<relation>_<when>`; said back as told)
_EVERY_EN = (
    rf"(?:every (?:single )?(?:day|morning|afternoon|evening|night|week|weekend|{_DAYS_EN})"
    rf"(?: (?:morning|afternoon|evening|night))?|"
    # ("on Tuesdays and Thursdays")
    rf"on {_DAYS_EN}s(?:(?:,| and| or) {_DAYS_EN}s)*(?: (?:mornings|afternoons|evenings|nights))?|"
    # ("on Thursday evenings": every one of them)
    rf"on {_DAYS_EN} (?:mornings|afternoons|evenings|nights)|"
    r"at (?:the )?weekends?|on (?:the )?weekends|each (?:morning|evening|day|week))"
)
_ROUTINE_EN = re.compile(
    rf"\b(?:I|we) (?:usually |always |normally |often |still )?((?!am\b|have\b|had\b|was\b|feel\b|think\b)[a-z]+)"
    rf"(?: (.{{2,40}}?))? ({_EVERY_EN})\b|"
    rf"\b({_EVERY_EN}),? (?:I|we) (?:usually |always |normally |often )?([a-z]+) (.{{2,60}}?)"
    rf"(?:(?=\s+and then\b)|{_STOP_CLAUSE})",
    re.I,
)
_RELATIVE_ROUTINE_EN = re.compile(
    rf"\b(?:my|our) ({_REL})(?: ((?-i:[A-Z])[a-z]+))? (?:usually |always |still )?([a-z]+s)(?: (.{{2,40}}?))? "
    rf"({_EVERY_EN})\b",
    re.I,
)
# the children together: "the boys have swimming every Wednesday", "the kids go to Scouts on
# Fridays" (key `routine:<relation>_<when>`, the relation of one of them)
_CHILDREN_KEYS = {"kids": "child", "children": "child", "boys": "son", "girls": "daughter", "twins": "child"}
_CHILDREN_KEYS |= {"grandkids": "grandchild", "grandchildren": "grandchild"}
_CHILDREN_ROUTINE_EN = re.compile(
    rf"^(?:and |so |oh )?the ({'|'.join(_CHILDREN_KEYS)})(?: both| all)? (?!are\b|were\b)([a-z]+)(?: (.{{2,40}}?))? "
    rf"({_EVERY_EN})\b( after school| before school| after work| in the evenings?)?",
    re.I,
)
_ROUTINE_ZH = re.compile(
    # (a clause that goes on without 我: "…学书法，每个星期三上课")
    r"(?:我(?:们)?|(?<=[，,]))(每天|天天|每周|每个?周末|每个?(?:星期|礼拜)[一二三四五六日天](?:和(?:星期|礼拜)?[一二三四五六日天])?|"
    r"每个?月|平时)"
    r"(早上|上午|中午|下午|傍晚|晚上)?(?:都|一般|经常|会|要)*"
    r"([^" + _ZH_STOP + r"]{2,14}?)(?=[" + _ZH_STOP + r"]|$|呢|啊)"
)


def _routine(clause: str, zh: bool) -> list[SelfFact]:
    if zh:
        m = _ROUTINE_ZH.search(clause)
        if m is None or re.match(r"很|不|没|挺|特别|非常|好|太|有点|吃药|打针", m.group(3)):
            return []
        when = m.group(1) + (m.group(2) or "")
        return [_fact("preference", f"routine:{when}", m.group(3), f"{USER_ZH}{when}{m.group(3)}。", zh=True)]
    # ("wednesdays I go to the allotment": on Wednesdays)
    clause = re.sub(rf"^({_DAYS_EN}s)\b", r"on \1", clause, flags=re.I)
    m = _RELATIVE_ROUTINE_EN.search(clause)
    if m:
        who = " ".join(filter(None, (m.group(1).lower(), m.group(2))))
        when, what = (
            _days_capitalised(m.group(5).lower()),
            f"{m.group(3).lower()} {_third_person(m.group(4) or '')}".strip(),
        )
        key = f"routine:{relation_key(m.group(1))}_{_key_part(when)}"
        return [_fact("preference", key, what, f"{USER_EN}'s {who} {what} {when}.")]
    if m := _CHILDREN_ROUTINE_EN.search(clause):  # "the boys have swimming every Wednesday after school"
        kind, what = m.group(1).lower(), f"{m.group(2).lower()} {_third_person(m.group(3) or '')}".strip()
        when, after = _days_capitalised(m.group(4).lower()), m.group(5) or ""
        key = f"routine:{_CHILDREN_KEYS[kind]}_{_key_part(when)}"
        return [_fact("preference", key, what, f"{USER_EN}'s {kind} {what} {when}{after}.")]
    m = _ROUTINE_EN.search(clause)
    if m is None:
        return []
    verb, what, when = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(6), m.group(4))
    what = _third_person((what or "").strip(" ,"))
    if re.search(r"\b(?:you|your|tablets?|pills?|medicine|medication)\b", what, re.I) or len(what.split()) > 12:
        return []  # (a medicine is read as one)
    said = f"{third_person_verb(verb.lower())} {what}".strip()
    when = _days_capitalised(when.lower())
    return [_fact("preference", f"routine:{_key_part(when.lower())}", said, f"{USER_EN} {said} {when}.")]


def _without_echoed_routines(found: list[SelfFact]) -> list[SelfFact]:
    """A clause's facts without a routine that a taste, plan or medicine of the same clause
    already says ("I drink tea every morning": the taste; "我每天打胰岛素": the medicine)."""
    said = any(f.key.startswith(("taste:", "plan:", "health:medication:")) for f in found)
    return [f for f in found if not (said and f.key.startswith("routine:"))]


def _days_capitalised(text: str) -> str:
    return re.sub(_DAYS_EN, lambda d: d.group(0).capitalize(), text)


def _base_of_gerund(word: str) -> str:
    """ "fixing" → "fix", "making" → "make", "running" → "run", "driving" → "drive"."""
    stem = word.removesuffix("ing")
    if re.search(r"([^aeiou])\1$", stem) and not stem.endswith(("ll", "ss")):
        return stem[:-1]  # running → run
    if re.search(r"[^aeiou][aeiou][^aeiouwxy]$", stem) and not re.search(r"(?:en|er|it|on)$", stem):
        return stem + "e"  # making → make, driving → drive
    return stem


def third_person_verb(verb: str) -> str:
    """ "walk" → "walks", "go" → "goes", "fly" → "flies" (the user's routine said of them)."""
    if re.search(r"(?:ch|sh|ss|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


# A relative's plan: "my granddaughter Sofia starts ballet on Saturday", "(she) starts ballet on
# Saturday" after she was named, "my partner Sam is away in Lisbon until Friday"
# (key `plan:<relation>_<day>`)
_RELATIVE_PLAN_EN = re.compile(
    # ("my daughter Karen's coming over": the name, then "'s")
    rf"\b(?:my|our) ({_REL})(?: ((?-i:[A-Z])[a-z]+))?(?= |'s ) ?"
    # "is getting married", "'s taking me to…", "will visit": any verb in -ing or after "will"
    r"((?:(?:is|'s|will be) (?!not\b|still\b|being\b)[a-z]+ing|will (?!not\b|be\b)[a-z]+|starts|begins|has|"
    r"'s got|goes|flies|visits|comes|arrives|leaves|is away|'s away|is off|'s off|gets married|graduates|"
    r"moves)(?: .+?)??)(?<!\bevery)(?<!\beach) "
    rf"((?:until |till |on |this |next |this coming )?{_DAYS_EN}|"
    rf"tomorrow|tonight|this weekend|next weekend|next week|next month|in {_MONTHS_EN}|"
    r"(?:for|at|over) christmas|on christmas (?:day|eve))\b",
    re.I,
)


def _relative_plan(clause: str, now: datetime.datetime) -> list[SelfFact]:
    m = _RELATIVE_PLAN_EN.search(clause)
    if m is None or len(m.group(3).split()) > 10 or re.search(r"\b(?:you|your)\b", m.group(3), re.I):
        return []
    relation, named, day = m.group(1).lower(), m.group(2) or "", m.group(4).lower()
    # ("expecting our first baby": the user's and theirs)
    what = re.sub(r"\bour\b", "their", _third_person(m.group(3)), flags=re.I)
    what = re.sub(r"^'s ", "is ", re.sub(r"^'s got\b", "has got", what))
    until = re.match(r"(?:until|till) ", day)
    said = _plan_day(day[until.end() :] if until else day, now, zh=False)
    said = re.sub(r"^on ", "until ", said) if until else said
    who = " ".join(filter(None, (relation, named)))
    key = f"plan:{relation_key(relation)}_{_key_part(re.sub(r'^(?:until|till|on) ', '', day))}"
    return [SelfFact("event", key, what, f"{USER_EN}'s {who} {what} {said}.", "en")]


# An engagement that has happened: "Tyler got engaged to his girlfriend Megan" (after "my grandson
# Tyler"), "my son's just got engaged to Priya" (`family:<relation>:engaged`)
_RELATIVE_ENGAGED_EN = re.compile(
    rf"\bmy ({_REL})(?: ((?-i:[A-Z])[a-z]+))?(?: has| 's|'s)?(?: just| finally)? (?:got|gotten|is|became) engaged "
    r"to (?:(?:his|her|their) (?:girlfriend|boyfriend|partner|fiancée?) )?((?-i:[A-Z])[a-z]+)",
    re.I,
)


def _relative_event(clause: str, now: datetime.datetime) -> list[SelfFact]:
    if engaged := _RELATIVE_ENGAGED_EN.search(clause):
        relation, named, partner = engaged.group(1).lower(), engaged.group(2), engaged.group(3)
        who = f"{USER_EN}'s {relation}" + (f" {named}" if named else "")
        said = f"{who} is engaged to {partner}."
        return [_fact("fact", f"family:{relation_key(relation)}:engaged", partner, said)]
    m = _RELATIVE_EVENT_EN.search(clause)
    if m is None:
        return []
    relation, named, what, day_text = (m.group(1), m.group(2), m.group(3), m.group(4)) if m.group(1) else m.groups()[4:]
    month_day = when.month_and_day(day_text)
    # "on the 19th": this month's, or next month's once past
    day = when.next_anniversary(*month_day, now.date()) if month_day else when.resolve_day(f"the {day_text}", now)
    if day is None:
        return []
    date = when.format_date(day, zh=False)
    who = f"{USER_EN}'s {relation.lower()}" + (f" {named}" if named else "")
    event = "wedding" if what.lower() == "married" else what.lower()
    said = (
        f"{who} is getting {what.lower()} on {date}."
        if what.lower() in ("married", "engaged")
        else f"{who}'s {event} is on {date}."
    )
    key = f"plan:{relation_key(relation)}_{_key_part(event)}"
    out = [SelfFact("event", key, event, said, "en")]
    if named:
        rel = relation.lower()
        out.append(_fact("fact", f"family:{relation_key(rel)}", named, f"{USER_EN}'s {rel} is called {named}."))
    return out


def _own_birthday(clause: str, zh: bool) -> list[SelfFact]:
    if zh:
        m = _OWN_BIRTHDAY_ZH.search(clause)
        if m is None:
            return []
        year = int(m.group(3)) if m.group(3) else None
        month, day = when.number(m.group(1) or m.group(4)), when.number(m.group(2) or m.group(5))
        month_day = (month, day) if month and day else None
    else:
        m = _OWN_BIRTHDAY_EN.search(clause)
        if m is None:
            return []
        year = int(m.group(4)) if m.group(4) else None
        feast = m.group(1)
        month_day = _FEAST_DAYS[feast.lower()] if feast else when.month_and_day(m.group(2) or m.group(3))
    if month_day is None:
        return []
    try:
        datetime.date(year or 2000, *month_day)  # (2000: a leap year, 29 February is a day)
    except ValueError:
        return []
    return [_born("birthday", USER_ZH if zh else USER_EN, month_day, year, zh)]


def _pet_breed(clause: str) -> list[SelfFact]:
    """ "I've got a dog called Biscuit, he's a beagle" → `family:dog:breed` beagle (_PET_BREED_EN)."""
    m = _PET_BREED_EN.search(clause)
    if m is None:
        return []
    breed = (m.group(1) or m.group(3) or m.group(5)).lower()
    said_pet = (m.group(2) or m.group(4) or "").lower()
    return [_breed_fact(YOUNG_PETS.get(said_pet, said_pet) or _BREEDS[breed.split()[-1]], breed)]


def _breed_fact(pet: str, breed: str) -> SelfFact:
    """`family:<pet>:breed`: "User's dog is a beagle." """
    return _fact("fact", f"family:{pet}:breed", breed, f"{USER_EN}'s {pet} is a {breed}.")


def _en_more(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = _en_study(clause) + _en_family_life(clause) + _own_birthday(clause, zh=False)
    out += _pet_breed(clause)
    out += _hometown(clause, zh=False) + _death(clause, zh=False) + _relative_event(clause, now)
    out += [] if any(f.key.startswith("plan:") for f in out) else _relative_plan(clause, now)
    out += _routine(clause, zh=False)
    out += _en_work(clause) + _former_job(clause, zh=False) + _twins(clause, now) + _team(clause, zh=False)
    out += _car(clause)
    m = _HOME_EN.search(clause)
    if m:
        place = _clause_end(next(g for g in m.groups() if g))
        place = re.sub(r"\s+(?:now|currently|these days|at the moment|for now)$", "", place, flags=re.I)
        # "in a little bungalow in Harrogate with my cat": the town, not the company or the house
        place = re.sub(r"\s+with (?:my|our|the|a|an|two|three) .*$", "", place, flags=re.I)
        town = re.search(
            rf"^(?:in|near) (?:an?|the|my|our) (?:[\w-]+ ){{0,3}}?(?:{_DWELLINGS}|semi|terrace) "
            r"((?:in|near) (?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)?)$",
            place,
            re.I,
        )
        place = town.group(1) if town else place
        where = re.match(r"(near|outside|just outside|close to|in) ", place, re.I)
        prep = "in"
        if where:  # "near Manchester": the preposition is part of where they live
            prep, place = where.group(1).lower(), place[where.end() :]
        words = place.split()
        plain = re.sub(r"^the ", "", place, flags=re.I)
        if (
            1 <= len(words) <= 6
            and place.lower() not in _NOT_HOMES
            and words[0].lower() not in _NOT_HOMES
            and (
                plain[:1].isupper()
                or re.search(rf"{_PLACE_NOUNS}$", place, re.I)
                or clause.rstrip(" .!").endswith(place)
            )
            and not re.search(r"\b(?:you|your)\b", place, re.I)
        ):
            place = _third_person(place)
            out.append(_fact("fact", "home", place, f"{USER_EN} lives {prep} {place}."))
    out += _own_age(clause, now, zh=False) + _en_ages(clause, now)
    out += _en_health(clause)
    return out


def _en_work(clause: str) -> list[SelfFact]:
    """The occupation, and the workplace when the occupation does not name it already ("I'm
    a nurse and I work at St Mary's")."""
    occupation = _en_occupation(clause)
    if any(re.search(r" (?:at|for|in) ", f.content) for f in occupation):
        return occupation
    return occupation + _en_workplace(clause)


def _en_occupation(clause: str) -> list[SelfFact]:
    m = _OCC_AS_EN.search(clause)
    if m:
        if m.group(2):
            what = _third_person(_clause_end(m.group(2)))
            verb = "works" if m.group(1).lower() == "work" else "worked"
            if verb == "worked" or len(what.split()) > 10:
                return []  # "I worked as a nurse" says what they did, not what they do
            return [_fact("fact", "occupation", what, f"{USER_EN} works as {what}.")]
        if m.group(5):  # a new job
            what = _third_person(_clause_end(m.group(5)))
            return [_fact("fact", "occupation", what, f"{USER_EN} works as {what}.")] if len(what.split()) <= 8 else []
        what = _third_person(_clause_end(m.group(3) or m.group(4)))
        return [_fact("fact", "occupation", what, f"{USER_EN} is {what}.")] if len(what.split()) <= 8 else []
    m = _OCC_EN.search(clause)
    if m:
        what = _third_person(_clause_end(m.group(1)))
        if len(what.split()) <= 10:
            return [_fact("fact", "occupation", what, f"{USER_EN} is {what}.")]
    m = _FOR_A_LIVING_EN.search(clause)
    if m:
        verb = m.group(1).lower()
        what = _third_person(_clause_end(m.group(2)))
        verb = third_person_verb(verb)
        if len(what.split()) <= 8:
            return [_fact("fact", "occupation", what, f"{USER_EN} {verb} {what} for a living.")]
    m = _DRIVE_FOR_EN.search(clause)
    if m:  # "I drive for a delivery firm"
        what = f"{m.group(1).lower()} for {m.group(2)}"
        return [
            _fact("fact", "occupation", what, f"{USER_EN} {third_person_verb(m.group(1).lower())} for {m.group(2)}.")
        ]
    m = _FARM_EN.search(clause)
    if m:  # "I farm sheep up near Oban": User farms sheep near Oban.
        verb = third_person_verb(m.group(1).lower())
        where = f" near {m.group(3)}" if m.group(3) else ""
        return [
            _fact(
                "fact", "occupation", f"{m.group(2).lower()}{where}", f"{USER_EN} {verb} {m.group(2).lower()}{where}."
            )
        ]
    m = _JOB_VERB_EN.search(clause)
    if m:
        verb = third_person_verb(m.group(1).lower())
        what = _third_person(_clause_end(m.group(2)))
        if len(what.split()) <= 8:
            return [_fact("fact", "occupation", what, f"{USER_EN} {verb} {what}.")]
    m = _JOB_IS_EN.search(clause)
    if m:
        what = _third_person(_clause_end(m.group(1)))
        if len(what.split()) <= 8:
            return [_fact("fact", "occupation", what, f"{USER_EN}'s job is {what}.")]
    m = _TEACH_EN.search(clause)
    if m:
        what = _third_person(_clause_end(m.group(1)))
        if what and len(what.split()) <= 8:
            return [_fact("fact", "occupation", what, f"{USER_EN} teaches {what}.")]
    m = _NEW_JOB_AT_EN.search(clause)
    if m:
        what = _third_person(_clause_end(m.group(1)))
        what = re.sub(r",? (?:\w+ )?(?:days?|mornings?|evenings?|nights?|afternoons?|hours?) a week$", "", what)
        if len(what.split()) <= 10:
            return [_fact("fact", "occupation", f"a {what}", f"{USER_EN} has a {what}.")]
    if _RETIRED_EN.search(clause):
        return [_fact("fact", "occupation", "retired", f"{USER_EN} is retired.")]
    return []


# Work given up: "I've stopped working at the library", "I left my job at the bank"
_STOPPED_WORK_EN = re.compile(
    rf"\bI(?:'ve| have)? (?:just )?(?:stopped|finished|quit|left|given up|gave up) "
    rf"(?:working |work |my job )?(at|in|for) "
    rf"(.+?){_STOP_CLAUSE}",
    re.I,
)


# The places of work a person may own and run (and sell or close)
_BUSINESSES = (
    "salon|shop|bakery|cafe|café|restaurant|pub|business|farm|garage|studio|practice|stall|bar|hotel|"
    "boutique|bookshop|barbershop|nursery|surgery|workshop|kiosk|takeaway|deli|guest ?house"
)
# A business of one's own where one works: "I've a little salon in Galway", "I have a bakery in
# Leeds", "I've got my own garage on the high street" (owning and running one is an occupation)
_OWN_BUSINESS_EN = re.compile(
    r"\bI(?:'ve| have)(?: got)? ((?:a|an|my own|my) (?:(?:little|small|tiny|big|new|busy|local) )?"
    r"(?:hair |nail |beauty |flower |book |coffee |corner |farm |tea |antique |charity |vintage )?"
    rf"(?:{_BUSINESSES}|florist'?s?|barber'?s|b&b|bed and breakfast|market stall|food truck|van) "
    rf"(?:(?:in|on|near|at|by) (?!home\b).+?))(?= and |{_STOP_CLAUSE})",
    re.I,
)


# ... given up ("I sold the salon", "we've closed the shop"), and work from home instead ("I'm
# going to work from home doing weddings"): each the workplace now, in place of the old one
_BUSINESS_GONE_EN = re.compile(
    r"\b(?:I|we)(?:'ve| have)? (?:just |finally )?(sold|closed down|shut down|closed|shut|given up|gave up|"
    rf"lost) (the|my|our) ((?:hair |nail |beauty |flower |coffee |corner )?(?:{_BUSINESSES}))\b",
    re.I,
)
_FROM_HOME_EN = re.compile(
    r"\bI(?:'m| am)?(?: now| going to| gonna|'ll| will| now going to)? work(?:ing)? from home"
    rf"(?: now)?(?:,? ((?:doing|making|selling|fixing|teaching|writing|designing) .+?))?(?:{_STOP_CLAUSE})",
    re.I,
)


def _en_workplace(clause: str) -> list[SelfFact]:
    m = _BUSINESS_GONE_EN.search(clause)
    if m:
        verb = {"shut": "closed", "shut down": "closed", "closed down": "closed", "given up": "gave up"}.get(
            m.group(1).lower(), m.group(1).lower()
        )
        whose = "the" if m.group(2).lower() == "the" else "their"
        return [_fact("fact", "workplace", m.group(3), f"{USER_EN} {verb} {whose} {m.group(3).lower()}.")]
    m = _FROM_HOME_EN.search(clause)
    if m:
        doing = f", {_third_person(_clause_end(m.group(1)))}" if m.group(1) else ""
        return [_fact("fact", "workplace", "home", f"{USER_EN} works from home{doing}.")]
    m = _OWN_BUSINESS_EN.search(clause)
    if m:
        what = _third_person(_clause_end(m.group(1)))
        if len(what.split()) <= 8:
            return [_fact("fact", "workplace", what, f"{USER_EN} has {what}.")]
    m = _STARTED_AT_EN.search(clause)
    if m:
        where = _TRAILING_WHEN.sub("", _third_person(_clause_end(m.group(1))))
        out = [_fact("fact", "workplace", where, f"{USER_EN} works at {where}.")] if len(where.split()) <= 8 else []
        if m.group(2):  # "fixing bikes now": the job they do now
            verb = third_person_verb(_base_of_gerund(m.group(2).lower()))
            out.append(_fact("fact", "occupation", m.group(3), f"{USER_EN} {verb} {m.group(3)}."))
        return out
    m = _STOPPED_WORK_EN.search(clause)
    if m:
        where = _TRAILING_WHEN.sub("", _third_person(_clause_end(m.group(2))))
        if len(where.split()) <= 8:
            prep = m.group(1).lower()
            return [_fact("fact", "workplace", where, f"{USER_EN} no longer works {prep} {where}.")]
    m = _WORK_AT_EN.search(clause)
    if m:
        if m.group(2):
            where = _third_person(_clause_end(m.group(2)))
            if len(where.split()) <= 8 and not re.search(r"\b(?:you|your)\b", where, re.I):
                return [_fact("fact", "workplace", where, f"{USER_EN} works {m.group(1).lower()} {where}.")]
            return []
        where = _clause_end(m.group(3))
        return [_fact("fact", "workplace", where, f"{USER_EN} works in {where}.")]
    return []


# The user's own age: "I'm 34", "I am thirty-four years old", "我今年三十四岁", "我34岁了" (as of the
# day it was said; key `age`). Not "I'm 5 minutes away", "我儿子八岁" (a relative's: _en_ages).
_OWN_AGE_EN = re.compile(
    rf"\bI(?:'m| am) (?:now )?(\d{{1,3}}|(?:{when.EN_NUMBER}))(?: years? old| years of age)?(?: now)?"
    r"(?=\s*(?:[.!;,]|$|\band\b|\bbut\b))|"
    # a birthday just passed: "I turned seventy last Thursday", "I just turned 80"
    rf"\bI(?: just| recently|'ve just| have just)? turned (\d{{1,3}}|(?:{when.EN_NUMBER}))\b"
    r"(?! (?:minutes?|hours?|pages?)\b)",
    re.I,
)
_OWN_AGE_ZH = re.compile(
    r"我(?:今年|现在|已经)?(?:都)?(\d{1,3}|[零一二两三四五六七八九十百]{1,4})(?:周)?岁(?!吗)|"
    # "我叫刘国强，今年六十八了": the years alone, at the start of a clause
    r"(?:^|(?<=[，,])|(?<=我))(?:今年|现在)(?:都|已经)?(\d{2,3}|[二三四五六七八九][十][一二三四五六七八九]?|一百(?:零?[一二三四五六七八九十]+)?)"
    r"(?:周岁|岁)?(?:了|(?=[，,。！!]|$))|"
    # a birthday just passed: "我前天过了六十九岁生日", "我上个月刚满七十"
    r"我(?:前天|昨天|上周|上个?星期|上个?月|刚刚?|今天)?(?:刚)?(?:过了|满了|满|刚满)"
    r"(\d{1,3}|[零一二两三四五六七八九十百]{1,4})(?:周)?岁?(?:的)?(?:生日)?(?=$|[" + _ZH_STOP + r"]|了|啦|生日)"
)
# A birthday still to come: "I'm 62 next month", "I turn 80 in March", "I'll be seventy on Sunday",
# "我下个月就62了", "我明年三月满八十岁": one year younger today (the age as of the day said).
_COMING_EN = (
    rf"next (?:week|month|year)|this (?:week|weekend|month)|soon|in (?:a|two|three|\d+) (?:weeks?|months?)|"
    rf"in {when.MONTH_EN}|{when.EN_DAY}"
)
_OWN_AGE_COMING_EN = re.compile(
    rf"\bI(?:'m| am|'ll be| will be| turn| will turn|'m turning| am turning| hit| will hit) "
    rf"(\d{{1,3}}|(?:{when.EN_NUMBER}))(?: years? old)?,? ({_COMING_EN})\b",
    re.I,
)
_OWN_AGE_COMING_ZH = re.compile(
    r"我(?:到)?("
    + when.ZH_DAY
    + r"|下(?:个)?月|下(?:个)?(?:星期|礼拜|周)|明年(?:[一二三四五六七八九十]{1,2}月|\d{1,2}月)?|"
    r"[一二三四五六七八九十]{1,2}月|\d{1,2}月|过几天|马上)(?:份)?(?:就|就要|要|才)?(?:满|到|过)?"
    r"(\d{1,3}|[零一二两三四五六七八九十百]{1,4})(?:周)?(?:岁)?(?:了|啦)?(?=$|[" + _ZH_STOP + r"])"
)


def _coming_day(said: str, now: datetime.datetime, zh: bool) -> str:
    """A coming birthday's day as a date that stays true ("on Sunday" → "on Sunday, 6 December
    2026", "next month" → "in January 2027"); other words as said ("soon", "明年三月")."""
    day = when.resolve_day(said, now)
    if day is not None:
        return f"{when.format_date(day, zh=True, weekday=False)}" if zh else f"on {when.format_date(day, zh=False)}"
    if said in ("next month", "下个月", "下月"):
        month = when.month_start(now.date(), 1)
        return f"{month.year}年{month.month}月" if zh else f"in {when.MONTHS_EN[month.month - 1]} {month.year}"
    return said


def _own_age(clause: str, now: datetime.datetime, zh: bool) -> list[SelfFact]:
    coming = (_OWN_AGE_COMING_ZH if zh else _OWN_AGE_COMING_EN).search(clause)
    m = coming or (_OWN_AGE_ZH if zh else _OWN_AGE_EN).search(clause)
    said = m.group(2 if coming and zh else 1) or next((g for g in m.groups()[1:] if g), None) if m else None
    age = when.number(said) if said else None
    if age is None or not 1 <= age <= 120:
        return []
    date = when.format_date(now.date(), zh=zh, weekday=False)
    if coming:  # one year younger until the birthday said
        said = _coming_day(coming.group(1 if zh else 2), now, zh)
        if zh:
            return [_fact("fact", "age", str(age - 1), f"{USER_ZH}{age - 1}岁（{date}时），{said}满{age}岁。", zh=True)]
        return [_fact("fact", "age", str(age - 1), f"{USER_EN} is {age - 1} (as of {date}) and turns {age} {said}.")]
    if zh:
        return [_fact("fact", "age", str(age), f"{USER_ZH}{age}岁（{date}时）。", zh=True)]
    return [_fact("fact", "age", str(age), f"{USER_EN} is {age} (as of {date}).")]


def _en_ages(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = []
    named = relation = ""
    m = _AGE_TURNS_EN.search(clause) or _ORDINAL_BIRTHDAY_EN.search(clause)
    day = when.resolve_day(m.group(4), now) if m else None
    age = (when.number(m.group(3)) if m.re is _AGE_TURNS_EN else _ordinal(m.group(3))) if m else None
    if m and day is not None and age is not None:
        relation, named = m.group(1).lower(), m.group(2) or ""
        who = f"{relation} {named}" if named else relation
        out.append(
            _fact(
                "fact",
                f"family:{relation_key(relation)}:age",
                str(age),
                f"{USER_EN}'s {who} turns {age} on {when.format_date(day, zh=False)}.",
            )
        )
    # "my son is 8 and my daughter is 5": an age as of today, each (unless a coming birthday said it)
    told = [] if out else [*_AGE_IS_EN.finditer(clause), *_AGE_HAVE_EN.finditer(clause)]
    told += [] if out or told else list(_NAMED_THEN_AGE_EN.finditer(clause))
    for m in told:
        if m.re is _AGE_HAVE_EN:
            age, relation, named = when.number(m.group(1)), m.group(2).lower(), m.group(3) or ""
        else:
            age, relation, named = when.number(m.group(3)), m.group(1).lower(), m.group(2) or ""
        if age is not None and 0 <= age <= 120:
            who = f"{relation} {named}" if named else relation
            out.append(
                _fact(
                    "fact",
                    f"family:{relation_key(relation)}:age",
                    str(age),
                    f"{USER_EN}'s {who} is {age} (as of {when.format_date(now.date(), zh=False, weekday=False)}).",
                )
            )
    m = _BIRTHDAY_EN.search(clause)
    if m:
        relation = (m.group(1) or m.group(4)).lower()
        named = named or m.group(2) or m.group(5) or ""
        month_day = when.month_and_day(m.group(3) or m.group(6))
        year = int(m.group(7)) if m.group(7) else None
        if month_day is not None:
            out.append(_birthday(relation, named, month_day, year, zh=False))
    elif m := _BIRTHDAY_ON_EN.search(clause):
        day = when.resolve_day(m.group("day") or m.group("day2"), now)
        if day is not None:
            relation = (m.group("rel") or m.group("rel2")).lower()
            named = named or m.group("name") or m.group("name2") or ""
            out.append(_birthday(relation, named, (day.month, day.day), None, zh=False))
    if out and named and relation:  # "my daughter Lena turns seven": her name too
        out.insert(
            0, _fact("fact", f"family:{relation_key(relation)}", named, f"{USER_EN}'s {relation} is called {named}.")
        )
    return out


def _ordinal(text: str) -> int | None:
    """ "7th" / "seventh" / "twenty-first" / "fortieth" → the number."""
    t = text.lower()
    if t[:-2].isdigit():
        return int(t[:-2])
    if t in _ORDINALS:
        return _ORDINALS.index(t) + 1
    if t.endswith("ieth"):
        return when.number(t[:-4] + "y")
    tens, _, unit = t.partition("-")
    base = when.number(tens)
    return base + _ORDINALS.index(unit) + 1 if base is not None and unit in _ORDINALS[:9] else None


def _birthday(relation: str, named: str, month_day: tuple[int, int], year: int | None, zh: bool) -> SelfFact:
    who = f"{USER_ZH}的{relation}{named}" if zh else f"{USER_EN}'s {relation} {named}".rstrip()
    return _born(f"family:{relation_key(relation)}:birthday", who, month_day, year, zh)


def _born(key: str, who: str, month_day: tuple[int, int], year: int | None, zh: bool) -> SelfFact:
    """`who`'s birthday, or date of birth with the year: "User's mom's birthday is 3 March.",
    "User was born on 3 May 1961.", "用户的生日是3月24日。"."""
    month, day = month_day
    if zh:
        if year:
            date = when.format_date(datetime.date(year, month, day), zh=True, weekday=False)
            return _fact("fact", key, date, f"{who}出生于{date}。", zh=True)
        date = when.format_month_day(month, day, zh=True)
        return _fact("fact", key, date, f"{who}的生日是{date}。", zh=True)
    if year:
        date = when.format_date(datetime.date(year, month, day), zh=False, weekday=False)
        return _fact("fact", key, date, f"{who} was born on {date}.")
    date = when.format_month_day(month, day, zh=False)
    return _fact("fact", key, date, f"{who}'s birthday is {date}.")


def _items(value: str) -> list[str]:
    # "anything with nuts in (it)": nuts; "to kiwi" (the second of "to X and to Y"): kiwi; "bad
    # allergy" (a remark after the list) is no food
    value = re.sub(
        r"\b(?:anything|something|stuff|food|things) with (.+?) in(?: it| them)?\b", r"\1", value, flags=re.I
    )
    # "grapefruit with his tablets", "cranberry juice because of the warfarin": the food alone
    value = re.sub(
        r"\s+(?:with|because of|on account of|due to|while on|when on) (?:his|her|my|their|the|them|any|all)?\s*"
        r"(?:tablets|pills|medication|medicine|meds|warfarin|statins?|blood thinners?)\b.*$",
        "",
        value,
        flags=re.I,
    )
    items = [re.sub(r"^to ", "", p) for p in _split_objects(_clean_object(value))]
    return [p for p in items if p and p not in _NOT_FOODS and not re.search(r"\ballerg", p)]


def _conditions(statement: re.Pattern[str], names: str, clause: str) -> list[re.Match[str]]:
    """Each condition a statement names: "I have asthma and diabetes", "我有高血压和糖尿病"
    (the first after "I have"/"我有", the others joined to it)."""
    first = statement.search(clause)
    if first is None:
        return []
    more = re.compile(
        rf"(?:,|，|、|\s*and\s*(?:I(?:'ve| have)(?: got)? |I(?:'m| am) (?:also )?)?|\s*as well as\s*|和|还有|以及)\s*"
        rf"(?:type [12] )?({names})",
        re.I,
    )
    found, end = [first], first.end()
    while m := more.match(clause, end):
        found.append(m)
        end = m.end()
    return found


# A relative's home and job: "My daughter Fiona lives in Canada", "She's a nurse in Toronto"
# (after "she" was read as the daughter): `family:<relation>:home`, `family:<relation>:job`
_FAMILY_HOME_EN = re.compile(
    rf"{_RELATIVE_EN} (?:still |now )?(?:lives|is living|'s living|lives now) (?:out |up |down |over )?(in|near) "
    rf"((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)",
    re.I,
)
_FAMILY_JOB_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (an? ((?:[\w-]+ ){{0,2}}?(?:{_OCCUPATIONS_EN}))s?"
    rf"(?: (?:in|at|for) (?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)?)\b",
    re.I,
)


_FAMILY_WORKS_EN = re.compile(
    # ("my son works nights at the hospital": the shift is part of what they do)
    rf"{_RELATIVE_EN} works? ((?:(?:nights|days|lates|earlies|shifts|weekends|part[- ]time|full[- ]time)"
    rf"\s+)?(?:as|at|in|for) .+?|(?:offshore|abroad|overseas|away|from home)\b.*?){_STOP_CLAUSE}",
    re.I,
)
_FAMILY_RUNS_EN = re.compile(
    rf"{_RELATIVE_EN} (runs|owns|manages|drives) ((?:an? |the |his |her |their )?(?:[\w-]+ ){{0,2}}?{_JOB_THINGS})\b",
    re.I,
)
# What a relative studies: "my grandson Liam is studying engineering at Newcastle" (a student's
# `family:<relation>:job`, as "我孙女在北京读大学" is)
_FAMILY_STUDIES_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (?:now |currently |still )?(?:studying|reading|doing a degree in|doing a course in) "
    r"(?!(?:hard|well|a lot|late|for|now|again|abroad|tonight|today|at|in|with|from)\b)((?:[\w-]+ ){0,2}?[\w-]+)"
    # ("at Newcastle", "at college in Columbus", "at uni in Leeds": the town)
    r"(?: (?:at |(?:up |down |over )?(?=in ))((?:(?:college|uni|university|school) )?(?:in )?(?:the )?"
    r"(?:[A-Za-z][\w-]+(?: (?-i:[A-Z])[\w-]+)?)))?"
    r"(?=\s*(?:[.!?,;]|$|\b(?:and|but|now|these days)\b))",
    re.I,
)
# What a relative likes: "my wife Sheila loves gardening", "my grandson is mad about dinosaurs",
# "我老伴喜欢跳广场舞" (`family:<relation>:likes`, a new one supersedes)
_FAMILY_LIKES_EN = re.compile(
    rf"{_RELATIVE_EN} (?:really |absolutely |just )?(?:loves|likes|enjoys|adores|is into|'s into|is mad about|"
    r"'s mad about|is crazy about|'s crazy about|is obsessed with|'s obsessed with) "
    rf"(?!(?:me|you|him|her|it|them|us|this|that)\b)(.+?){_STOP_CLAUSE}",
    re.I,
)
# Which school year a child or grandchild is in: "我儿子叫刘洋，今年上高三", "my son is in year 10"
# (`family:<relation>:school`)
_FAMILY_SCHOOL_ZH = re.compile(
    r"我(?:的|家)?("
    + ZH_RELATIONS
    + r")(?:叫["
    + CJK_IDEOGRAPHS
    + r"]{1,4}[，,]|"
    + _zh_kin_name("school_name")
    + r")?(?:今年|现在|目前)?(?:在)?(?:上|读|念)"
    r"(?P<year>(?:小学)?[一二三四五六]年级|初[一二三]|高[一二三]|大[一二三四]|小学|初中|高中|大学|研究生|幼儿园)"
)
_FAMILY_SCHOOL_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (?:now |just )?(in (?:year|grade) \d{{1,2}}|"
    r"in (?:the )?(?:first|second|third|fourth|fifth|"
    r"sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\d{1,2}(?:st|nd|rd|th)) grade|in (?:reception|nursery|"
    r"primary school|secondary school|high school|sixth form|middle school|kindergarten))\b",
    re.I,
)
_FAMILY_LIKES_ZH = re.compile(
    r"我(?:的|家)?(" + ZH_RELATIONS + r")(?:叫[" + CJK_IDEOGRAPHS + r"]{1,4}[，,])?(?:特别|很|最|可|就)?(?:喜欢|爱)"
    r"(?!我|你|他|她)([^" + _ZH_STOP + r"吗呢]{2,12})(?=[" + _ZH_STOP + r"]|$|了)"
)


# A relative gone to live elsewhere: "Mike took a job in Portland and he's already moved up there",
# "my daughter has moved to Leeds" (their `family:<relation>:home`, the new one replacing the old)
_FAMILY_MOVED_EN = re.compile(
    rf"\bmy ({_REL})(?: ((?-i:[A-Z])[a-z]+))?(?: has| 's|'s)?(?: just| now| finally)? "
    r"(?:moved|relocated|took a job|got a job|has taken a job|is moving) (?:up |down |over |out |back )?(?:to|in) "
    r"((?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)",
    re.I,
)


def _en_family_life(clause: str) -> list[SelfFact]:
    """Where a relative lives and what they do (_FAMILY_HOME_EN, _FAMILY_JOB_EN)."""
    out: list[SelfFact] = []
    for m in _FAMILY_MOVED_EN.finditer(clause):
        relation = relation_key(m.group(1))
        who = " ".join(filter(None, (m.group(1).lower(), m.group(2))))
        out.append(
            _fact("fact", f"family:{relation}:home", m.group(3), f"{USER_EN}'s {who} lives in {m.group(3)} now.")
        )
    for m in _FAMILY_HOME_EN.finditer(clause):
        relation = relation_key(m.group(1))
        who = " ".join(filter(None, (m.group(1).lower(), m.group(2))))
        content = f"{USER_EN}'s {who} lives {m.group(3).lower()} {m.group(4)}."
        out.append(_fact("fact", f"family:{relation}:home", m.group(4), content))
    for m in _FAMILY_JOB_EN.finditer(clause):
        relation = relation_key(m.group(1))
        who = " ".join(filter(None, (m.group(1).lower(), m.group(2))))
        out.append(_fact("fact", f"family:{relation}:job", m.group(4), f"{USER_EN}'s {who} is {m.group(3)}."))
    works = None if out else _FAMILY_WORKS_EN.search(clause)
    if works:  # "my son Andriy works as a software developer in Berlin"
        relation = relation_key(works.group(1))
        who = " ".join(filter(None, (works.group(1).lower(), works.group(2))))
        what = _third_person(_clause_end(works.group(3)))
        if len(what.split()) <= 10:
            out.append(_fact("fact", f"family:{relation}:job", what, f"{USER_EN}'s {who} works {what}."))
    # "…and my dad runs a garage": a job by what they run, for a relative whose job is not read yet
    for runs in _FAMILY_RUNS_EN.finditer(clause):
        relation = relation_key(runs.group(1))
        if any(f.key == f"family:{relation}:job" for f in out):
            continue
        who = " ".join(filter(None, (runs.group(1).lower(), runs.group(2))))
        what = f"{runs.group(3).lower()} {_third_person(_clause_end(runs.group(4)))}"
        out.append(_fact("fact", f"family:{relation}:job", what, f"{USER_EN}'s {who} {what}."))
    if not works and (studies := _FAMILY_STUDIES_EN.search(clause)):
        relation = relation_key(studies.group(1))
        who = " ".join(filter(None, (studies.group(1).lower(), studies.group(2))))
        # "at Newcastle", "at college in Columbus", "up in Flagstaff"
        kind, in_town, town = re.fullmatch(
            r"(?:(college|uni|university|school) )?(in )?(.*)", studies.group(4) or "", re.I
        ).groups()  # type: ignore[union-attr]
        if town and town.islower() and town not in ("uni", "university", "college", "the uni", "the university"):
            town = town.title()  # ("at newcastle": a place, as written lowercase)
        where = (
            f" at {kind.lower()} in {town}"
            if kind and in_town
            else f" in {town}"
            if in_town
            else f" at {town}"
            if town
            else ""
        )
        content = f"{USER_EN}'s {who} is studying {studies.group(3)}{where}."
        out.append(_fact("fact", f"family:{relation}:job", studies.group(3) + where, content))
    if school := _FAMILY_SCHOOL_EN.search(clause):
        relation = relation_key(school.group(1))
        who = " ".join(filter(None, (school.group(1).lower(), school.group(2))))
        out.append(
            _fact("fact", f"family:{relation}:school", school.group(3), f"{USER_EN}'s {who} is {school.group(3)}.")
        )
    likes = _FAMILY_LIKES_EN.search(clause)
    if likes and len(likes.group(3).split()) <= 6:
        relation = relation_key(likes.group(1))
        who = " ".join(filter(None, (likes.group(1).lower(), likes.group(2))))
        what = _third_person(likes.group(3))
        out.append(_fact("fact", f"family:{relation}:likes", what, f"{USER_EN}'s {who} likes {what}."))
    return out


# An operation (or a stroke, a fall) a household member had: "my husband Ken had a hip operation
# last week", "my mum's just had her knee replaced", "my husband had a stroke last year"
# (`health:event:<what>:<relation>`; when is not kept: "last week" would be wrong when read later)
_FAMILY_HEALTH_EVENT_EN = re.compile(
    rf"{_RELATIVE_EN}(?: has|'s)? (?:just |recently |only just )?had (?:an? |his |her |their |major |minor |big )*"
    r"((?:[a-z]+ ){0,2}?(?:operation|surgery|op|replacement|transplant|bypass)|stroke|(?:mild |minor |bad )?"
    r"(?:heart attack|fall))\b|"
    rf"{_RELATIVE_EN}(?: has|'s)? (?:just |recently |only just )?had (?:his|her|their) "
    r"(hips?|knees?|shoulders?|cataracts?|gallbladder|appendix|tonsils) (replaced|done|removed|out)\b",
    re.I,
)


# ... a bone broken, and a stay in hospital: "my wife Pat is in hospital with a broken hip", "my
# husband broke his wrist", "my mum's in hospital with pneumonia"
_FAMILY_HOSPITAL_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s) (?:still |now )?in (?:the )?hospital with (?:an? |his |her |their )?"
    r"((?:broken|fractured) [a-z]+|pneumonia|covid|an infection|infection|chest infection|a chest infection|"
    r"sepsis|(?:a )?stroke|(?:a )?heart attack)\b|"
    rf"{_RELATIVE_EN} (?:has |'s )?(?:just )?(?:broke|broken|fractured) (his|her|their) "
    r"(hip|leg|arm|wrist|ankle|collarbone|shoulder|pelvis|knee)\b|"
    rf"{_RELATIVE_EN} (?:came|got|is|'s|has come|'s come) (?:back )?(home) from (?:the )?hospital\b",
    re.I,
)


def _family_health_event(clause: str) -> list[SelfFact]:
    out: list[SelfFact] = []
    for m in _FAMILY_HOSPITAL_EN.finditer(clause):
        said = (m.group(1) or m.group(4) or m.group(8)).lower()
        who = " ".join(filter(None, (said, m.group(2) or m.group(5) or m.group(9))))
        if m.group(10):
            what = "home from hospital"
            content = f"{USER_EN}'s {who} came home from hospital."
        elif m.group(3):
            what = re.sub(r"^(?:an?|a) ", "", m.group(3).lower()).replace("fractured", "broken")
            # (as what stays true when they are home again)
            content = f"{USER_EN}'s {who} went into hospital with {_a_or_not(what)}."
        else:
            what = f"broken {m.group(7).lower()}"
            content = f"{USER_EN}'s {who} broke {m.group(6).lower()} {m.group(7).lower()}."
        out.append(_fact("fact", f"health:event:{_key_part(what)}:{relation_key(said)}", what, content))
    for m in _FAMILY_HEALTH_EVENT_EN.finditer(clause):
        said = (m.group(1) or m.group(4)).lower()
        relation = relation_key(said)
        who = " ".join(filter(None, (said, m.group(2) or m.group(5))))
        if m.group(3):
            what = m.group(3).lower()
        else:
            part, done = m.group(6).lower(), m.group(7).lower()
            what = (
                f"{part} replacement"
                if done == "replaced"
                else f"{part} operation"
                if done == "done"
                else f"{part} removed"
            )
        had = (
            what
            if what.endswith("surgery")
            else f"their {what}"
            if what.endswith("removed")
            else f"{'an' if what[0] in 'aeiou' else 'a'} {what}"
        )
        content = f"{USER_EN}'s {who} had {had}."
        out.append(_fact("fact", f"health:event:{_key_part(what)}:{relation}", what, content))
    return out


def _a_or_not(what: str) -> str:
    """ "a broken hip", "pneumonia", "an infection"."""
    if what.startswith("broken ") or what in ("stroke", "heart attack", "chest infection"):
        return f"a {what}"
    return f"an {what}" if what == "infection" else what


def _en_family_health(clause: str) -> list[SelfFact]:
    """A household member's allergies, foods they cannot eat (_FAMILY_ALLERGY_EN) and health
    conditions ("my mum is coeliac": `health:condition:coeliac:mother`, which rules gluten out
    of the household's suggestions as an allergy does)."""
    out: list[SelfFact] = _family_health_event(clause)
    for m in _FAMILY_MED_EN.finditer(clause):  # "my mum takes donepezil every evening"
        what = _third_person(_clause_end(m.group(5)))
        known = health.named_in(health.MEDICATIONS, what)
        if (known is not None or re.search(_MED_WORDS, what, re.I)) and len(what.split()) <= 10:
            relation = relation_key(m.group(1))
            key = known.key if known is not None else re.sub(r"\s+", "_", what.lower())[:60]
            who = " ".join(filter(None, (relation, m.group(2))))
            verb = m.group(3) or "is on"
            out.append(_fact("fact", f"health:medication:{key}:{relation}", what, f"{USER_EN}'s {who} {verb} {what}."))
    for m in _FAMILY_CONDITION_EN.finditer(clause):
        found = health.find(health.CONDITIONS, m.group(3) or m.group(6))
        if found is None or found.key == "pregnancy":
            continue
        relation = relation_key(m.group(1) or m.group(4))
        who = " ".join(filter(None, (relation, m.group(2) or m.group(5))))
        content = f"{USER_EN}'s {who} has {found.en[0]}."
        out.append(_fact("fact", f"health:condition:{found.key}:{relation}", found.en[0], content))
    for m in _FAMILY_ALLERGY_EN.finditer(clause):
        relation = relation_key(m.group(1) or m.group(4))
        who = " ".join(filter(None, (relation, m.group(2) or m.group(5))))  # "son Oliver"
        for thing in _items(_third_person(m.group(3) or m.group(6))):
            if len(thing.split()) > 4 or thing in ("what", "anything", "nothing"):
                continue
            known = health.find(health.ALLERGENS, thing)
            if m.group(6) and known is not None:
                thing = known.en[0]  # "a nut allergy": allergic to "tree nuts"
            key = health.canonical_key(health.ALLERGENS, thing)
            content = f"{USER_EN}'s {who} is allergic to {thing}."
            out.append(_fact("fact", f"health:allergy:{key}:{relation}", thing, content))
    for m in _HOUSE_FREE_EN.finditer(clause):
        known = health.find(health.ALLERGENS, next(g for g in m.groups() if g))
        if known is not None:
            content = f"{USER_EN}'s home is kept free of {known.en[0]}."
            out.append(_fact("fact", f"health:avoid:{known.key}:household", known.en[0], content))
    for m in _FAMILY_AVOID_EN.finditer(clause):
        relation, verb = relation_key(m.group(1)), m.group(3).lower()
        who = " ".join(filter(None, (relation, m.group(2))))
        for thing in _items(_third_person(m.group(4))):
            if len(thing.split()) <= 4:
                key = health.canonical_key(health.ALLERGENS, thing)
                content = f"{USER_EN}'s {who} cannot {verb} {thing}."
                out.append(_fact("fact", f"health:avoid:{key}:{relation}", thing, content))
    return out


def _diet_facts(said: str, zh: bool, relation: str = "", who: str = "") -> list[SelfFact]:
    """A diet's facts: one `health:avoid:<food>` per food it leaves out ("I'm vegan": meat,
    milk, eggs), so the guard and "what can't I eat?" read them as any food the user avoids;
    each says the whole diet ("User is vegan: no meat, fish, dairy or eggs."). A relative's
    (`relation`, said as `who`: "sister Yasmin") is `health:avoid:<food>:<relation>`."""
    diet = next((d for d in health.DIETS if said.lower() in d.en or said in d.zh), None)
    if diet is None:
        return []
    said = {"halal": "Muslim"}.get(diet.key, diet.en[0])  # (a faith is written with its capital)
    whose = f"{USER_EN}'s {who}" if relation else USER_EN
    content = f"{USER_ZH}{diet.said_zh}。" if zh else f"{whose} is {said}: {diet.said_en}."
    out = []
    for key in diet.leaves_out:
        food = health.term(health.ALLERGENS, key)
        full_key = f"health:avoid:{key}:{relation_key(relation)}" if relation else f"health:avoid:{key}"
        out.append(_fact("fact", full_key, food.name(zh) if food else key, content, zh=zh))
    return out


# a relative's diet: "my sister Yasmin is vegetarian", "she's vegan" (after her)
_FAMILY_DIET_EN = re.compile(
    rf"{_RELATIVE_EN}(?: is|'s)(?: now| also| actually| still)? (?:(?:a|strictly|strict|lifelong|full)\s)*"
    rf"({_DIET_NAMES_EN})\b",
    re.I,
)


# An allergy said by what it does, not by the word: "tree nuts would kill me", "eggs are a no-go
# for me, I swell right up", "shellfish makes me ill", "I carry an EpiPen for peanuts"; every
# allergen the clause names (from the health table) is the user's (not a relative's clause)
_ALLERGY_CUE_EN = re.compile(
    r"\b(?:would|will|could|might) kill me\b|\bno-?go\b|\bepi-?pen\b|\bswell(?:s|ed)? (?:right )?up\b|"
    r"\b(?:blew|blow|blows|puffed|puff|puffs) (?:right )?up\b|"
    r"\banaphyla|\bhives\b|\bmakes? me (?:really |very |so )?(?:ill|sick|poorly|swell)\b|\bI react (?:badly )?to\b|"
    r"\bI can(?:'t| ?not) (?:have|touch|go near)\b|\bI'?m (?:deathly |severely |really )?allergic\b",
    re.I,
)


_MOSTLY_INTOLERANCES = frozenset(("milk", "gluten", "wheat"))


def _allergy_by_cue(clause: str) -> list[SelfFact]:
    if not _ALLERGY_CUE_EN.search(clause) or re.search(rf"\b(?:my|our) (?:{_REL})\b", clause, re.I):
        return []
    out: list[SelfFact] = []
    rest = clause
    # "I can't have dairy" (no sign of an allergy: swelling, an EpiPen…) is mostly an intolerance
    merely_cannot = not re.search(r"kill|no-?go|epi-?pen|swell|anaphyla|hives|react|allergic", clause, re.I)
    while (found := health.named_in(health.ALLERGENS, rest)) is not None:
        key, thing = found.key, found.en[0]
        if key in health.NOT_ALLERGIES or (merely_cannot and key in _MOSTLY_INTOLERANCES):  # (left out all the same)
            out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_EN} cannot have {thing}."))
        else:
            out.append(_fact("fact", f"health:allergy:{key}", thing, f"{USER_EN} is allergic to {thing}."))
        rest = re.sub("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in found.en), " ", rest, flags=re.I)
    return out


def _en_health(clause: str) -> list[SelfFact]:
    out: list[SelfFact] = _en_family_health(clause)
    if not _ALLERGY_EN.search(clause):
        out += _allergy_by_cue(clause)
    for m in _ALLERGY_EN.finditer(clause):
        said = m.group(1) or m.group(2) or m.group(3)
        for thing in _items(_third_person(said)):
            if len(thing.split()) > 4 or thing in ("what", "anything", "nothing") or _NOT_AN_ALLERGEN.search(thing):
                continue
            key = health.canonical_key(health.ALLERGENS, thing)
            known = health.find(health.ALLERGENS, thing)
            if m.group(2) and known is not None:
                thing = known.en[0]  # "a nut allergy": allergic to "tree nuts", not to "nut"
            out.append(_fact("fact", f"health:allergy:{key}", thing, f"{USER_EN} is allergic to {thing}."))
    avoid = _AVOID_EN.search(clause)
    if avoid:
        verb = avoid.group(2).lower()
        for thing in _items(_third_person(avoid.group(3))):
            # "I can't have gluten, coeliac since I was a lad": the condition is read as one
            if len(thing.split()) <= 4 and not health.named_in(health.CONDITIONS, thing):
                key = health.canonical_key(health.ALLERGENS, thing)
                out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_EN} cannot {verb} {thing}."))
    for dont in [] if avoid else _DONT_EAT_EN.finditer(clause):
        said = (dont.group(1) or dont.group(3) or "").lower()
        for thing in _items(_third_person(dont.group(2) or dont.group(4))):
            verb = said or ("drink" if health.is_drink(thing) else "eat")  # ("no alcohol for me")
            if health.known_food(thing):
                key = health.canonical_key(health.ALLERGENS, thing)
                out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_EN} does not {verb} {thing}."))
    if _NO_ALCOHOL_EN.search(clause):
        out.append(_fact("fact", "health:avoid:alcohol", "alcohol", f"{USER_EN} does not drink alcohol."))
    diet = _DIET_EN.search(clause)
    if diet:
        out += _diet_facts(diet.group(1) or diet.group(2) or diet.group(3), zh=False)
    for theirs in _FAMILY_DIET_EN.finditer(clause):
        who = " ".join(filter(None, (theirs.group(1).lower(), theirs.group(2))))
        out += _diet_facts(theirs.group(3), zh=False, relation=theirs.group(1), who=who)
    more = _AVOID_MORE_EN.search(clause)
    if more and more.group(5) and health.known_food(more.group(5)):
        more = None  # ("no pork for me": a known food, read as "I don't eat" below)
    if more and not avoid:
        said = more.group(1) or more.group(2) or more.group(3) or more.group(4) or more.group(5)
        for thing in _items(_third_person(said)):
            if len(thing.split()) <= 4 and not health.find(health.CONDITIONS, f"{thing} intolerance"):
                key = health.canonical_key(health.ALLERGENS, thing)
                verb = "drink" if health.is_drink(thing) else "eat"  # ("no cranberry juice for me")
                out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_EN} cannot {verb} {thing}."))
    for m in _conditions(_CONDITION_EN, _CONDITION_NAMES_EN, clause):
        found = health.find(health.CONDITIONS, m.group(1) or m.group(2))
        if found is None:
            continue
        name = found.en[0]
        content = f"{USER_EN} is pregnant." if found.key == "pregnancy" else f"{USER_EN} has {name}."
        out.append(
            _fact("fact", f"health:condition:{found.key}", name if found.key != "pregnancy" else "pregnant", content)
        )
    stopped = _MED_STOPPED_EN.search(clause)
    if stopped:
        said = stopped.group(1) or stopped.group(2) or stopped.group(3)
        # (the new one after it: "took me off the warfarin, I'm on Eliquis now")
        said = re.split(r",\s*(?=I\b|I'm\b)", said)[0]
        said_name = _clause_end(said)
        core = re.sub(r"^(?:their|my|some|a|an|the) ", "", _third_person(said_name), flags=re.I)
        known = health.find(health.MEDICATIONS, core)
        if known is not None or re.search(_MED_WORDS, core, re.I):
            key = known.key if known is not None else re.sub(r"\s+", "_", core.lower())[:60]
            # (the medicine's own key: "User no longer takes aspirin." is what is true of it now)
            out.append(_fact("fact", f"health:medication:{key}", core, f"{USER_EN} no longer takes {core}."))
            rest = clause[clause.find(said) + len(said) :]
            if not _MED_EN.search(rest):
                return out
            clause = rest
    med = _MED_EN.search(clause)
    if med:
        verb = (med.group(1) or med.group(3) or med.group(5)).lower()
        what = _third_person(_clause_end(med.group(2) or med.group(4) or med.group(6)))
        if len(what.split()) > 10:  # ("…first thing in the morning, half an hour before breakfast")
            what = re.split(r",|\s+and (?=the |my |their |then |I\b)", what)[0].strip()
        parts = _MED_SPLIT.match(what)
        name = parts.group(1) if parts else what
        often = parts.group(2) if parts else None
        core = re.sub(r"^(?:their|my|some|a|an|the) ", "", name, flags=re.I)
        known = health.find(health.MEDICATIONS, core) or health.named_in(health.MEDICATIONS, what)
        if verb == "on" and known is None and not re.search(_MED_WORDS, name, re.I):
            pass  # "I'm on holiday"
        elif (
            known is not None
            or re.search(_MED_WORDS, name, re.I)
            or (often and len(core.split()) == 1 and not _NOT_MEDS.match(name))
        ):
            if len(what.split()) <= 10:
                key = known.key if known is not None else re.sub(r"\s+", "_", core.lower())[:60]
                said = {"take": "takes", "taking": "takes", "use": "uses", "need": "needs", "on": "is on"}[verb]
                out.append(_fact("fact", f"health:medication:{key}", core, f"{USER_EN} {said} {what}."))
    return out


_OCCUPATIONS_ZH = (
    "老师|教师|医生|大夫|护士|工程师|程序员|司机|律师|会计师|会计|厨师|警察|学生|大学生|研究生|博士生|设计师|销售|经理|"
    "教授|记者|农民|工人|作家|画家|演员|歌手|秘书|店主|老板|服务员|保安|快递员|外卖员|公务员|研究员|科学家|建筑师|"
    "药剂师|牙医|兽医|飞行员|消防员|军人|电工|木匠|理发师|翻译|编辑|主播|导游|保姆|清洁工|家庭主妇|全职妈妈|"
    "自由职业者|个体户|老板娘|园丁|裁缝|模特|舞蹈家|音乐家|摄影师|律师助理|实习生|校长|主任|总监|创始人|"
    "护士长|院长|科长|处长|店长|厂长|主管|客服|收银员|营业员|保洁|护工|月嫂|水管工|焊工|机械师|技术员|"
    "分析师|顾问|银行职员|职员|文员|助理|前台|教练|心理咨询师|社工|志愿者|退休教师|退休工人"
)
_ZH_TEXT = r"[^" + _ZH_STOP + r"]"
# where the user is from (`_hometown`)
_HOMETOWN_ZH = re.compile(
    r"(?:我(?:的)?|^)老家(?:是|在)(" + _ZH_TEXT + r"{1,8}?)(?:的|人)?(?=[，,。！!？?]|$)|"
    # "我是哈尔滨人", "我是印度人，从浦那来的" (not 好人, 病人, 退休的人)
    r"我(?:是|本来是|其实是)(?!好|坏|老|病|男|女|大|小|穷|有钱|普通|退休|家里|一个|外地|本地|个|一|什么|哪)("
    + _ZH_TEXT
    + r"{2,6}?)人(?=[，,。！!？?]|$)|"
    # ("我是从成都搬过来的", "我去年刚从成都搬来")
    r"(?:我(?:是)?|^|(?<=[，,]))(?:去年|前年|上个月|几年前)?(?:刚|才)?从(" + _ZH_TEXT + r"{2,8}?)"
    r"(?:(?:搬|调|嫁)(?:过|到这儿|到这里)?来(?:的|了)?|来的)|"
    r"我(?:是)?在(" + _ZH_TEXT + r"{1,8}?)(?:长大|出生)的?|我出生在(" + _ZH_TEXT + r"{1,8}?)(?=[，,。！!？?]|$)"
)
_OCC_ZH = [
    # 我在医院当护士 / 我在博世做工程师
    (re.compile(r"我(?:现在|目前)?在(" + _ZH_TEXT + r"{1,12}?)(当|做|担任|开)(" + _ZH_TEXT + r"{1,10})"), "at"),
    # "我上个月已经从港口调到机场做调度了": the new post
    (
        re.compile(
            r"我(?:[^，,。]{0,10})?(?:调到|换到|转到)("
            + _ZH_TEXT
            + r"{1,10}?)(当|做|干)("
            + _ZH_TEXT
            + r"{1,8}?)(?:了|$|["
            + _ZH_STOP
            + r"])"
        ),
        "at",
    ),
    (re.compile(r"我的(?:工作|职业)(?:是|就是)(" + _ZH_TEXT + r"{1,14})"), "job"),
    (re.compile(r"我(?:现在|目前)?是做(" + _ZH_TEXT + r"{1,10}?)的"), "do"),
    (
        re.compile(
            r"我(?:现在|目前)?是(?:一名|一位|一个|个|名|位)?((?![你他她])"
            + _ZH_TEXT
            + r"{0,8}?(?:"
            + _OCCUPATIONS_ZH
            + r"))"
            r"(?=[" + _ZH_STOP + r"]|$|啊|呀|哦|呢)"
        ),
        "is",
    ),
    (re.compile(r"我(?:现在|目前)?(?:在)?教(?![你他她])(" + _ZH_TEXT + r"{1,10})"), "teach"),
    # "我在上海教西班牙语": where, then what
    (re.compile(r"我(?:现在|目前)?在(" + _ZH_TEXT + r"{1,8}?)教(?![你他她])(" + _ZH_TEXT + r"{1,10})"), "teach at"),
    (re.compile(r"我(?:现在|目前)?(?:做|从事)(" + _ZH_TEXT + r"{1,8}?)(?:工作|行业)"), "work"),
    (
        re.compile(
            r"我(?:现在|目前)?(?:当|做)(?:了)?("
            + _ZH_TEXT
            + r"{0,6}?(?:"
            + _OCCUPATIONS_ZH
            + r"))(?:的)?(?=["
            + _ZH_STOP
            + r"]|$)"
        ),
        "is",
    ),
    (re.compile(r"我(?:现在|已经|早就|都)?(?:已经)?退休(?:了)?"), "retired"),
]
_WORK_AT_ZH = re.compile(
    r"我(?:现在|目前)?在(?!家|想|找|忙|准备|考虑|换|等|努力|认真|好好)(" + _ZH_TEXT + r"{1,12}?)(?:工作|上班)"
)
_HOME_ZH = re.compile(
    r"(?:我(?:们)?|^|(?<=[，,]))(?:和[^，,。]{1,4})?(?:现在|目前|去年|今年|上个?月|上周|最近|前年)?(?:一个人|自己)?(?:已经)?"
    r"(?:(?:跟|和)[^，,。]{1,6}?(?:一起)?)?(?:住在|家住在|家住|定居在|(?:刚)?搬到了?|家在|嫁到了?)("
    + _ZH_TEXT
    + r"{1,12}?)"
    r"(?=来了|去了|[，,。！!？?]|$)|"
    # "已经在昆明住了五年了"
    r"(?:我|^|(?<=[，,]))(?:不过|现在|已经|都)*在(" + _ZH_TEXT + r"{1,8}?)住了"
)
_NOT_HOME_ZH = re.compile(r"哪|什么|一起|装修|附近吗|吃|做|看|玩|养|^这|^那")
_ZREL = r"(" + ZH_RELATIONS + r")"
_ZH_AGE = re.compile(
    r"我(?:的)?" + _ZREL + r"([" + CJK_IDEOGRAPHS + r"]{1,3}?)??"
    r"(今年|现在|已经|" + when.ZH_DAY + r")?(?:就|要|会|将|快)?(满|过|是)?(" + when.ZH_NUMBER + r")(?:周)?岁"
)
# (see _NAMED_THEN_AGE_EN)
_NAMED_THEN_AGE_ZH = re.compile(
    r"我(?:的)?" + _ZREL + r"(?:叫|名字叫)([" + CJK_IDEOGRAPHS + r"]{1,3})[，,、]\s*(?:她|他)?(?:今年|现在)?"
    r"(" + when.ZH_NUMBER + r")(?:周)?岁"
)
_NOT_ZH_NAMES = re.compile(
    r"^(?:明年|去年|今年|马上|快要|已经|现在|下个|刚|才|都|也|还|今天|明天|后天|下周|这周|本周|周|星期|礼拜|满|过|要)"
)
_ZH_BIRTHDAY = re.compile(
    r"我(?:的)?" + _ZREL + r"([" + CJK_IDEOGRAPHS + r"]{1,3}?)??的?生日(?:是|在)(?:在)?"
    r"((?:" + when.ZH_NUMBER + r")月(?:" + when.ZH_NUMBER + r")(?:日|号))|"
    r"我(?:的)?" + _ZREL + r"([" + CJK_IDEOGRAPHS + r"]{1,3}?)??(?:是|在)?(\d{4})年"
    r"((?:" + when.ZH_NUMBER + r")月(?:" + when.ZH_NUMBER + r")(?:日|号))(?:出生|生)|"
    # "我外孙女叫乐乐，下周三过生日", "我妈妈下个月十二号过生日": the day it falls on
    r"我(?:的)?" + _ZREL + r"(?:叫)?([" + CJK_IDEOGRAPHS + r"]{1,3}?)??[，,]?(?:在)?"
    r"(" + when.ZH_DAY + r"|(?:下个?月|这个?月|本月)?(?:" + when.ZH_NUMBER + r")(?:日|号))过生日"
)
_ALLERGY_ZH = re.compile(
    r"我(?:自己|本人)?(?:对|有)?((?!什么|啥|你|他|她|点|一点|自己)[^"
    + _ZH_STOP
    + r"不没对有]{1,10}?)(?:严重)?过敏(?!吗)"
)
# "我儿子对花生过敏", "我女儿朵朵对花生过敏", "我老婆海鲜过敏", "我爸爸不能吃虾" (see _FAMILY_ALLERGY_EN)
_FAMILY_ALLERGY_ZH = re.compile(
    r"我(?:的|家(?:的)?)?(" + ZH_RELATIONS + r")([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,4}?)?(?:对|有)"
    r"((?!什么|啥|你|他|她|点|一点)[^" + _ZH_STOP + r"不没对有]{1,10}?)(?:严重)?过敏(?!吗)|"
    r"我(?:的|家(?:的)?)?("
    + ZH_RELATIONS
    + r")((?!什么|啥|对|有)[^"
    + _ZH_STOP
    + r"不没对有]{1,10}?)(?:严重)?过敏(?!吗)"
)
_FAMILY_AVOID_ZH = re.compile(
    r"我(?:的|家(?:的)?)?("
    + ZH_RELATIONS
    + r")(?:不能|不可以|吃不了|喝不了|碰不了)(吃|喝|碰)?([^"
    + _ZH_STOP
    + r"]{1,8})"
)
_AVOID_ZH = re.compile(r"我(?:不能|不可以|不宜|吃不了|喝不了|碰不了|不敢)(吃|喝|碰)?(" + _ZH_TEXT + r"{1,8})")
# "我吃素", "我是素食者", "我一直吃纯素" (not "我不吃素": 不 is no adverb here)
_DIET_NAMES_ZH = "|".join(sorted((re.escape(n) for d in health.DIETS for n in d.zh), key=len, reverse=True))
_DIET_ZH = re.compile(r"我(?:现在|一直|已经|也|平时|从小)?(?:是|开始)?(?:个|一个|一名)?(" + _DIET_NAMES_ZH + r")")
# "我不吃辣", "我从来不吃猪肉": a safety fact only when the tables know the food (as _DONT_EAT_EN)
_DONT_EAT_ZH = re.compile(
    r"我(?:从来|一直|平时|现在|已经)?(?:不|从不|从来不)(吃|喝)(?!的)("
    + _ZH_TEXT
    + r"{1,8}?)(?:了)?(?=["
    + _ZH_STOP
    + r"]|$|了)"
)
_CONDITION_NAMES_ZH = health.names_pattern(health.CONDITIONS, zh=True)
_CONDITION_ZH = re.compile(
    # (a diagnosis without 我: "前年查出来有痛风")
    r"(?:我|(?:^|(?<=[，,]))(?=(?:前年|去年|今年|上个月|几年前|前几年|年初|最近)?(?:体检)?(?:查出|检查出|确诊)))"
    r"(?:(?:前年|去年|今年|上个月|几年前|前几年|年初|最近)?(?:体检)?(?:查出来?|检查出来?|确诊)(?:了)?)?"
    r"(?:有|患有|得了|得过|是)?(" + _CONDITION_NAMES_ZH + r")(?:了|病人|患者)?(?!吗)"
)
# a relative's condition: "我老伴有老年痴呆", "我妈得了帕金森" (`health:condition:<condition>:<relation>`)
_FAMILY_CONDITION_ZH = re.compile(
    r"我(?:的|家(?:的)?)?("
    + ZH_RELATIONS
    + r")(?:[^，,。！？]{0,6}[，,])?(?:也|还)?(?:有|患有|得了|得过|查出(?:了)?|是)("
    + _CONDITION_NAMES_ZH
    + r")(?!吗)"
)
_MED_NAMES_ZH = health.names_pattern(health.MEDICATIONS, zh=True)
_MED_ZH = re.compile(
    r"我((?:每天|每晚|每天早上|每天晚上|每天早晚|早上|晚上|一直|平时|一天)?"
    # (the hour: "我每天早上七点吃一片别嘌醇")
    r"(?:[0-9一二三四五六七八九十]{1,3}点(?:半|[0-9一二三四五六七八九十]{1,3}分?)?)?"
    r"(?:都)?(?:要|会|在|得)?(?:吃|服用|服|打|用)"
    r"(?:着)?(?:[一两二三半]?(?:片|粒|颗|支|针))?((?:" + _MED_NAMES_ZH + r")|" + _ZH_TEXT + r"{0,6}?(?:药|药片|胶囊)))"
)


# A relative's job: "我老婆是小学老师", "我儿子在深圳当程序员" (key `family:<relation>:job`)
_RELATIVE_JOB_ZH = re.compile(
    # (a clause of its own may leave out 我: "…，儿媳妇是小学老师")
    r"(?:我(?:的|家)?|^|(?<=[，,]))("
    + ZH_RELATIONS
    + r")(?:叫["
    + CJK_IDEOGRAPHS
    + r"]{1,4}[，,])?(?:现在|目前|以前|原来|过去|退休前)?(?:是(?:一名|一位|一个|个|名|位)?((?:"
    + _ZH_TEXT
    + r"){0,8}?(?:"
    + _OCCUPATIONS_ZH
    + r"))(?=["
    + _ZH_STOP
    + r"]|$)|在("
    + _ZH_TEXT
    + r"{1,10}?)(?:当|做|开)("
    + _ZH_TEXT
    + r"{1,8}?)(?=["
    + _ZH_STOP
    + r"]|$|了))"
)


# Where a relative works or studies: "我老公在香港上班", "我闺女叫赵敏，在上海工作", "我孙女叫甜甜，在北京读大学"
_RELATIVE_WORKS_ZH = re.compile(
    r"我(?:的|家)?("
    + ZH_RELATIONS
    + r")(?:叫["
    + CJK_IDEOGRAPHS
    + r"]{1,4}[，,])?(?:现在|目前|一直)?在("
    + _ZH_TEXT
    + r"{1,10}?)(工作|上班|读大学|读书|上大学|上学|念书|读研究生|读研|读博士|读博|读硕士|留学|实习)(?=["
    + _ZH_STOP
    + r"]|$|呢|了)(?:[，,](?:学的是|学|读的是|专业是)([^"
    + _ZH_STOP
    + r"]{1,8}))?"
)


# Where a relative lives: "我女儿住在北京", "我儿子一家现在住在上海", "我女儿叫小丽，住在北京" (after the
# name, read as hers): `family:<relation>:home`
_RELATIVE_HOME_ZH = re.compile(
    r"我(?:的|家)?("
    + ZH_RELATIONS
    + r")(?:一家人|一家|全家|两口子)?(?:现在|目前|一直|也|还)?(?:住在|在)("
    + _ZH_TEXT
    + r"{2,8}?)(?:住)?(?=["
    + _ZH_STOP
    + r"]|$|呢|了)"
)


def _zh_relative_home(clause: str) -> list[SelfFact]:
    m = _RELATIVE_HOME_ZH.search(clause)
    if m is None or m.group(1) in _ZH_PETS or not re.search(r"住", m.group(0)):
        return []  # ("我女儿在北京工作" is where she works: _zh_relative_job)
    said = f"{USER_ZH}的{m.group(1)}住在{m.group(2)}。"
    return [_fact("fact", f"family:{relation_key(m.group(1))}:home", m.group(2), said, zh=True)]


# what a relative teaches, as their job: "儿媳妇是教中学的" (also a correction of a job said before)
_RELATIVE_TEACHES_ZH = re.compile(
    r"(?:我(?:的|家)?|^|(?<=[，,]))(" + ZH_RELATIONS + r")(?:现在|以前|原来)?是(教[^，,。！？!?]{1,6}?)的"
)


def _zh_relative_job(clause: str) -> list[SelfFact]:
    if (t := _RELATIVE_TEACHES_ZH.search(clause)) and t.group(1) not in _ZH_PETS:
        said = f"{USER_ZH}的{t.group(1)}是{t.group(2)}的。"
        return [_fact("fact", f"family:{relation_key(t.group(1))}:job", t.group(2), said, zh=True)]
    m = _RELATIVE_JOB_ZH.search(clause)
    if m is not None:
        # and another relative's after it: "我儿子叫王磊，在深圳当工程师，儿媳妇是小学老师"
        more = _RELATIVE_JOB_ZH.search(clause, m.end())
        if more is not None and more.group(1) != m.group(1):
            return _zh_relative_job(clause[: m.end()]) + _zh_relative_job(clause[m.end() :].lstrip("，,"))
    if m is None and (w := _RELATIVE_WORKS_ZH.search(clause)) and w.group(1) not in _ZH_PETS:
        studies = f"，学的是{w.group(4)}" if w.group(4) else ""
        said = f"{USER_ZH}的{w.group(1)}在{w.group(2)}{w.group(3)}{studies}。"
        return [_fact("fact", f"family:{relation_key(w.group(1))}:job", w.group(2), said, zh=True)]
    if m is None or m.group(1) in _ZH_PETS:
        return []
    relation = m.group(1)
    job = m.group(2) or m.group(4)
    # "我老伴以前是司机": said as what they were
    said_before = re.search(r"(以前|原来|过去|退休前)(?=是|在)", m.group(0))
    before = said_before.group(1) if said_before else ""
    verb = clause[m.start(4) - 1] if m.group(4) else "当"  # (当, 做 or 开: "在深圳开出租车")
    said = (
        f"{USER_ZH}的{relation}{before}是{job}。"
        if m.group(2)
        else f"{USER_ZH}的{relation}{before}在{m.group(3)}{verb}{job}。"
    )
    return [_fact("fact", f"family:{relation_key(relation)}:job", job, said, zh=True)]


# The team the user follows: "I support Celtic", "I'm a big Arsenal fan", "我支持国安队", "我是湖人的球迷"
# (key `team`: "User supports Celtic." / "用户是国安队的球迷。")
_TEAM_EN = re.compile(
    r"\bI(?:'ve)? (?:always )?(?:support(?:ed)?|follow) (?!(?:my|the|them|him|her|it|you|that|this|a|an|everyone|"
    r"people|each|both|all)\b)((?:[A-Za-z]+ ){0,2}?[A-Za-z]+?)(?: football club| fc)?"
    r"(?=\s*(?:[,.!;]|$|\b(?:and|but|now|these|since|through|all|for)\b))|"
    r"\bI(?:'m| am) (?:a |an )?(?:big |huge |massive |lifelong |life-long |die-hard |diehard )?"
    r"((?:[A-Za-z]+ ){0,2}?[A-Za-z]+) (?:fan|supporter)\b(?! of)",
    re.I,
)
_TEAM_ZH = re.compile(
    r"我(?:一直|从小)?(?:支持|是)([\u4e00-\u9fff]{1,6}?(?:队|俱乐部))(?:的)?(?:球迷)?|我是([\u4e00-\u9fff]{1,6}?)的球迷"
)
# what a "fan" is of that names no team ("I'm a big football fan", "a music fan")
_NOT_TEAMS = frozenset(
    "football soccer rugby cricket tennis golf music film movie jazz country sports sport horse racing snooker "
    "darts boxing f1 formula one baseball basketball hockey big huge massive real true total great".split()
)


# The car they drive: "I drive a blue Ford Focus", "I've got a little red Fiat now" (key `car`,
# "User drives a little red Fiat now.", so "what car do I drive?" reads it; a newer one replaces it)
_CAR_MAKES = (
    r"ford|fiat|vauxhall|opel|toyota|honda|nissan|volkswagen|vw|bmw|audi|mercedes|renault|peugeot|citroen|skoda|"
    r"kia|hyundai|volvo|mazda|tesla|jaguar|land rover|range rover|suzuki|subaru|dacia|byd|lexus|"
    r"porsche|mitsubishi|chevrolet|jeep"
)
_CAR_EN = re.compile(
    rf"\bI(?: (?:now |still |also )?drive|(?:'ve| have)? (?:got|bought|have|picked up)) an? "
    rf"((?:new |little |second-hand |used |old |[a-z]+ ){{0,3}}?(?:{_CAR_MAKES})(?: (?!now\b|these\b)[a-z0-9-]+)?)"
    r"(?: (now|these days))?(?=\s*(?:[.!,;]|$|\b(?:and|but|which|that|now)\b))",
    re.I,
)


def _car(clause: str) -> list[SelfFact]:
    m = _CAR_EN.search(clause)
    if not m:
        return []
    makes = re.compile(rf"\b(?:{_CAR_MAKES})\b", re.I)
    words = m.group(1).split()
    make_at = next(i for i, w in enumerate(words) if makes.fullmatch(w) or makes.match(" ".join(words[i : i + 2])))
    # the make and the model after it as written on the car ("ford focus" → "Ford Focus")
    car = " ".join(
        words[:make_at] + [w.upper() if w.lower() in ("vw", "bmw", "byd") else w.capitalize() for w in words[make_at:]]
    )
    article = "an" if car[:1].lower() in "aeiou" else "a"
    when = f" {m.group(2).lower()}" if m.group(2) else ""
    return [_fact("fact", "car", car, f"{USER_EN} drives {article} {car}{when}.")]


_SPORT_WORDS = re.compile(
    r"\b(?:football|footie|soccer|rugby|cricket|team|club|match|matches|league|season|goals?|stadium|cup)\b", re.I
)


def _team(clause: str, zh: bool) -> list[SelfFact]:
    m = (_TEAM_ZH if zh else _TEAM_EN).search(clause)
    if not m:
        return []
    team = (m.group(1) or m.group(2)).strip()
    if not zh and m.group(1) and not (team[0].isupper() or _SPORT_WORDS.search(clause)):
        return []  # "I support local charities", "I follow the recipe": a name, or a word of sport, says a team
    if zh:
        return [_fact("fact", "team", team, f"{USER_ZH}是{team}的球迷。", zh=True)]
    if team.lower() in _NOT_TEAMS or team.lower().split()[-1] in _NOT_TEAMS or team.lower() in _TASTE_OBJECT_SKIP:
        return []
    team = " ".join(w.capitalize() if w.islower() else w for w in team.split())  # ("celtic" as heard)
    return [_fact("fact", "team", team, f"{USER_EN} supports {team}.")]


def _zh_more(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = _former_job(clause, zh=True) + _own_birthday(clause, zh=True) + _hometown(clause, zh=True)
    out += _zh_study(clause) + _routine(clause, zh=True) + _team(clause, zh=True)
    out += _death(clause, zh=True) + _zh_relative_job(clause) + _zh_relative_home(clause)
    if school := _FAMILY_SCHOOL_ZH.search(clause):
        relation = school.group(1)
        said = f"{USER_ZH}的{relation}在上{school['year']}。"
        out.append(_fact("fact", f"family:{relation_key(relation)}:school", school["year"], said, zh=True))
    if (likes := _FAMILY_LIKES_ZH.search(clause)) and likes.group(1) not in _ZH_PETS:
        relation = likes.group(1)
        said = f"{USER_ZH}的{relation}喜欢{likes.group(2)}。"
        out.append(_fact("fact", f"family:{relation_key(relation)}:likes", likes.group(2), said, zh=True))
    for pattern, how in _OCC_ZH:
        m = pattern.search(clause)
        if not m:
            continue
        if how == "at":
            place, verb, what = m.group(1), m.group(2), m.group(3)
            out.append(_fact("fact", "occupation", what, f"{USER_ZH}在{place}{verb}{what}。", zh=True))
        elif how == "job":
            out.append(_fact("fact", "occupation", m.group(1), f"{USER_ZH}的工作是{m.group(1)}。", zh=True))
        elif how == "do":
            out.append(_fact("fact", "occupation", m.group(1), f"{USER_ZH}是做{m.group(1)}的。", zh=True))
        elif how == "is":
            out.append(_fact("fact", "occupation", m.group(1), f"{USER_ZH}是{m.group(1)}。", zh=True))
        elif how == "teach":
            out.append(_fact("fact", "occupation", m.group(1), f"{USER_ZH}教{m.group(1)}。", zh=True))
        elif how == "teach at":
            out.append(_fact("fact", "occupation", m.group(2), f"{USER_ZH}在{m.group(1)}教{m.group(2)}。", zh=True))
        elif how == "work":
            out.append(_fact("fact", "occupation", m.group(1), f"{USER_ZH}做{m.group(1)}工作。", zh=True))
        else:
            out.append(_fact("fact", "occupation", "退休", f"{USER_ZH}已经退休了。", zh=True))
        break
    # where, when the job said no place ("我是一名护士，在市医院上班")
    if not any(f.key == "occupation" and "在" in f.content for f in out):
        m = _WORK_AT_ZH.search(clause)
        if m:
            out.append(_fact("fact", "workplace", m.group(1), f"{USER_ZH}在{m.group(1)}工作。", zh=True))
    # (the last place said: "我以前住在宜宾，去年搬到南京" is 南京; "搬到南京了，住在女儿家附近" is 南京)
    homes = [m for m in _HOME_ZH.finditer(clause) if not _NOT_HOME_ZH.search(m.group(1) or m.group(2))]
    moved = [m for m in homes if "搬" in m.group(0)]
    found = (moved or homes)[-1] if homes else None
    if found is not None:
        # the place, not what they do there ("搬到南京帮女儿带孩子", "搬到南京了")
        place = re.split(r"了|帮|去|来|跟|和|陪|照顾|带|工作|上班", found.group(1) or found.group(2))[0]
        # ("搬到我闺女那儿": the user's daughter's, said of the user)
        place = re.sub(r"^我(?:的)?", USER_ZH, place)
        if place:
            out.append(_fact("fact", "home", place, f"{USER_ZH}住在{place}。", zh=True))
    out += _own_age(clause, now, zh=True) + _zh_ages(clause, now)
    out += _zh_health(clause)
    return out


def _zh_age_now(relation: str, named: str, age: int, now: datetime.datetime) -> SelfFact:
    """ "用户的女儿朵朵6岁（2026年12月4日时）。": a family member's age as of the day it was said."""
    date = when.format_date(now.date(), zh=True, weekday=False)
    content = f"{USER_ZH}的{relation}{named}{age}岁（{date}时）。"
    return _fact("fact", f"family:{relation_key(relation)}:age", str(age), content, zh=True)


def _zh_ages(clause: str, now: datetime.datetime) -> list[SelfFact]:
    out: list[SelfFact] = []
    relation = named = ""
    # "我外孙叫小石头，这个月十二号满五岁": read as "我外孙小石头这个月十二号满五岁"
    said = re.sub(r"^(我(?:的)?" + _ZREL + r")叫([" + CJK_IDEOGRAPHS + r"]{1,4})[，,]", r"\1\3", clause)
    m = _ZH_AGE.search(said)
    if m and not (m.group(2) and _NOT_ZH_NAMES.search(m.group(2))):
        relation, named, time, verb, age = m.group(1), m.group(2) or "", m.group(3), m.group(4), when.number(m.group(5))
        day = when.resolve_day(time, now) if time else None
        key = f"family:{relation_key(relation)}:age"
        if age is None or not 0 <= age <= 120:
            relation = ""
        elif day is not None:
            date = when.format_date(day, zh=True)
            out.append(_fact("fact", key, str(age), f"{USER_ZH}的{relation}{named}在{date}满{age}岁。", zh=True))
        elif verb not in ("满", "过") or time in ("今年", "现在", "已经"):
            out.append(_zh_age_now(relation, named, age, now))
        else:
            relation = ""  # "满七岁" with no day: not when
    m = None if out else _NAMED_THEN_AGE_ZH.search(clause)
    age = when.number(m.group(3)) if m else None
    if m and age is not None and 0 <= age <= 120:
        relation, named = m.group(1), m.group(2)
        out.append(_zh_age_now(relation, named, age, now))
    # (the day first: "下周三我外孙女朵朵过生日")
    day_first = r"^(" + when.ZH_DAY + r")[，,]?(我(?:的)?" + _ZREL + r"[" + CJK_IDEOGRAPHS + r"]{0,3}?)过生日"
    clause = re.sub(day_first, r"\2\1过生日", clause)
    # ("周六是我妈的生日", "我妈的生日是周六")
    who = r"(?P<who>我(?:的)?" + _ZREL + r"[" + CJK_IDEOGRAPHS + r"]{0,3}?)"
    on_day = r"(?P<day>" + when.ZH_DAY + r")"
    clause = re.sub(r"^" + on_day + r"(?:是|就是)" + who + r"的?生日", r"\g<who>\g<day>过生日", clause)
    clause = re.sub(
        who + r"的?生日(?:是|在|就是)" + on_day + r"(?![0-9一二三四五六七八九十月号日])",
        r"\g<who>\g<day>过生日",
        clause,
    )
    m = _ZH_BIRTHDAY.search(clause)
    if m:
        relation = m.group(1) or m.group(4) or m.group(8)
        named = named or m.group(2) or m.group(5) or m.group(9) or ""
        month_day = when.month_and_day(m.group(3) or m.group(7)) if not m.group(10) else None
        if m.group(10) and (day := when.resolve_day(m.group(10), now)) is not None:
            month_day = (day.month, day.day)
        if month_day is not None:
            out.append(_birthday(relation, named, month_day, int(m.group(6)) if m.group(6) else None, zh=True))
    if named and relation and out:
        out.insert(
            0, _fact("fact", f"family:{relation_key(relation)}", named, f"{USER_ZH}的{relation}叫{named}。", zh=True)
        )
    return out


def _zh_family_health(clause: str) -> list[SelfFact]:
    """A household member's allergies and foods they cannot eat (_FAMILY_ALLERGY_ZH); "她"/"他"
    after a member named in the same sentence is that member ("我女儿叫朵朵，她对芝麻过敏")."""
    out: list[SelfFact] = []
    named = re.match(r"我(?:的|家(?:的)?)?(" + ZH_RELATIONS + r")", clause)
    if named:
        clause = re.sub(
            r"(?<=[，,])\s*[她他]?(?=(?:对|有)[^" + _ZH_STOP + r"]{1,10}?过敏|不能)", "我" + named.group(1), clause
        )
    m = _FAMILY_ALLERGY_ZH.search(clause)
    if m:
        word = m.group(1) or m.group(4)
        for thing in _split_objects(m.group(3) or m.group(5)):
            key = health.canonical_key(health.ALLERGENS, thing)
            content = f"{USER_ZH}的{word}{m.group(2) or ''}对{thing}过敏。"
            out.append(_fact("fact", f"health:allergy:{key}:{relation_key(word)}", thing, content, zh=True))
    for m in _FAMILY_CONDITION_ZH.finditer(clause):
        found = health.find(health.CONDITIONS, m.group(2))
        if found is not None and found.key != "pregnancy":
            content = f"{USER_ZH}的{m.group(1)}有{found.zh[0]}。"
            out.append(
                _fact("fact", f"health:condition:{found.key}:{relation_key(m.group(1))}", found.zh[0], content, zh=True)
            )
    m = _FAMILY_AVOID_ZH.search(clause)
    if m:
        verb = m.group(2) or "吃"
        for thing in _split_objects(m.group(3)):
            key = health.canonical_key(health.ALLERGENS, thing)
            content = f"{USER_ZH}的{m.group(1)}不能{verb}{thing}。"
            out.append(_fact("fact", f"health:avoid:{key}:{relation_key(m.group(1))}", thing, content, zh=True))
    return out


_ZH_FOODS_FIRST = re.compile(r"([^，,。！？!?]{1,12}?)(?:我)?(?:都|也)?(?:不让|不能|不可以|不敢|不许)(碰|吃|喝)")


def _zh_foods(text: str) -> list[str]:
    """The foods of the health table `text` names, in the order said."""
    found: list[tuple[int, str]] = []
    for term in health.ALLERGENS:
        for name in term.zh:
            at = text.find(name)
            if at >= 0 and not any(a <= at < a + len(n) for a, n in found):
                found.append((at, name))
                break
    return [name for _at, name in sorted(found)]


def _zh_health(clause: str) -> list[SelfFact]:
    out: list[SelfFact] = _zh_family_health(clause)
    m = None if out else _ALLERGY_ZH.search(clause)  # (a relative's: not "我" + "儿子花生" 过敏)
    if m:
        for thing in _split_objects(m.group(1)):
            # "我一吃芒果就过敏": the food in the words around it
            thing = re.sub(r"^(?:一|只要|每次)?(?:吃|喝|碰)(?:了|到)?|(?:就|都|会)+$", "", thing) or thing
            if not health.find(health.ALLERGENS, thing) and (named := _zh_foods(thing)):
                thing = named[0]
            key = health.canonical_key(health.ALLERGENS, thing)
            out.append(_fact("fact", f"health:allergy:{key}", thing, f"{USER_ZH}对{thing}过敏。", zh=True))
    m = _AVOID_ZH.search(clause)
    if m:
        verb = m.group(1) or "吃"
        for thing in _split_objects(m.group(2)):
            if thing in ("吃", "喝", "碰") or len(thing) > 8:
                continue  # ("海鲜我不能吃": the food came first, below)
            key = health.canonical_key(health.ALLERGENS, thing)
            out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_ZH}不能{verb}{thing}。", zh=True))
    # the foods first: "海鲜我不能吃", "海鲜啤酒都不让碰" (the doctor's word)
    first = _ZH_FOODS_FIRST.search(clause)
    if first and not out:
        for thing in _zh_foods(first.group(1)):
            key = health.canonical_key(health.ALLERGENS, thing)
            out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_ZH}不能{first.group(2)}{thing}。", zh=True))
    dont = None if m else _DONT_EAT_ZH.search(clause)
    if dont:
        for thing in _split_objects(dont.group(2)):
            if health.known_food(thing):
                key = health.canonical_key(health.ALLERGENS, thing)
                out.append(_fact("fact", f"health:avoid:{key}", thing, f"{USER_ZH}不{dont.group(1)}{thing}。", zh=True))
    diet = _DIET_ZH.search(clause)
    if diet:
        out += _diet_facts(diet.group(1), zh=True)
    for m in _conditions(_CONDITION_ZH, _CONDITION_NAMES_ZH, clause):
        found = health.find(health.CONDITIONS, m.group(1))
        if found is None:
            continue
        content = f"{USER_ZH}怀孕了。" if found.key == "pregnancy" else f"{USER_ZH}有{found.zh[0]}。"
        out.append(_fact("fact", f"health:condition:{found.key}", found.zh[0], content, zh=True))
    m = _MED_ZH.search(clause)
    if m:
        known = health.find(health.MEDICATIONS, m.group(2))
        key = known.key if known is not None else m.group(2)
        out.append(_fact("fact", f"health:medication:{key}", m.group(2), f"{USER_ZH}{m.group(1)}。", zh=True))
    return out


def second_person(content: str) -> str:
    """A stored self-fact said back to the user: "User likes hiking." → "You like hiking.",
    "User's sister is called Anna." → "Your sister is called Anna.", "用户喜欢咖啡。" → "你喜欢咖啡。"."""
    text = content.strip()
    if text.startswith(USER_ZH):
        rest = text[len(USER_ZH) :]
        if rest.startswith("的名字是"):
            return "你叫" + rest[len("的名字是") :]
        return "你" + rest.replace(USER_ZH, "你")
    if not text.startswith(USER_EN):
        return text
    rest = text[len(USER_EN) :]
    stopped = re.match(rf" (no longer )?({'|'.join(_HABIT_VERBS.values())}) (?!not )", rest)
    if stopped:  # "User no longer drinks cola." / "User drinks tea now." -> "You (no longer) drink ..."
        base = {third: base for base, third in _HABIT_VERBS.items()}[stopped.group(2)]
        rest = f"You {stopped.group(1) or ''}{base} " + rest[stopped.end() :]
    else:
        for old, new in (
            (" gave up ", "You gave up "),
            ("'s ", "Your "),
            (" does not ", "You don't "),
            (" is ", "You are "),
            (" was ", "You were "),
            (" has ", "You have "),
            (" likes ", "You like "),
            (" will ", "You will "),
            (" teaches ", "You teach "),
            (" works ", "You work "),
            (" supports ", "You support "),
            (" lives ", "You live "),
            (" takes ", "You take "),
            (" uses ", "You use "),
            (" needs ", "You need "),
            (" cannot ", "You cannot "),
            (" does ", "You do "),
        ):
            if rest.startswith(old):
                rest = new + rest[len(old) :]
                break
        else:
            # "User fixes cars for a living." -> "You fix cars for a living."; "User no longer
            # works at the bank." -> "You no longer work at the bank."; "User farms sheep."
            verb = re.match(
                r" (no longer )?([a-z]+?)(ies|(?:(?<=ch)|(?<=sh)|(?<=ss)|(?<=x)|(?<=z)|(?<=o))es|(?<![saiu])s) ", rest
            )
            if verb:
                base = verb.group(2) + ("y" if verb.group(3) == "ies" else "")
                rest = f"You {verb.group(1) or ''}{base} {rest[verb.end() :]}"
            else:
                rest = "You" + rest
    return re.sub(
        r"\b(their|them|themselves|theirs)\b",
        lambda m: {"their": "your", "them": "you", "themselves": "yourself", "theirs": "yours"}[m.group(1)],
        rest,
    )


# -- a sentence said to the user, against what they said -----------------------------------------
# The reply guard's check that the model does not tell the user something about themselves that
# their own words say otherwise ("You live in London." to someone who said "I live in Leeds."):
# the model's sentence is put in the user's voice and read by the same rules as the user's
# own words, so a contradiction is a fact of the same key with another value.

_SWAP_EN = re.compile(
    r"\b(you're|you are|you've|you have|your|yours|yourself|you|i'm|i am|i've|my|mine|myself|me|i)\b", re.I
)
_SWAPPED_EN = {
    "you're": "I'm",
    "you are": "I am",
    "you've": "I've",
    "you have": "I have",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "i'm": "you're",
    "i am": "you are",
    "i've": "you've",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "me": "you",
    "i": "you",
}
# "you" where a clause starts is its subject ("I"), elsewhere an object ("me")
_CLAUSE_START = re.compile(
    r"(?:^|[,;:.!?]|\b(?:and|but|so|that|because|if|when|do|did|are|were|have|can|will|would))\s*$", re.I
)
# what can be contradicted: one value per key (a family member's count or name; ages and
# birthdays move with the calendar and are answered from the facts anyway)
_SWAP_ZH = str.maketrans({"你": "我", "您": "我", "我": "你"})
_CONTRADICTABLE = ("name", "home", "occupation", "workplace")


def in_the_users_voice(sentence: str) -> str:
    """A sentence said to the user, as the user would say it: "You live in London." → "I live
    in London.", "你住在北京。" → "我住在北京。"; the speaker's own first person becomes second
    person ("I live here" → "you live here"), so it is never read as the user's."""
    if has_cjk(sentence):
        return sentence.translate(_SWAP_ZH)

    def swap(m: re.Match[str]) -> str:
        word = m.group(1)
        low = word.lower()
        if low == "you":
            new = "I" if _CLAUSE_START.search(m.string[: m.start()]) else "me"
        else:
            new = _SWAPPED_EN[low]
        starts = not m.string[: m.start()].strip() or m.string[: m.start()].rstrip()[-1] in ".!?"
        return new[0].upper() + new[1:] if starts else new

    return _SWAP_EN.sub(swap, sentence)


def contradicted(sentence: str, facts: dict[str, str]) -> list[str]:
    """The keys of `facts` (key -> content, the user's known facts) that `sentence`, said to
    the user, states otherwise: "You live in London." against "User lives in Leeds." → ["home"],
    "你有三个女儿。" against "用户有两个女儿。" → ["family:daughter"]. A question, a statement
    about someone else and a fact not known are no contradiction."""
    said = in_the_users_voice(sentence)
    if not facts or said == sentence:
        return []  # no second person: not about the user
    keys = []
    for fact in extract_self_facts(said):
        known = facts.get(fact.key)
        contradictable = fact.key in _CONTRADICTABLE or (fact.key.startswith("family:") and fact.key.count(":") == 1)
        if known and contradictable and not _agrees(fact, known):
            keys.append(fact.key)
    return keys


def _agrees(fact: SelfFact, known: str) -> bool:
    if _says_value(fact, known):
        return True
    # the known fact read by the same rules, to compare values of the same form
    before = [f for f in extract_self_facts(in_the_users_voice(second_person(known))) if f.key == fact.key]
    if not before:
        return True  # nothing to compare with: not a contradiction
    old = before[0]
    if old.content.replace(old.value, "{}") != fact.content.replace(fact.value, "{}") and fact.key.startswith(
        "family:"
    ):
        return True  # "has two daughters" and "daughter is called Anna" are both true
    a, b = old.value.lower(), fact.value.lower()
    if fact.key == "name":
        return a == b
    return a in b or b in a


def names_in_profile(facts: Iterable[str]) -> list[str]:
    """The people's names in memory/profile's fact lines ("kind:key=content"): the owner's own
    (key `name`) and their family's (`family:<relation>`), newest first as the profile lists
    them, each once."""
    names: list[str] = []
    for line in facts:
        head, _, content = line.partition("=")
        name = name_in_fact(head.partition(":")[2], content)
        if name and name.casefold() not in {n.casefold() for n in names}:
            names.append(name)
    return names


def relatives_known(facts: dict[str, str]) -> list[tuple[str, str]]:
    """The relatives the stored facts name (key -> content), as (relation word, name): those a
    later turn may name alone ("Claire is getting married in June", a week after "my daughter
    Claire is a nurse"; `extract_self_facts(known=…)`)."""
    out = []
    for key, content in facts.items():
        if not key.startswith("family:") or key.count(":") != 1:
            continue
        if m := _RELATIVE_SAID.match(content.strip()):
            out.append((m.group(1) or m.group(2), m.group(3).strip()))
        else:  # "User has twin boys, called Jayden and Jordan."
            out += _several_named(re.sub(rf"^{USER_EN} has", "I have", content))
    return out


def name_in_fact(key: str, content: str) -> str:
    """The name a stored fact gives: the user's own (key `name`) or a relative's or pet's
    (`family:<relation>`, not `family:<relation>:age`), else ""."""
    if key == "name":
        return name_from_content(content)
    if key.startswith("family:") and key.count(":") == 1:
        return name_of_relative(content)
    return ""


def deaths_by_name(text: str, known: dict[str, str]) -> list[SelfFact]:
    """A death told by the name alone ("Marley passed away this afternoon", "豆豆上个星期走了"),
    read against the relatives and pets the user named before (`known`: key -> content, their
    facts): `family:<relation>:passed` for each whose name the words say died."""
    out: list[SelfFact] = []
    for key, content in known.items():
        name = name_in_fact(key, content) if key.startswith("family:") else ""
        if not name:
            continue
        died = re.search(rf"(?<![\w]){re.escape(name)}(?![\w])[^.!?。！？]{{0,20}}?\b{_DIED_EN}", text, re.I)
        died = died or re.search(rf"{re.escape(name)}[^，,。！？]{{0,8}}?{_DIED_ZH}", text)
        if died is None:
            continue
        relation = key.split(":")[1]
        zh = has_cjk(content)
        said = f"{USER_ZH}的{name}去世了。" if zh else f"{USER_EN}'s {relation} {name} has died."
        out.append(_fact("fact", f"{key}:passed", relation, said, zh=zh))
    return out
