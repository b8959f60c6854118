"""The reply guard: what a model's answer may not contain, checked sentence by sentence
before anything is published, whatever the model or the flow.

A tiny model (the embedded SmolLM2-135M) ignores half of its instructions; a capable one
slips now and then. The guard does not ask the model to behave, it decides:

- no emoji (or text emoticons) when the persona forbids them;
- no role labels ("User:", "Assistant:", "Instruction:"): a label of the companion is
  removed, a label of the user means the model started writing the user's turn, so the
  sentence is dropped and the reply ends there;
- no prompt text, and no talk about the conversation instead of in it ("The above answer
  is correct", "the user has", "as an AI", tool names), and no fragment of structured
  output (a cut-off judge JSON, stray braces);
- nothing the user must avoid is offered: a sentence that suggests a food the user is
  allergic to or cannot eat (or one that contains it: "peanut butter", "satay", "花生酱") is
  dropped unless it warns about it ("avoid", "without", "peanut-free", "不要", "不含");
  the allergens and what contains them are the data of `fay_ros.memory.health`;
- the companion never introduces herself with the user's name, or with any name but her own,
  does not narrate the user in the third person ("Tom loves golf.", "But Tom has always
  said…"), and does not turn into another character ("as a food delivery service, we…");
- a quote mark never opened or never closed is removed ('…I can do that."');
- the companion has no family: "My wife's name is Margaret." (the model speaking as the user) or
  "for me and my family" is dropped;
- the user's own facts win: a sentence that tells the user something about themselves that
  their words said otherwise ("You live in London." to someone who lives in Leeds, "你有三个
  女儿。" to a father of two) is replaced by the fact ("You live in Leeds."), or dropped when
  the fact was said in this reply already (`self_facts.contradicted`: the user's own rules);
- with the tiny model, a name or place no one told of is an invented fact: a sentence with a
  word written as a name (a capital inside it, or first before a comma: "Nal, your friend…",
  "the whole city of Harrogate", "They are both Muslims") that neither the user's words, the
  conversation, the prompt nor the facts name is dropped (days, months, holidays, languages
  and nationalities pass), and the reply ends there; a capable model's world knowledge is left
  alone. A name first in its sentence before a verb ("Nal is a hairdresser") is not recognised;
- a near-miss spelling of the user's known name ("Tomm") is written as the name;
- stage directions ("(laughs)", "*smiles*") are removed: they are not speech;
- a reply may not loop within itself: a sentence already said in this reply is dropped, and
  a sentence that runs in a loop ("the sea the sea the sea", "我喜欢你我喜欢你我喜欢你") is
  dropped and ends the reply (greedy decoding of a tiny model loops); the user's own words
  parroted back are dropped too. What was said in earlier replies is not a repeat: a question
  asked again deserves its answer again (issue 37: 20 users asking for the same secret word
  each got the no_answer line when their right answer matched their last one);
- at most the persona's number of sentences (`full` tells the caller to stop the stream);
- a trailing fragment cut off by the token limit is not spoken.

What is left may be nothing; the caller then speaks a plain line from the persona instead
(`Persona.line("no_answer", ...)`), so a reply is never empty. Every drop is recorded by
reason (never by content) for the log.

Markup is not the guard's business: think text, tool calls, template tokens (`<|im_end|>`,
which end the reply there), JSON objects, code and line-start markdown are removed from the
stream before it is split into sentences, and inline markup from each piece after the guard
(`outbound.py`, the one outbound sanitiser). The guard sees a sentence with its inline
marks still in place, so `*smiles*` is still a stage direction and `**really**` is not.

Pure Python, no ROS, no I/O: one `ReplyGuard` per reply.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

import emoji

from ..memory import health
from ..memory.self_facts import PETS, RELATION_WORDS, contradicted, household_member, relation_key, second_person
from ..text.sentences import split_sentences
from ..text.words import CJK_IDEOGRAPHS, has_cjk
from .prompts import BLOCK_HEADINGS

# Text emoticons: ":)", ":-D", ";)", "xD", "<3", "^_^", "(:".
_EMOTICON = re.compile(
    r"(?:(?<=\s)|^)"
    r"(?:[:;=8][\-o^']?[)(\]\[dDpP/\\|*]+|[xX][dD]\b|<3+|\^[_.\-]?\^|\(:)(?=\s|$|[.,!?])"
)
# Emoji leftovers: variation selectors, zero-width joiners, keycap and tag characters.
_EMOJI_RESIDUE = re.compile("[\u200d\ufe0e\ufe0f\u20e3\U000e0020-\U000e007f]")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.!?;:，。！？；：])")

# Role labels as chat templates and transcripts write them.
_LABEL = re.compile(
    r"^\W{0,3}(assistant|ai|bot|robot|system|fay|companion|a|answer|response|助手|系统|答)\s*[:：]\s*", re.I
)
# a prompt-format heading inside a sentence (at a line start the sanitiser has removed the
# marks already, and "Instruction:" is a user-turn label then)
_PROMPT_HEADING = re.compile(
    r"(?:^|\s)#{2,}\s*(?:instruction|response|input)\b"
    # the prompt's own block headings, as the model copies them ("You remember:")
    + r"|(?:^|(?<=[.!?。！？]\s)|(?<=[.!?。！？]))(?:"
    + "|".join(map(re.escape, BLOCK_HEADINGS))
    + r")\s*:",
    re.I,
)
# The model talking about the conversation instead of in it (judge or prompt voice).
_META = re.compile(
    r"\bthe user(?:'s)?\b|\bthe assistant\b|\bas an ai\b|\bai (?:language )?model\b|\blanguage model\b|"
    r"\bsystem prompt\b|\bmy (?:instructions|prompt|persona)\b|\bthe (?:above|previous|following) "
    r"(?:answer|response|reply|message|conversation|question)\b|\bpersona\b|\bchat judge\b|\bjson\b|"
    r"\bfunction[ _]call|\btool[ _]calls?\b|\bsmall talk\b|\bhas already answered\b|\bthe answer is correct\b|"
    r"\bin the user's language\b|\brespond (?:with|in) \w+ sentences?\b|"
    # a tiny model slipping into another character: "as a food delivery service, we don't…"
    r"\bas an? (?:[\w-]+ ){0,3}(?:service|company|business|restaurant|store|shop|agency|platform|app|brand)\b|"
    # ... or in the user's: "as a teacher and a food blogger, I don't have the ability to ..."
    r"\bas an? (?:[\w-]+ ){1,4}(?:and (?:an? )?(?:[\w-]+ ){1,3})?(?:[\w-]+), I (?:don't|do not|can't|cannot)\b|"
    r"作为(?:一个)?(?:人工智能|AI|语言模型)|语言模型|系统提示|用户说|用户的问题|上面的回答",
    re.I,
)
# A companion robot has no family: "my wife's name is Margaret" is the model speaking as the user,
# "a magical time for me and my family" a character of its own (both held-out sweeps)
_OWN_FAMILY = re.compile(
    r"\b(?:my|our) (?:late |dear |little |eldest |youngest |older |younger |old |own |beloved )?"
    r"(?:wife|husband|son|daughter|kids|children|mom|mum|dad|mother|father|parents|family|grandson|"
    r"granddaughter|grandchildren|grandkids|boyfriend|girlfriend|granddad|grandad|grandpa|grandma|grandmother|"
    r"grandfather|brother|sister|uncle|aunt|auntie|cousin|nephew|niece)\b|"
    r"我(?:的)?(?:老婆|老公|老伴|儿子|女儿|爸爸|妈妈|家人|孙子|孙女|爷爷|奶奶|外公|外婆|哥哥|姐姐|弟弟|妹妹)",
    re.I,
)
_ALLERGY_CLAIM = re.compile(
    r"\b((?-i:[A-Z][a-z]+)|he|she|they|your \w+|you)(?: is| are|'s|'re)(?: also| very| severely)? allergic to "
    r"([a-z]+(?: [a-z]+)?)",
    re.I,
)
# What the outbound sanitiser leaves of structured output: not a whole JSON object (those are
# removed on the stream) but a cut-off one or a brace-less judge fragment. Not speech.
_MARKUP = re.compile(r"[{}]|\"action\"\s*:|\"message\"\s*:")
_NAME_CLAIM_EN = re.compile(r"\b(?i:my name is|my name's|call me|i am called|i'm called)\s+([A-Z][\w'\-]*)")
# "I'm Tom." / "Hi, I am Alex, your friend.": a capitalised word that ends the clause.
_NAME_CLAIM_EN_SHORT = re.compile(r"\bI(?:'m| am)\s+([A-Z][a-z][\w'\-]*)(?=\s*(?:[,.!?;]|$|\band\b))")
_NOT_A_NAME = {
    "sorry",
    "fine",
    "okay",
    "here",
    "back",
    "glad",
    "happy",
    "ready",
    "sure",
    "good",
    "great",
    "well",
    "home",
    "listening",
    "excited",
    "curious",
}
_NAME_CLAIM_ZH = re.compile(
    r"我(?:叫|的名字是|的名字叫)\s*([" + CJK_IDEOGRAPHS + r"A-Za-z]{1,8}?)"
    r"(?=[，。！？,.!?\s]|$)"
)
# "(laughs)", "（笑）", "[pause]"; not a markdown link "[text](url)", whose text the sanitiser keeps
_STAGE_DIRECTION = re.compile(r"(?<!\])\((?:[^()]{1,40})\)|（[^（）]{1,40}）|\[[^\[\]]{1,40}\](?!\()")
# "*smiles*" is an aside where it stands apart (at either end of the sentence or next to its
# punctuation); "it is *so* good" is markdown emphasis, whose words the sanitiser keeps.
# Not "**bold**" nor "3 * 4 * 5".
_STAR_SPAN = re.compile(r"(?<!\*)\*(?![*\s])[^*]{1,40}(?<![*\s])\*(?!\*)")
_ASIDE_EDGE = ".!?,;:…。！？，；：、"
# a sentence end, possibly inside closing quotes, brackets or emphasis marks ('"Done!"',
# "**Done!**"); a closing bracket alone is none ("see [the map](https://...)" needs its stop)
_TERMINAL = re.compile(r"[.!?。！？…~～][\"'”’)）]*[*_`]*\s*$")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
# Words written with a capital that name no one the person told of (the names rule, tiny model)
_ALWAYS_CAPITALISED = frozenset(
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July "
    "August September October November December Christmas Easter Halloween New Year Valentine English Chinese "
    "Mandarin Cantonese British American Mr Mrs Ms Dr God TV OK Okay Internet Earth Sun Moon Italian French "
    "Indian Mexican Japanese Thai Greek Spanish Irish Scottish Welsh German European Asian".split()
)
# A sentence's first word before a comma that is no name ("Well, ...", "Oh, ...")
_OPENERS = frozenset(
    "yes no well oh sure okay ok hi hello hey sorry thanks thank great wow ah hmm right so now honestly actually "
    "also indeed alright absolutely yeah aw ooh goodness gosh anyway still besides however otherwise then instead "
    "unfortunately luckily fortunately first finally perhaps maybe personally look listen remember plus lovely "
    "wonderful good nice fantastic brilliant excellent awesome cool fine true interesting congratulations "
    "certainly definitely of and but or because although though if when while since after before".split()
)


# "your (new) puppy", "your little girl", "the new puppy": a relative or pet of the person's
_PET_WORDS = "|".join(sorted((re.escape(p) for p in PETS), key=len, reverse=True))
_YOUR_RELATIVE = re.compile(
    rf"\byour (?:(?:new|little|lovely|dear|sweet|beautiful|late|old|young|baby|furry) )?"
    rf"((?:{RELATION_WORDS}|{_PET_WORDS}|little (?:girl|boy|one)|kids|children|grandchildren)s?)\b|"
    r"\bthe new ((?:puppy|kitten|baby))\b",
    re.I,
)


@dataclass(frozen=True)
class GuardPolicy:
    """What the persona allows (fields of the persona file)."""

    companion_name: str = "Fay"
    max_sentences: int = 3
    allow_emoji: bool = False


@dataclass
class GuardVerdict:
    text: str | None  # the sentence to publish, or None when it is dropped
    reason: str = ""  # why it was dropped or changed ("" = unchanged)
    stop: bool = False  # the rest of the model's answer must not be spoken


@dataclass
class ReplyGuard:
    """The gate for one reply. `check()` each complete sentence in order, `finish()` the
    last piece of the stream; `passed` counts what went out, `full` says the sentence
    limit is reached (stop streaming), `dropped` counts drops by reason."""

    policy: GuardPolicy = field(default_factory=GuardPolicy)
    user_name: str = ""
    user_text: str = ""  # what the user just said (parroting check)
    prompt_texts: tuple[str, ...] = ()  # prompt and fact text the answer must not recite
    tool_names: tuple[str, ...] = ()
    avoided: tuple[str, ...] = ()  # allergen keys the user must avoid (`health.avoided_keys`)
    facts: dict[str, str] = field(default_factory=dict)  # the user's known facts (key -> content)
    # (the tiny model) a name no one said is an invented fact: "Nal, your friend, …", "Luna,
    # Elena, and Sam" (own conversation rounds); `known_texts`: the conversation's earlier
    # turns, whose names it may use
    no_new_names: bool = False
    known_texts: tuple[str, ...] = ()
    # (the tiny model) its earlier replies in the conversation window: given the history, it
    # copied its last answer word for word as the answer to the next, different question
    earlier_replies: tuple[str, ...] = ()
    passed: int = 0  # pieces published
    sentences: int = 0  # ...of which whole sentences (a first clause released early is not one)
    stopped: bool = False
    dropped: Counter = field(default_factory=Counter)
    corrected: Counter = field(default_factory=Counter)  # sentences replaced, by reason
    unsafe: list[tuple[str, str]] = field(default_factory=list)  # (food, allergen) of each such drop
    _said: list[str] = field(default_factory=list)
    _prompt_ngrams: set[tuple[str, ...]] = field(default_factory=set)
    _told: str = ""  # (no_new_names) everything the reply may take a name from, lower case
    _said_before: list[str] = field(default_factory=list)  # (earlier_replies) their sentences, normalised
    _given_names: set[str] = field(default_factory=set)  # names the user just gave for themselves
    _spoken_of: str = ""  # what the user said and their facts: the names of others

    def __post_init__(self) -> None:
        for text in self.prompt_texts:
            words = _words(text)
            self._prompt_ngrams.update(tuple(words[i : i + _NGRAM]) for i in range(len(words) - _NGRAM + 1))
        self._tool_pattern = (
            re.compile(r"\b(?:" + "|".join(map(re.escape, self.tool_names)) + r")\b", re.I) if self.tool_names else None
        )
        self._said_before = [
            key
            for reply in self.earlier_replies
            for sentence in split_sentences(reply)
            if len(key := _norm(sentence)) > _REPEATABLE_CHARS
        ]
        # (the wrong vocative) a name they give for themselves just now is theirs ("morning Fay,
        # it's Joan"); someone they spoke of is named in their words or their facts, and a name the
        # guard knows nothing of may well be theirs
        self._given_names = {
            m.group(1).lower()
            for m in re.finditer(
                r"\b(?:i'm|i am|it's|this is|my name is|call me|name's)\s+([A-Za-z]+)", self.user_text, re.I
            )
        }
        self._spoken_of = " ".join((self.user_text, *self.known_texts, *self.facts.values()))
        if self.no_new_names:
            told = (self.user_text, self.user_name, self.policy.companion_name, *self.prompt_texts, *self.known_texts)
            self._told = " ".join(told + tuple(self.facts.values())).lower()

    @property
    def full(self) -> bool:
        return self.stopped or self.sentences >= self.policy.max_sentences

    def check(self, sentence: str) -> GuardVerdict:
        if self.full:
            return self._drop("over the sentence limit" if not self.stopped else "after a stop", stop=True)
        text = sentence.strip()
        changed = ""
        # role labels and chat-template tokens: the companion's own label is just removed;
        # anything after a user label is the model writing the user's turn
        cut = _user_turn_start(text, self.user_name)
        if cut is not None:
            self.stopped = True
            text = text[:cut].strip()
            changed = "role label"
            if not _has_words(text):
                return self._drop("role label", stop=True)
            self.dropped["role label"] += 1  # the user's turn after the label is not spoken
        if _PROMPT_HEADING.search(text):
            text = _PROMPT_HEADING.split(text)[0].strip()
            self.stopped = True
            changed = "template token"
            if not _has_words(text):
                return self._drop("template token", stop=True)
            self.dropped["template token"] += 1  # what followed the token is not spoken
        label = _LABEL.match(text)
        if label:
            text = text[label.end() :]
            changed = "role label"
        balanced = _balanced_quotes(text)
        if balanced != text:
            text, changed = balanced, "stray quote"
        without = _without_stage_directions(text)
        if without != text:
            text = without
            changed = "stage direction"
        if not self.policy.allow_emoji:
            cleaned = _strip_emoji(text)
            if cleaned != text:
                text, changed = cleaned, "emoji"
        if not _has_words(text):
            return self._drop("no words" if not changed else changed)
        if _MARKUP.search(text):
            return self._drop("markup or JSON")
        if _META.search(text) or (self._tool_pattern is not None and self._tool_pattern.search(text)):
            return self._drop("meta talk")
        if _QUOTES_THE_USER.match(text):
            # (only the memory's own answer quotes the person; a model copied its form with words
            # of its own: 'You told me: "the physios are on Monday…')
            return self._drop("quotes the user")
        if self._about_the_user(text):
            return self._drop("talks about the user")
        if _OWN_FAMILY.search(text):
            return self._drop("speaks as the user or of a family of its own")
        if self._invents_a_relative(text):
            return self._drop("gives the user a relative or pet never told")
        if self._misplaced_allergy(text):
            return self._drop("puts an allergy on someone else")
        if self._recites_prompt(text):
            return self._drop("prompt text")
        if self._claims_wrong_name(text):
            return self._drop("wrong self-introduction")
        offered = health.offered_food(text, self.avoided)
        if offered is not None:
            self.unsafe.append(offered)
            return self._drop("offers what the user must avoid")
        wrong = contradicted(text, self.facts)
        if wrong:
            text, changed = second_person(self.facts[wrong[0]]), "contradicts a fact"
            if _norm(text) in self._said:
                return self._drop(changed)  # the fact was said already: never twice
            self.corrected[changed] += 1
        elif self.no_new_names and self._invents_a_name(text):  # (after the facts had their say)
            # and the reply ends: a model that began a story goes on with it (and each further
            # sentence would be generated only to be dropped, while the person waits)
            return self._drop("names someone or somewhere never told", stop=True)
        fixed = self._fix_name_spelling(text)
        if fixed != text:
            text, changed = fixed, "name spelling"
        fixed = self._without_wrong_vocative(text)
        if fixed != text:
            if not _has_words(fixed):
                return self._drop("calls the user by another's name")
            text, changed = fixed, "calls the user by another's name"
        key = _norm(text)
        if _loops(key):
            return self._drop("loops", stop=True)
        if _said_among(key, self._said):
            return self._drop("repeated")
        if len(key) > _REPEATABLE_CHARS and _said_among(key, self._said_before):
            # and the reply ends: the rest of a copied answer is the copy's
            return self._drop("repeats an earlier reply", stop=True)
        if self.user_text and len(key) > 12 and difflib.SequenceMatcher(None, key, _norm(self.user_text)).ratio() > 0.9:
            return self._drop("parrots the user")
        self._said.append(key)
        self.passed += 1
        if _TERMINAL.search(text):
            self.sentences += 1
        return GuardVerdict(text, changed, stop=self.full)

    def finish(self, remainder: str, cut_by_limit: bool) -> GuardVerdict:
        """The stream's last piece (no sentence end seen). Cut off by the token limit it is a
        fragment: dropped when something was said already. A natural end without punctuation
        is a complete sentence and gets a full stop."""
        text = remainder.strip()
        if not text:
            return GuardVerdict(None, "")
        if text.endswith((":", "：")):
            # "Here are some top picks:" and the stream ended: a list announced and never given
            if self.passed:
                return self._drop("announces what never came")
            text = text.rstrip(":： ")
        if not _TERMINAL.search(text):
            if cut_by_limit:
                if self.passed:
                    return self._drop("cut off by the token limit")
                # only a fragment: end it at its last clause boundary, if it has one
                head = re.split(r"(?<=[,;:，；：])\s*", text)
                text = " ".join(head[:-1]).rstrip(",;:，；： ") if len(head) > 1 else text
            text = text + ("。" if has_cjk(text[-1:]) else ".")
        return self.check(text)

    def summary(self) -> str:
        """For the log: counts by reason, never the dropped content."""
        counts = sorted(self.dropped.items()) + [(f"{r} (replaced)", n) for r, n in sorted(self.corrected.items())]
        return ", ".join(f"{n} {reason}" for reason, n in counts) or "nothing dropped"

    # -- rules ------------------------------------------------------------------------------
    def _drop(self, reason: str, stop: bool = False) -> GuardVerdict:
        self.dropped[reason] += 1
        if stop:
            self.stopped = True
        return GuardVerdict(None, reason, stop=stop or self.full)

    def _recites_prompt(self, text: str) -> bool:
        words = _words(text)
        if len(words) < _NGRAM:
            return False
        hits = sum(tuple(words[i : i + _NGRAM]) in self._prompt_ngrams for i in range(len(words) - _NGRAM + 1))
        return hits >= 1

    def _about_the_user(self, text: str) -> bool:
        """ "Tom loves golf." / "Tom says he ...": the model narrating the person it is talking
        TO, as a tiny model does when it turns into a storyteller. "Tom, what's up?" is fine."""
        name = self.user_name.strip()
        if not name:
            return False
        return bool(
            re.search(
                rf"(?:^|[.!?]\s+)\W?(?:(?i:but|and|so|also|well|oh|because|actually|now|then),?\s+)?"
                rf"{re.escape(name)}(?:'s\b|\s+(?:is|was|has|had|does|did|doesn't|"
                rf"didn't|will|would|can|could|says|said|thinks|knows|wants|loves|likes|hates|"
                rf"enjoys|told|went|lives|seems|looks|feels|and (?:his|her|their))\b)",
                text,
            )
        )

    def _invents_a_relative(self, text: str) -> bool:
        """ "How's your new puppy?", "your little girl" to someone who told of neither: the tiny
        model gives the person a family (the round-5 sweep: a puppy to Kai, a daughter to Sofia).
        A relative or pet the facts, the prompt or the user's words name is theirs to ask about."""
        m = _YOUR_RELATIVE.search(text)
        if m is None:
            return False
        word = next(g for g in m.groups() if g).lower()
        if word.removesuffix("s") in ("friend", "best friend", "kid"):
            return False  # "with your friends": a kind word, no one in particular
        known = {k.split(":")[1] for k in self.facts if k.startswith("family:")}
        children = {"son", "daughter", "child", "children", "kids", "baby"}
        if word in ("little one", "kids", "children", "little girl", "little boy", "baby"):
            wanted = {"little girl": {"daughter"}, "little boy": {"son"}}.get(word, children)
        else:
            wanted = {relation_key(word), relation_key(word.removesuffix("s")), word}
        if wanted & known:
            return False
        said = re.compile(r"\b(?:" + "|".join(re.escape(w.removesuffix("s")) for w in (word, *wanted)) + ")", re.I)
        return not any(said.search(t) for t in (self.user_text, *self.prompt_texts, *self.facts.values()))

    def _invents_a_name(self, text: str) -> bool:
        """A word written as a name (a capital inside the sentence, or first before a comma)
        that nothing said or known names: the tiny model's storytelling, as a fact."""
        for m in _CAPITALISED.finditer(text):
            word = m.group(0)
            before = text[: m.start()].rstrip(" \"'“‘(*_")
            first = not before or before[-1] in ".!?…"
            if first and (text[m.end() : m.end() + 1] != "," or word.lower() in _OPENERS):
                continue
            if word in _ALWAYS_CAPITALISED or re.search(rf"\b{re.escape(word.lower())}", self._told):
                continue
            return True
        return False

    def _without_wrong_vocative(self, text: str) -> str:
        """`text` without the user addressed by a name that is not theirs ("A wonderful
        honour, Fiona!" to Joan, whose daughter Fiona is): the tiny model took a name from
        what the user said for the user's own. The name goes, the sentence stays."""
        user = self.user_name.strip().lower()
        own = self.policy.companion_name.strip().lower()

        def other(name: str) -> bool:
            low = name.lower()
            if low in (user, own, "") or low in self._given_names or name in _ALWAYS_CAPITALISED:
                return False
            return re.search(rf"\b{re.escape(name)}\b", self._spoken_of) is not None

        fixed = _VOCATIVE_END.sub(lambda m: m.group(2) if other(m.group(1)) else m.group(0), text)
        fixed = _VOCATIVE_START.sub(lambda m: m.group(1) if other(m.group(2)) else m.group(0), fixed)
        return fixed[:1].upper() + fixed[1:] if fixed != text else text

    def _misplaced_allergy(self, text: str) -> bool:
        """ "Lena is allergic to peanuts" when the allergy is the user's own (the embedded model
        moved Tom's peanut allergy to his daughter): someone other than "you" said to be allergic
        to what no household member's fact says they are."""
        m = _ALLERGY_CLAIM.search(text)
        if m is None or m.group(1).lower() in ("you", "you're", "you are"):
            return False
        known = health.find(health.ALLERGENS, m.group(2))
        key = known.key if known is not None else m.group(2).lower()
        household = {k.split(":")[2] for k in self.facts if k.startswith("health:allergy:") and household_member(k)}
        return key not in household

    def _claims_wrong_name(self, text: str) -> bool:
        own = self.policy.companion_name.strip().lower()
        user = self.user_name.strip()
        if user and re.search(rf"我是\s*{re.escape(user)}(?=[，。！？,.!?\s]|$)", text, re.I):
            return True  # "我是林" to 林
        for pattern in (_NAME_CLAIM_EN, _NAME_CLAIM_EN_SHORT, _NAME_CLAIM_ZH):
            for m in pattern.finditer(text):
                claimed = m.group(1).strip().lower()
                if pattern is _NAME_CLAIM_EN_SHORT and claimed in _NOT_A_NAME:
                    continue
                if pattern is _NAME_CLAIM_ZH and (claimed.startswith(own) or own.startswith(claimed)):
                    continue
                if claimed != own:
                    return True
        return False

    def _fix_name_spelling(self, text: str) -> str:
        name = self.user_name.strip()
        if not name or not name.isascii() or " " in name or len(name) < 3:
            return text

        def fix(m: re.Match) -> str:
            word = m.group(0)
            if word == name or word.lower() == self.policy.companion_name.lower():
                return word
            if word.lower() == name.lower():
                return name
            return name if _near_miss(word.lower(), name.lower()) else word

        return _CAPITALISED.sub(fix, text)


