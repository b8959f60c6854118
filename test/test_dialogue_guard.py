"""The pure pieces of the tiny/capable dialogue: the reply guard (`fay_ros.dialogue.guard`),
answers from the user's own facts (`fact_answers`) and the model profile choice (`profiles`).

The bad outputs here are what the embedded SmolLM2-135M (and now and then a bigger model)
really writes; the good ones are ordinary answers that must pass the guard unchanged."""

from __future__ import annotations

import re

import pytest

from fay_ros.dialogue import fact_answers
from fay_ros.dialogue.guard import GuardPolicy, ReplyGuard
from fay_ros.llm.embedded import EMBEDDED_MODEL, EMBEDDED_PORT
from fay_ros.llm.profiles import CAPABLE, TINY, resolve

PERSONA = (
    "You are Fay, a small companion robot who lives at home with the user.\n"
    "You are warm, curious and cheerful, and you speak briefly: one to three short sentences.\n"
    "You talk like a friend, never like a search engine, and you never use markdown or emoji."
)
TOOLS = ("memory_recall", "web_search", "get_time")


def guard(**changes) -> ReplyGuard:
    """A guard as the engine builds it: Fay talking with Tom, who just asked how she is."""
    kwargs = (
        dict(
            policy=GuardPolicy("Fay", 3, False),
            user_name="Tom",
            user_text="How are you doing today?",
            prompt_texts=(PERSONA,),
            tool_names=TOOLS,
        )
        | changes
    )
    return ReplyGuard(**kwargs)


def one(sentence: str, **changes):
    g = guard(**changes)
    return g.check(sentence), g


# -- good answers pass unchanged ----------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm doing great, thanks for asking!",
        "You like hiking and coffee.",
        "Call me anytime you want to chat.",
        "Call me when you are back home.",
        "Nice to meet you, Tom!",
        "Your name is Tom.",
        "I'm Fay, your companion robot!",
        "My name is Fay.",
        "I am Fay, and I love our little chats.",
        "I'm so glad you asked.",
        "I am happy to help.",
        "Time flies when we talk.",
        "Tomorrow will be sunny, perfect for a walk.",
        "Thomas Edison invented the light bulb.",
        "Tim is a lovely name for a cat.",
        "The meeting is at 8:30 in the morning.",
        "Paris is the capital of France.",
        "That sounds like a wonderful plan!",
        "Do you want to hear a joke?",
        "It is 3 o'clock now.",
        "我是一个机器人。",
        "你好，我是Fay。",
        "我叫Fay，很高兴认识你！",
        "今天天气很好，我们去散步吧。",
        "你喜欢爬山和咖啡。",
        "我很好，谢谢你的关心！",
    ],
)
def test_ordinary_good_answers_pass_unchanged(sentence):
    verdict, g = one(sentence)
    assert (verdict.text, verdict.reason, verdict.stop) == (sentence, "", False)
    assert g.passed == 1 and not g.dropped and g.summary() == "nothing dropped"


def test_a_full_good_reply_passes_sentence_by_sentence():
    g = guard()
    reply = ["I'm doing great, thanks for asking!", "I spent the morning watching the rain.", "How about you, Tom?"]
    verdicts = [g.check(s) for s in reply]
    assert [v.text for v in verdicts] == reply
    assert [v.stop for v in verdicts] == [False, False, True]  # the third reaches the limit: stop streaming
    assert g.full and g.passed == 3 and not g.dropped


# -- bad sentences are dropped, by reason --------------------------------------------------------


