"""A turn that is only a social move (good night, goodbye, thanks, "I'm tired") → the qa table's
phrasing for it, so that its answer (config/qa.csv) is said even when the words are not one of
the table's phrasings ("right, I'm off to bed, night Fay", "好了，我去睡觉了，晚安").

Used with the embedded model's tiny profile only: it cannot speak Chinese at all (a Chinese
good night got the apology that it only speaks English), and said "Right on time, right on
time!" to an English one. A turn that says anything more than the move and a few words around
it ("thanks, and what about tomorrow?", "I'm going to bed early tomorrow") is no move: it is
left to the rest of the dialogue. Pure Python, no ROS import.
"""

from __future__ import annotations

import re

# the move's phrasing in config/qa.csv, by language, and what says it
_MOVES_EN = (
    (
        "good night",
        r"good ?night|night night|nighty night|(?<!last )(?<!to)night(?!'s)|time for bed|bedtime|"
        r"(?:i'?m|i am|i'?ll be|i will be) (?:off|going|heading|away|getting) (?:up )?to bed(?: now)?|"
        r"(?:i'?m|i am) (?:off|going) to (?:get some )?sleep(?: now)?",
    ),
    (
        "goodbye",
        r"good ?bye|bye(?: bye)?|see you(?: later| soon| tomorrow| in the morning)?|talk (?:to you )?(?:later|soon)|"
        r"ta-?ra|ta ta|cheerio|toodle-?oo|see ya|laters|"
        r"catch you later|(?:i'?m|i am|i'?ll be) off(?: now)?|i(?:'?ve| have) got to go|i must go|i have to go",
    ),
    ("thank you", r"thanks?(?: you)?(?: so much| very much| a lot| ever so much)?|cheers|much appreciated"),
    (
        "i'm tired",
        r"(?:i'?m|i am|i feel|feeling)? ?(?:so |really |absolutely |completely |totally |pretty |a bit |quite |dead |"
        r"very |just )*(?:tired|exhausted|knackered|shattered|worn out|wiped out|drained|pooped|whacked)"
        # and why ("after last night's shift", "from work"): still only the move
        r"(?: (?:after|from) (?!you\b)[\w']+(?: [\w']+){0,4})?",
    ),
)
_MOVES_ZH = (
    (
        "晚安",
        r"晚安(?:啦|了|哦|呀|啊)?|我?(?:要|先|得|该)?(?:去|回房)?睡(?:觉)?(?:去)?了|睡觉去了|我?(?:要|先|该)?(?<!去)休息了",
    ),
    ("再见", r"再见|拜拜|回头(?:再)?(?:聊|见)|下次(?:再)?聊|明天(?:再)?聊|改天(?:再)?聊|我?(?:先)?走了|不聊了"),
    ("谢谢", r"谢谢(?:你|您)?(?:陪我(?:聊天|说话|聊聊|聊))?(?:啊|了|呀)?|多谢(?:了|你)?|辛苦(?:你)?了"),
    ("好累", r"我?(?:今天|最近|这几天|现在)?(?:有点|有些|好|很|真|太|特别|可)?累(?:了|死了|坏了|啊|呀|死)?"),
    ("好困", r"我?(?:今天|现在)?(?:有点|有些|好|很|真|太|特别)?困(?:了|死了|啊|呀)?"),
)
# words around a move that say nothing more ("right", "well then", "好了", the robot's name)
_AROUND_EN = (
    r"(?:ok(?:ay)?|alright|all right|right|righto|right then|well|anyway|so|then|now|for now|for today|fay|dear|"
    r"honestly|to be honest|oh|gosh|god|ugh|phew|man|"
    r"love|"
    # ("lovely chatting, bye for now")
    r"(?:it was |it's been |that was )?(?:lovely|nice|good|great) (?:chatting|talking)(?: to you| with you)?)"
)
_AROUND_ZH = (
    r"(?:好了|好吧|好的|好嘞|好哒|得嘞|行嘞|好|行了|行|"
    r"嗯|那|那我|那么|哎|唉|fay|菲菲|今天就到这|今天就聊到这|就这样吧|就这样|"
    # (where they are off to: "好了，我去做饭了，拜拜")
    r"我?(?:先|要|得)?去(?:做饭|忙了|忙|买菜|洗澡|吃饭|遛狗|接孙子|上班|休息(?:一下|一会儿?)?)了?|"
    # (anywhere they are off to: "我去公园下棋了")
    r"我(?:先|要|得)?去[\u4e00-\u9fff]{1,8}?了)"
)
_SEPARATORS = r"[\s,，.。!！~、…]*"


def _whole(moves: list[str], around: str) -> re.Pattern[str]:
    part = "|".join([*moves, around])
    return re.compile(rf"^{_SEPARATORS}(?:(?:{part}){_SEPARATORS})+$", re.I)


# (in the order a turn of several moves is answered: "thanks, good night" is a good night)
_EN = (_whole([m for _, m in _MOVES_EN], _AROUND_EN), [(p, re.compile(rf"\b(?:{m})\b", re.I)) for p, m in _MOVES_EN])
_ZH = (_whole([m for _, m in _MOVES_ZH], _AROUND_ZH), [(p, re.compile(m)) for p, m in _MOVES_ZH])


def qa_phrasing(text: str, language: str) -> str | None:
    """The qa table phrasing of the social move `text` makes, or None (no move, or anything
    else said besides: "thanks, and what about tomorrow?")."""
    zh = language.startswith("zh") or bool(re.search(r"[\u4e00-\u9fff]", text))
    words = text.strip()
    if not words or len(words) > (24 if zh else 80):
        return None
    whole, moves = _ZH if zh else _EN
    if not whole.match(words):
        return None
    return next((phrase for phrase, move in moves if move.search(words)), None)