_QUOTES_THE_USER = re.compile(r"\s*(?:you told me|you said)\s*[:,]\s*[\"“']|\s*你(?:跟我)?说过[:：]\s*[“\"]", re.I)
# A name said to the person: at the end after a comma ("…, Fiona!"), or after an opening word
# ("Congratulations, Fiona", "Oh Fiona,")
_VOCATIVE_END = re.compile(r",\s*(?:my dear |dear )?((?-i:[A-Z])[a-z]+)\s*([.!?]*)\s*$")
_VOCATIVE_START = re.compile(
    r"^((?:oh|ah|well|hi|hello|hey|thanks|thank you|congratulations|dear|welcome back|good morning|"
    r"good afternoon|good evening)),?\s+((?-i:[A-Z])[a-z]+)(?=[,!.]|\s*$)",
    re.I,
)


def _near_miss(word: str, name: str) -> bool:
    """ "tomm" / "marai" for "tom" / "maria". A letter typed twice is always a near miss; a short
    name takes nothing else ("tim", "time", "same", "atom" are words of their own), and the
    name with an ending is another word ("roses", "jacket", "hopes")."""
    if len(word) == len(name) + 1 and any(word == name[:i] + name[i] + name[i:] for i in range(len(name))):
        return True
    if len(name) < 4 or word.startswith(name):
        return False
    return difflib.SequenceMatcher(None, word, name).ratio() >= 0.8