@pytest.mark.parametrize(
    "sentence, reason",
    [
        # the user's name as the companion's own (SmolLM2 copies the name it was just told)
        ("Hello, my name is Tom!", "wrong self-introduction"),
        ("Hi, I'm Tom.", "wrong self-introduction"),
        ("I'm Tom!", "wrong self-introduction"),
        ("My name is Tom and I like tea.", "wrong self-introduction"),
        # any name but her own
        ("My name is Alex.", "wrong self-introduction"),
        ("I am Alex, your friendly robot.", "wrong self-introduction"),
        ("You can call me Sophie.", "wrong self-introduction"),
        ("我叫小明。", "wrong self-introduction"),
        ("我的名字是小明。", "wrong self-introduction"),
        ("我叫汤姆，很高兴认识你。", "wrong self-introduction"),
        # the judge's / prompt's voice instead of a companion's
        ("The above answer is correct.", "meta talk"),
        ("The user has already answered.", "meta talk"),
        ("The user's question is about the weather.", "meta talk"),
        ("As an AI language model, I cannot feel.", "meta talk"),
        ("I will respond with three sentences.", "meta talk"),
        ("This is small talk.", "meta talk"),
        ("Let me call memory_recall.", "meta talk"),
        ("I can use web_search for that.", "meta talk"),
        ("作为一个人工智能，我没有感情。", "meta talk"),
        ("用户说他很累。", "meta talk"),
        # another character (held-out sweep: the 135M model answering a snack request)
        ("I'm sorry, but as a food delivery service, we don't have the ability to provide meals.", "meta talk"),
        ("As a small local business, we pride ourselves on quality.", "meta talk"),
        ("I'm sorry, but as a teacher and a food blogger, I don't have the ability to give advice.", "meta talk"),
        # the companion has no family: the model speaking as the user, or a character of its own
        ("My wife's name is Margaret and she loves to bake.", "speaks as the user or of a family of its own"),
        ("Spring is a magical time for me and my family.", "speaks as the user or of a family of its own"),
        ("My late husband's name is Jack.", "speaks as the user or of a family of its own"),
        ("It's a tablet from my granddad, he always used it.", "speaks as the user or of a family of its own"),
        ("我的老伴也喜欢京剧。", "speaks as the user or of a family of its own"),
        # what the outbound sanitiser leaves of a judge JSON: a cut-off object, a brace-less fragment
        # (whole objects, think text and code never reach the guard: test_dialogue_outbound.py)
        ('{"action": "finish"', "markup or JSON"),
        ('"action": "tool", "keyword": "weather"', "markup or JSON"),
        # reciting the persona prompt
        ("You are warm, curious and cheerful, and you speak briefly.", "prompt text"),
        ("I talk like a friend, never like a search engine.", "prompt text"),
        # nothing left to say
        ("😊😊😊", "emoji"),
        ("(laughs)", "stage direction"),
        ("...", "no words"),
        # a degenerate loop (greedy decoding of a tiny model)
        ("I love the sea, the sea, the sea, the sea.", "loops"),
        ("We can go and we can go and we can go and we can go.", "loops"),
        ("我喜欢大海我喜欢大海我喜欢大海。", "loops"),
        # the user's words parroted back
        ("How are you doing today?", "parrots the user"),
    ],
)
def test_bad_sentences_are_dropped_with_their_reason(sentence, reason):
    verdict, g = one(sentence)
    assert verdict.text is None and verdict.reason == reason
    assert g.passed == 0 and g.dropped == {reason: 1}


@pytest.mark.parametrize(
    "sentence, cleaned, reason",
    [
        ("😊😊 Great!", "Great!", "emoji"),
        ("Great! 😊", "Great!", "emoji"),
        ("I love you ❤️!", "I love you!", "emoji"),
        ("That is so funny :D", "That is so funny", "emoji"),
        ("Tea or coffee? :P", "Tea or coffee?", "emoji"),
        ("See you soon <3", "See you soon", "emoji"),
        ("Well, that's it ^_^", "Well, that's it", "emoji"),
        ("你好😊！", "你好！", "emoji"),
        ("(laughs) It is vast.", "It is vast.", "stage direction"),
        ("*smiles* Hello there!", "Hello there!", "stage direction"),
        ("[pause] Okay, let me think.", "Okay, let me think.", "stage direction"),
        ("The sea is big (giggles).", "The sea is big.", "stage direction"),
        ("（笑）好久不见！", "好久不见！", "stage direction"),
        ("*smiles* I **really** missed you!", "I **really** missed you!", "stage direction"),
        ("Of course! *waves*", "Of course!", "stage direction"),
        ("Fay: I'm right here.", "I'm right here.", "role label"),
        ("Assistant: Hello there!", "Hello there!", "role label"),
        ("助手：你好！", "你好！", "role label"),
        ("Tomm, it is nice to see you.", "Tom, it is nice to see you.", "name spelling"),
        ("Good morning, Tomm!", "Good morning, Tom!", "name spelling"),
        ("How was your day, Toom?", "How was your day, Tom?", "name spelling"),
        ('But if you like, I can certainly do that."', "But if you like, I can certainly do that.", "stray quote"),
        ('"Let us go for a walk.', "Let us go for a walk.", "stray quote"),
    ],
)
def test_unspeakable_parts_are_removed_and_the_rest_is_said(sentence, cleaned, reason):
    verdict, g = one(sentence)
    assert (verdict.text, verdict.reason, verdict.stop) == (cleaned, reason, False)
    assert g.passed == 1


def test_an_allergy_is_never_put_on_someone_else():
    # the embedded model moved Tom's own peanut allergy to his daughter Lena
    facts = {
        "health:allergy:peanut": "User is allergic to peanuts.",
        "family:daughter": "User's daughter is called Lena.",
    }
    verdict = guard(facts=facts).check("Lena is allergic to peanuts, so she doesn't know what you eat.")
    assert verdict.text is None and verdict.reason == "puts an allergy on someone else"
    assert guard(facts=facts).check("You're allergic to peanuts, so let's pick apples.").text
    household = {"health:allergy:peanut:son": "User's son Oliver is allergic to peanuts."}
    assert guard(facts=household).check("Oliver is allergic to peanuts, so let's pick apples.").text


@pytest.mark.parametrize(
    "sentence", ['He said "hi" to me.', "“Quoted” text is fine.", "As a friend, I think you'd love it."]
)
def test_paired_quotes_and_ordinary_as_phrases_pass(sentence):
    assert guard().check(sentence).text == sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "I **really** missed you!",
        "It is *so* good to see you.",
        "Read [the guide](https://example.com/guide) first.",
        "Three * four * five is sixty.",
        "**Done!**",
    ],
)
def test_markdown_is_left_to_the_sanitiser_and_not_taken_for_a_stage_direction(sentence):
    """The guard sees a sentence before its inline marks are removed: emphasis, link text and
    arithmetic are words to keep (the sanitiser unwraps them), not "(laughs)"-style asides."""
    verdict, g = one(sentence)
    assert (verdict.text, verdict.reason) == (sentence, "")
    assert g.sentences == 1, "a sentence end inside closing emphasis marks still ends a sentence"


def test_emoji_stay_when_the_persona_allows_them():
    verdict, _ = one("😊😊 Great!", policy=GuardPolicy(allow_emoji=True))
    assert verdict.text == "😊😊 Great!" and verdict.reason == ""


def test_the_companions_own_name_in_other_wording_and_a_different_persona_name():
    assert one("我是Fay。")[0].text == "我是Fay。"
    g = guard(policy=GuardPolicy(companion_name="Nova"))
    assert g.check("My name is Nova.").text == "My name is Nova."
    assert g.check("My name is Fay.").reason == "wrong self-introduction"


def test_a_chinese_user_name_as_the_companions_own_is_dropped():
    g = guard(user_name="林", user_text="你好")
    assert g.check("我是林。").reason == "wrong self-introduction"
    assert g.check("我是林业局的机器人。").text == "我是林业局的机器人。"  # 林 starts a word, not a name here


# -- the user's turn, template tokens: stop the reply ----------------------------------------------


def test_a_user_label_mid_reply_stops_the_reply():
    g = guard()
    assert g.check("Sure thing!").text == "Sure thing!"
    verdict = g.check("User: what is my name?")
    assert verdict.text is None and verdict.stop and verdict.reason == "role label"
    after = g.check("Your name is Tom.")  # the model answering its own invented question
    assert after.text is None and after.stop
    assert g.full and g.passed == 1
    assert g.dropped == {"role label": 1, "after a stop": 1}


@pytest.mark.parametrize(
    "sentence, kept, reason",
    [
        ("Sure. User: what is my name?", "Sure.", "role label"),
        ("Good night. Tom: good night Fay!", "Good night.", "role label"),
        ("Okay! Instruction: say more.", "Okay!", "role label"),
        ("Okay! ### Instruction: say more.", "Okay!", "template token"),
        # the prompt's own block heading, copied by the embedded model after its answer
        ("Sleep well. You remember: the user likes tea.", "Sleep well.", "template token"),
    ],
)
def test_what_comes_before_a_turn_marker_is_said_and_the_rest_is_dropped(sentence, kept, reason):
    verdict, g = one(sentence)
    assert (verdict.text, verdict.reason, verdict.stop) == (kept, reason, True)
    assert g.full and g.passed == 1
    assert g.dropped[reason] == 1, "the cut-off tail is a drop and is counted for the log"
    assert g.check("More words.").text is None


@pytest.mark.parametrize(
    "sentence, reason",
    [
        ("User: what is my name?", "role label"),
        ("Human: tell me a joke.", "role label"),
        ("用户：我叫什么？", "role label"),
        ("Tom: what's up?", "role label"),
        ("Instruction: say hi", "role label"),  # "### Instruction:" after the sanitiser took the heading marks
        ("### Instruction: say hi", "template token"),
        ("You remember:", "template token"),  # seen from SmolLM2 after "Thank you, good night!"
        ("Rules you must follow: be brief.", "template token"),
    ],
)
def test_a_sentence_that_is_only_a_turn_marker_is_dropped_and_stops(sentence, reason):
    verdict, g = one(sentence)
    assert (verdict.text, verdict.reason, verdict.stop) == (None, reason, True)
    assert g.dropped == {reason: 1} and g.full