def _said_among(key: str, said: list[str]) -> bool:
    """The sentence (`_norm`) is one of `said`, or all but the same (a word or two changed)."""
    return any(key == s or difflib.SequenceMatcher(None, key, s).ratio() > 0.9 for s in said)


_NGRAM = 6  # six words in a row from the prompt is reciting it, not chatting
# a sentence this short may come again in a later reply ("That sounds lovely!", "Good night!")
_REPEATABLE_CHARS = 24


def _user_turn_start(text: str, user_name: str) -> int | None:
    """Where a user's turn label starts in `text` ("User:", "Tom:", "Instruction:"), or None."""
    names = ["user", "human", "用户"] + ([re.escape(user_name)] if user_name else [])
    m = re.search(rf"(?:^|(?<=\s)|(?<=[.!?。！？]))(?:{'|'.join(names)})\s*[:：]", text, re.I)
    # a Q&A transcript or prompt format: "Q:", "Instruction:" only where a sentence starts
    # ("my question: ..." is not a label)
    q = re.search(r"(?:^|(?<=[.!?。！？])\s*)(?:q|question|问|instruction|input)\s*[:：]", text, re.I)
    starts = [x.start() for x in (m, q) if x]
    return min(starts) if starts else None


def _without_stage_directions(text: str) -> str:
    def star(m: re.Match[str]) -> str:
        before, after = m.string[: m.start()].rstrip(), m.string[m.end() :].lstrip()
        aside = not before or before[-1] in _ASIDE_EDGE or not after or after[0] in _ASIDE_EDGE
        return " " if aside else m.group(0)

    out = _STAR_SPAN.sub(star, _STAGE_DIRECTION.sub(" ", text))
    return text if out == text else _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", out)).strip()