# -- the user's name --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, sentence, expected",
    [
        ("Tom", "Tomm, hello!", "Tom, hello!"),
        ("Tom", "Hi Ttom!", "Hi Tom!"),
        ("Tom", "Tim is here.", "Tim is here."),  # another name: a short one needs a closer match
        ("Tom", "Tommy is my friend.", "Tommy is my friend."),
        ("Tom", "Atom bombs are scary.", "Atom bombs are scary."),
        ("Tim", "Time flies when we talk.", "Time flies when we talk."),
        ("Sam", "Same here!", "Same here!"),
        ("Eve", "Even so, I am happy.", "Even so, I am happy."),
        ("Jon", "Join me for a song!", "Join me for a song!"),
        ("Ann", "Anne is her sister.", "Anne is her sister."),
        ("Maria", "Marai, good morning!", "Maria, good morning!"),
        ("Maria", "Mariaa, good morning!", "Maria, good morning!"),
        ("Rose", "Roses are red.", "Roses are red."),
        ("Jack", "Jacket weather today!", "Jacket weather today!"),
        ("Hope", "Hopes are high today.", "Hopes are high today."),
        ("", "Tomm is here.", "Tomm is here."),  # no known name: nothing to correct
        ("Al", "All good.", "All good."),  # too short to correct anything
    ],
)
def test_near_miss_spellings_of_the_users_name_are_corrected_and_other_words_are_not(name, sentence, expected):
    verdict, _ = one(sentence, user_name=name, user_text="hi")
    assert verdict.text == expected
    assert verdict.reason == ("name spelling" if expected != sentence else "")


# -- repeats ------------------------------------------------------------------------------------------


def test_a_sentence_repeated_in_the_same_reply_is_dropped():
    g = guard()
    assert g.check("I love the sea.").text == "I love the sea."
    assert g.check("I love the sea!").reason == "repeated"
    assert g.check("I love the sea .").reason == "repeated"
    assert g.check("The sea is big.").text == "The sea is big."
    assert g.passed == 2 and g.dropped == {"repeated": 2}


def test_what_earlier_replies_said_is_not_a_repeat():
    """A question asked again deserves its answer again (issue 37): each reply has its own
    guard, and nothing of the last replies makes a sentence a repeat."""
    for _turn in range(3):
        g = guard(user_text="What is the secret word?")
        assert g.check("The secret word is apple.").text == "The secret word is apple."
        assert g.dropped == {}


def test_a_loop_ends_the_reply_and_ordinary_repetition_is_speech():
    g = guard()
    assert g.check("I like the sea.").text == "I like the sea."
    verdict = g.check("It is blue and blue and blue and blue and blue.")
    assert verdict.text is None and verdict.reason == "loops" and verdict.stop
    assert g.check("Anything after the loop.").text is None
    speech = ("That is very very very good!", "Hahahaha, that is funny!", "哈哈哈，真好玩。", "No, no, no, not at all.")
    for sentence in speech:
        assert guard().check(sentence).text == sentence


def test_parroting_needs_the_same_words_not_the_same_topic():
    g = guard(user_text="I went hiking with my neighbour today.")
    assert g.check("I went hiking with my neighbour today.").reason == "parrots the user"
    assert g.check("You went hiking with your neighbour today!").text == "You went hiking with your neighbour today!"
    short = guard(user_text="Hi!")
    assert short.check("Hi!").text == "Hi!"  # a greeting answered in kind is not parroting


def test_prompt_recital_is_six_words_in_a_row():
    g = guard(prompt_texts=("Anna went to Paris last summer with her brother.",))
    assert g.check("You went to Paris last year, right?").text == "You went to Paris last year, right?"  # 5 words
    assert g.check("Anna went to Paris last summer!").reason == "prompt text"  # 6 words


@pytest.mark.parametrize(
    "sentence",
    [
        "Tom loves a good game of golf!",
        "Tom's a great guy!",
        "Tom says he is busy.",
        "Sure. Tom is going to the beach tomorrow.",
        "But Tom has always said that he loves working with me.",
        "Well, Tom is great.",
    ],
)
def test_narrating_the_user_in_the_third_person_is_dropped(sentence):
    verdict = guard().check(sentence)
    assert verdict.text is None and verdict.reason == "talks about the user", verdict


@pytest.mark.parametrize(
    "sentence", ["Tom, what's your plan for the weekend?", "Nice to see you, Tom.", "I think you would love it, Tom!"]
)
def test_talking_to_the_user_by_name_passes(sentence):
    assert guard().check(sentence).text == sentence


def test_question_and_answer_labels():
    g = guard()
    assert g.check('A: "How many people fit in a barrel?"').text == '"How many people fit in a barrel?"'
    assert g.check("Here is my question: what is love?").text == "Here is my question: what is love?"
    cut = g.check("That is it. Q: why?")
    assert cut.text == "That is it." and cut.stop and g.dropped["role label"] == 1


# -- the sentence limit -------------------------------------------------------------------------------


def test_the_sentence_limit_stops_the_stream():
    g = guard(policy=GuardPolicy(max_sentences=2))
    first, second, third = g.check("One thing."), g.check("Another thing."), g.check("A third thing.")
    assert (first.stop, second.stop) == (False, True) and g.full
    assert third.text is None and third.stop and third.reason == "over the sentence limit"
    assert g.finish("and more", cut_by_limit=True).text is None
    assert g.passed == 2 and g.dropped == {"over the sentence limit": 1, "cut off by the token limit": 1}


def test_a_limit_of_one_sentence():
    g = guard(policy=GuardPolicy(max_sentences=1))
    assert g.check("Hello there.").stop and g.full
    assert g.finish("Nice to see you", cut_by_limit=False).text is None


def test_dropped_sentences_do_not_count_against_the_limit():
    g = guard(policy=GuardPolicy(max_sentences=2))
    assert g.check("My name is Alex.").text is None
    assert g.check("😊").text is None
    assert not g.full
    assert g.check("I'm Fay.").text == "I'm Fay." and not g.full
    assert g.check("Nice to meet you!").stop


# -- the last piece of the stream -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "said, remainder, cut, expected",
    [
        # cut by the token limit after something was said: the fragment is not spoken
        (True, "and then we could go to the", True, None),
        (True, "我们可以一起去", True, None),
        # cut, and it is the only text: ended at its last clause boundary
        (False, "The sea is vast, and its waves are", True, "The sea is vast."),
        (False, "Well, I think, that the", True, "Well, I think."),
        (False, "今天天气很好，我们可以", True, "今天天气很好。"),
        (False, "I think that the", True, "I think that the."),  # no boundary: all there is
        # a natural end without punctuation is a sentence
        (False, "Nice to meet you", False, "Nice to meet you."),
        (True, "See you tomorrow", False, "See you tomorrow."),
        (False, "好的", False, "好的。"),
        # complete already
        (True, "That is all.", True, "That is all."),
        (False, "Really?", False, "Really?"),
        # a list announced and never given (the stream ended on its colon)
        (True, "Here are some top picks:", False, None),
        (False, "Here are some top picks:", False, "Here are some top picks."),
        # nothing
        (False, "", True, None),
        (True, "   ", False, None),
    ],
)
def test_finish_speaks_only_whole_sentences(said, remainder, cut, expected):
    g = guard()
    if said:
        assert g.check("Hello there.").text == "Hello there."
    assert g.finish(remainder, cut_by_limit=cut).text == expected
    if expected is None and remainder.strip():
        reason = "announces what never came" if remainder.endswith(":") else "cut off by the token limit"
        assert g.dropped == {reason: 1}


def test_finish_still_guards_the_last_piece():
    g = guard()
    assert g.finish("😊 My name is Alex", cut_by_limit=False).reason == "wrong self-introduction"
    assert guard().finish("Tomm, see you", cut_by_limit=False).text == "Tom, see you."


# -- the log ---------------------------------------------------------------------------------------------


def test_the_summary_counts_reasons_and_never_contains_content():
    g = guard(policy=GuardPolicy(max_sentences=2))
    bad = [
        "My name is Zebediah.",
        "The user has a secret password swordfish.",
        '{"action": "finish"',
        "😊😊",
        "How are you doing today?",
        "My name is Quirinus.",
    ]
    for sentence in bad:
        assert g.check(sentence).text is None
    assert g.check("Okay.").text == "Okay."
    assert g.check("Sure. User: my PIN is 4711").text == "Sure."
    assert g.check("Bye.").text is None
    summary = g.summary()
    assert summary == (
        "1 after a stop, 1 emoji, 1 markup or JSON, 1 meta talk, 1 parrots the user, 1 role label, "
        "2 wrong self-introduction"
    )
    for word in ["Zebediah", "swordfish", "password", "finish", "doing", "Quirinus", "4711", "PIN", "Bye"]:
        assert word.lower() not in summary.lower()


# -- fact answers -----------------------------------------------------------------------------------------

FACTS = {
    "name": "User's name is Tom.",
    "taste:hiking": "User likes hiking.",
    "taste:coffee": "User likes coffee.",
    "taste:tea": "User does not like tea.",
    "favorite:color": "User's favorite color is blue.",
    "family:sister": "User's sister is called Anna.",
    "plan:tomorrow": "User is going to Paris tomorrow.",
}
FACTS_ZH = {
    "name": "用户的名字是林。",
    "taste:咖啡": "用户喜欢咖啡。",
    "taste:香菜": "用户不喜欢香菜。",
    "family:女儿": "用户的女儿叫小雨。",
    "plan:明天": "用户明天要去北京。",
    "favorite:颜色": "用户最喜欢的颜色是蓝色。",
}