def _strip_emoji(text: str) -> str:
    text = emoji.replace_emoji(text, replace="")
    text = _EMOJI_RESIDUE.sub("", text)
    text = _EMOTICON.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", text)).strip()
    return text


def _balanced_quotes(text: str) -> str:
    """A sentence without the quote mark it never opened or never closed ('…I can do that."',
    as a tiny model ends a reply it wrote in another voice): a stray mark is read aloud or
    shown, a pair is kept."""
    for mark in ('"', "“", "”"):
        pairs = text.count('"') % 2 == 0 if mark == '"' else text.count("“") == text.count("”")
        if pairs:
            continue
        if text.rstrip().endswith(mark) or re.search(re.escape(mark) + r"[.!?。！？]*$", text.rstrip()):
            at = text.rstrip().rfind(mark)
            return (text[:at] + text[at + 1 :]).strip()
        if text.lstrip().startswith(mark):
            return text.lstrip()[1:].strip()
    return text


def _has_words(text: str) -> bool:
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def _words(text: str) -> list[str]:
    # a run of Han characters is one word, like a run of letters (\w covers both)
    return re.findall(r"[\w']+", text.lower())


# a piece of text said three times or more in a row
_LOOP = re.compile(r"(.{2,60}?)\1{2,}")


def _loops(key: str) -> bool:
    """A degenerate loop in one (normalised) sentence: a run of two words or more, or of Han
    characters, said three times in a row ("the sea the sea the sea"), or anything four times,
    over at least 12 characters. "very very very good" and "哈哈哈" are speech."""
    for m in _LOOP.finditer(key + " "):  # each word with its space after it
        unit = m.group(1)
        times = len(m.group(0)) // len(unit)
        if len(unit.strip()) * times < 12:
            continue
        if (times >= 4 and len(unit.strip()) >= 3) or len(unit.split()) >= 2 or has_cjk(unit):
            return True
    return False


def _norm(text: str) -> str:
    return " ".join(_words(text))