@pytest.mark.parametrize(
    "question, expected",
    [
        ("What's my name?", "Your name is Tom."),
        ("what is my name", "Your name is Tom."),
        ("Do you remember my name?", "Your name is Tom."),
        ("Do you know what my name is?", "Your name is Tom."),
        ("Who am I?", "Your name is Tom."),
        ("What do I like?", "You like hiking and coffee. You don't like tea. Your favorite color is blue."),
        ("What do I like to eat?", "You like hiking and coffee. You don't like tea. Your favorite color is blue."),
        ("Do I like hiking?", "Yes, you like hiking."),
        ("Do I like tea?", "No, you don't like tea."),
        ("Do I like jazz?", "You haven't told me whether you like jazz."),
        ("Do I like hiking and coffee?", "Yes, you like hiking. Yes, you like coffee."),
        ("Fay, do I like coffee?", "Yes, you like coffee."),
        ("What's my favorite color?", "Your favorite color is blue."),
        ("Who is my sister?", "Your sister is called Anna."),
        ("What's my sister's name?", "Your sister is called Anna."),
        ("What am I doing tomorrow?", "You are going to Paris tomorrow."),
    ],
)
def test_questions_about_the_users_facts_are_answered_from_them(question, expected):
    assert fact_answers.answer(question, FACTS, "en") == expected


@pytest.mark.parametrize(
    "question, expected",
    [
        ("我叫什么名字？", "你叫林。"),
        ("你还记得我叫什么吗？", "你叫林。"),
        ("我喜欢什么？", "你喜欢咖啡。你不喜欢香菜。你最喜欢的颜色是蓝色。"),
        ("我女儿叫什么？", "你的女儿叫小雨。"),
        ("我明天要做什么？", "你明天要去北京。"),
    ],
)
def test_chinese_questions_about_the_users_facts(question, expected):
    assert fact_answers.answer(question, FACTS_ZH, "zh") == expected


@pytest.mark.parametrize(
    "question, language, expected",
    [
        ("What is my name?", "en", "You haven't told me your name yet. What should I call you?"),
        ("What do I like?", "en", "You haven't told me what you like yet. What do you enjoy?"),
        ("What are my plans?", "en", "You haven't told me your plans yet."),
        ("What's my favorite food?", "en", "You haven't told me your favorite food yet. What is it?"),
        ("Who is my mom?", "en", "You haven't told me about your mom yet."),
        ("What's my dog called?", "en", "You haven't told me about your dog yet."),
        ("What is my job?", "en", "You haven't told me what you do for a living yet."),
        ("我叫什么名字？", "zh", "你还没告诉我你的名字呢，我该怎么称呼你？"),
        ("我喜欢什么?", "zh", "你还没告诉我你喜欢什么呢，说说看？"),
        ("我妈妈叫什么？", "zh", "你还没告诉我你妈妈的名字呢。"),
    ],
)
def test_an_unknown_fact_is_said_plainly_instead_of_guessed(question, language, expected):
    assert fact_answers.answer(question, {}, language) == expected


@pytest.mark.parametrize(
    "question, language",
    [
        ("What is the weather like?", "en"),
        ("How are you?", "en"),
        ("Tell me a joke", "en"),
        ("What is your name?", "en"),
        ("Do you like tea?", "en"),
        ("What do you like?", "en"),
        ("My name is Tom.", "en"),
        ("My name is Tom, what's yours?", "en"),
        ("I like hiking.", "en"),
        ("What should I cook tonight?", "en"),
        ("What time is it?", "en"),
        ("你叫什么名字？", "zh"),
        ("今天天气怎么样？", "zh"),
        ("我叫林。", "zh"),
        ("你喜欢什么？", "zh"),
    ],
)
def test_other_questions_are_not_answered_from_facts(question, language):
    assert fact_answers.answer(question, FACTS if language == "en" else FACTS_ZH, language) is None


def test_the_answer_follows_the_question_language_and_the_stored_name():
    assert fact_answers.answer("What is my name?", FACTS_ZH, "en") == "Your name is 林."
    assert fact_answers.answer("我叫什么名字？", FACTS, "en") == "你叫Tom。"
    assert fact_answers.user_name(FACTS) == "Tom" and fact_answers.user_name({}) == ""


# -- model profiles -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url, model, expected",
    [
        (f"http://127.0.0.1:{EMBEDDED_PORT}/v1", "anything", TINY),
        (f"http://localhost:{EMBEDDED_PORT}/v1", "gpt-4o-mini", TINY),  # the embedded endpoint, whatever the name
        (f"http://[::1]:{EMBEDDED_PORT}/v1", "m", TINY),
        ("http://127.0.0.1:8080/v1", EMBEDDED_MODEL, TINY),
        ("http://127.0.0.1:11434/v1", "smollm2:135m", TINY),
        ("http://x/v1", "HuggingFaceTB/SmolLM2-135M-Instruct", TINY),
        ("http://127.0.0.1:11434/v1", "qwen2.5:0.5b", TINY),
        ("http://x/v1", "qwen2.5-0.5b-instruct", TINY),
        ("http://x/v1", "Qwen2.5-0.5B-Instruct-GGUF", TINY),
        ("http://127.0.0.1:11434/v1", "gemma3:270m", TINY),
        ("http://x/v1", "gemma-3-270m-it", TINY),
        ("http://x/v1", "qwen3:0.6b", TINY),
        ("http://x/v1", "tinyllama", TINY),
        ("https://api.openai.com/v1", "gpt-4o-mini", CAPABLE),
        ("https://api.deepseek.com/v1", "deepseek-chat", CAPABLE),
        ("http://127.0.0.1:11434/v1", "qwen2.5:7b", CAPABLE),
        ("http://127.0.0.1:11434/v1", "llama3.1:8b", CAPABLE),
        ("http://x/v1", "qwen2.5-7b-instruct-q4_k_m", CAPABLE),
        ("http://x/v1", "qwen2.5:1.5b", CAPABLE),
        ("http://x/v1", "gpt-4o-2024-08-06", CAPABLE),
        ("http://x/v1", "deepseek-v3-0324", CAPABLE),
        (f"http://192.168.1.20:{EMBEDDED_PORT}/v1", "qwen2.5:7b", CAPABLE),  # that port elsewhere is not ours
        (f"http://127.0.0.1:{EMBEDDED_PORT + 1}/v1", "model", CAPABLE),
        ("", "", CAPABLE),
    ],
)
def test_auto_profile_by_endpoint_and_model_name(base_url, model, expected):
    assert resolve("auto", base_url, model) == expected


def test_an_explicit_profile_wins():
    assert resolve("tiny", "https://api.openai.com/v1", "gpt-4o") == TINY
    assert resolve("capable", f"http://127.0.0.1:{EMBEDDED_PORT}/v1", EMBEDDED_MODEL) == CAPABLE


@pytest.mark.parametrize("setting", ["", "Auto", "TINY", "small", "big"])
def test_a_bad_profile_setting_is_refused(setting):
    with pytest.raises(ValueError, match=re.escape(repr(setting))):
        resolve(setting, "http://x/v1", "gpt-4o")


# -- the clock's questions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "question, expected",
    [
        ("What time is it?", "It's 6:05 PM on Monday, November 30."),
        ("what day is it today?", "It's 6:05 PM on Monday, November 30."),
        ("What's the date?", "It's 6:05 PM on Monday, November 30."),
        ("现在几点了？", "现在是11月30日，星期一，18点05分。"),
        ("今天星期几", "现在是11月30日，星期一，18点05分。"),
        ("How are you?", None),
        ("I have no time for this.", None),
        ("Tell me about the day you were built.", None),
        ("Do you know what time it is?", "It's 6:05 PM on Monday, November 30."),
        ("几点了？", "现在是11月30日，星期一，18点05分。"),
        # a time asked about a place or a plan is not the clock's question
        ("What time do you close on Saturdays?", None),
        ("What time does the museum open?", None),
        ("周六几点开门？", None),
        ("你们几号放假？", None),
    ],
)
def test_time_questions_are_answered_from_the_clock(question, expected):
    import datetime

    from fay_ros.dialogue.fact_answers import time_answer

    assert time_answer(question, datetime.datetime(2026, 11, 30, 18, 5)) == expected


def test_midnight_is_twelve_am():
    import datetime

    from fay_ros.dialogue.fact_answers import time_answer

    assert (
        time_answer("What time is it?", datetime.datetime(2026, 12, 1, 0, 5)) == "It's 12:05 AM on Tuesday, December 1."
    )


@pytest.mark.parametrize(
    "user_text, facts, sentence, dropped",
    [
        ("hello! i'm kai.", {}, "How's the new puppy?", True),
        ("hi, i'm sofia", {}, "How is your little girl doing?", True),
        ("what should we cook?", {}, "Ask your husband too.", True),
        (
            "what should we cook?",
            {"family:daughter": "User's daughter is called Lena."},
            "Your daughter will love it.",
            False,
        ),
        (
            "what should we cook?",
            {"family:daughter": "User's daughter is called Lena."},
            "Your little girl will love it.",
            False,
        ),
        ("my cat is poorly", {}, "I hope your cat feels better soon.", False),
        ("any plans?", {}, "Maybe see your friends this weekend.", False),
        ("how are you?", {}, "Tell me about your day.", False),
    ],
)
def test_a_relative_or_pet_the_user_never_told_of_is_not_given_to_them(user_text, facts, sentence, dropped):
    guard = ReplyGuard(user_text=user_text, facts=facts)
    verdict = guard.check(sentence)
    assert (verdict.text is None) == dropped, verdict


def test_a_baked_dish_is_kept_from_someone_allergic_to_eggs():
    from fay_ros.memory import health

    guard = ReplyGuard(avoided=health.avoided_keys(["health:allergy:egg"], household=True))
    assert guard.check("You can make a big batch of cookies with the grandkids!").text is None
    assert guard.check("Maybe some pancakes?").text is None
    assert guard.check("How about a fruit salad?").text == "How about a fruit salad?"


@pytest.mark.parametrize(
    "sentence, dropped",
    [
        # names and places no one told of: the tiny model's stories (own conversation rounds)
        ("Nal, your friend, you're right, I'm sure of it.", True),
        ("Luna, Elena, and Sam are lovely names.", True),
        ("It flooded the whole city of Harrogate with water.", True),
        ("They are both Muslims.", True),
        # names that were said, words always written with a capital, a first word before a comma
        ("That's lovely, Niall must be glad to be home.", False),
        ("Have a lovely Christmas with him on Saturday!", False),
        ("Well, that sounds lovely.", False),
        ("Lovely, I hope the Italian food is good.", False),
        ("Fay is happy for you.", False),
    ],
)
def test_with_the_tiny_model_a_name_no_one_told_of_is_not_said(sentence, dropped):
    facts = {"family:son": "User's son is called Niall."}
    tiny = guard(user_text="niall's home! he's staying for two weeks", facts=facts, no_new_names=True)
    assert (tiny.check(sentence).text is None) is dropped, tiny.summary()
    # a capable model's world knowledge is left alone
    assert guard(user_text="niall's home!", facts=facts).check(sentence).text is not None


def test_with_the_tiny_model_its_last_reply_is_not_said_again_as_the_next_answer():
    """Asked 'what condition have I got?' after a question about a neighbour, the embedded model
    gave its answer about the neighbour again, word for word (an own long conversation)."""
    before = (
        "Sue had a hip replacement, but she also used to make things with her hands. "
        "She was very creative when it came to making things out of clay."
    )
    tiny = guard(user_text="what condition have i got?", earlier_replies=(before,))
    copied = tiny.check("Sue had a hip replacement, but she also used to make things with her hands.")
    assert copied.text is None and copied.stop and tiny.dropped["repeats an earlier reply"] == 1
    # a short line may come again, and something new is said
    fresh = guard(user_text="thanks", earlier_replies=("That sounds lovely! Sue had a hip replacement.",))
    assert fresh.check("That sounds lovely!").text == "That sounds lovely!"
    assert fresh.check("I hope you have a restful evening.").text is not None


@pytest.mark.parametrize(
    "sentence, said",
    [
        ("A wonderful honour, Fiona!", "A wonderful honour!"),
        ("I'm so sorry to hear that, Fiona.", "I'm so sorry to hear that."),
        ("Congratulations, Fiona, that's lovely news.", "Congratulations, that's lovely news."),
        # her own name, a name she gave just now, a name she never spoke of: left alone
        ("Nice to meet you, Joan!", "Nice to meet you, Joan!"),
        ("Good morning, Alice!", "Good morning, Alice!"),
        ("Say hello to Fiona for me.", "Say hello to Fiona for me."),
    ],
)
def test_the_user_is_not_called_by_the_name_of_someone_they_spoke_of(sentence, said):
    """(the thirty-third round: to Joan, whose daughter Fiona wants her to move in, the tiny
    model said "A wonderful honor, Fiona!")"""
    guard = ReplyGuard(user_text="morning Fay, it's Joan. Fiona wants me to move in with them.")
    verdict = guard.check(sentence)
    assert verdict.text == said, verdict


@pytest.mark.parametrize(
    "sentence",
    ['You told me: "the physios are on Monday the twenty-third, same time.', "你跟我说过：“我每天去公园”。"],
)
def test_a_model_never_quotes_the_user(sentence):
    """(the thirty-third round over days: having seen the memory's quoted answers in its window,
    the tiny model wrote one of its own, with words the person never said)"""
    verdict = ReplyGuard().check(sentence)
    assert verdict.text is None and verdict.reason == "quotes the user", verdict
