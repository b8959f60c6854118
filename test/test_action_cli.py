"""`fay-ros action`: the tuner's tool, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fay_ros.action import LEXICON_FILE, RULES_FILE, default_table_path
from fay_ros.action.rules import RULE_COLUMNS

HEADER = ",".join(RULE_COLUMNS)
FAY_RULES = Path(__file__).parent / "data" / "fay" / "action_rules.csv"  # Fay's layout, written for the tests


def fay_ros(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "action", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_prints_the_cue_as_json_with_keywords_and_sentiment():
    out = fay_ros("好的，这边请！")
    assert out.returncode == 0, out.stderr
    cue = json.loads(out.stdout)
    assert (cue["code"], cue["behavior"], cue["affect"], cue["priority"]) == ("guidance.invite", "invite", "warm", 82)
    assert cue["matched_keywords"] == ["这边请"]
    assert cue["sentiment_scale"] == "lexicon_v1:-1..1"
    assert cue["sentiment"] == 1.3 / 4
    assert {"term": "!", "weight": 0.3} in cue["sentiment_terms"]


def test_reads_sentences_from_stdin_one_json_line_each(tmp_path):
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + "\nfruit.apple,praise,smile,0.5,50,0,apple\n", encoding="utf-8")
    out = fay_ros("--rules", str(rules), "-", stdin="I like apples\nan apple a day\n\nhi\n")
    assert out.returncode == 0, out.stderr
    cues = [json.loads(line) for line in out.stdout.splitlines()]
    assert [c["code"] for c in cues] == ["default.neutral", "fruit.apple", "default.neutral"]


def test_check_accepts_the_shipped_tables():
    out = fay_ros("--check", str(default_table_path(RULES_FILE)), str(default_table_path(LEXICON_FILE)))
    assert out.returncode == 0, out.stderr
    assert "rules" in out.stdout and "sentiment lexicon" in out.stdout
    assert out.stdout.count("OK ") == 2


def test_check_names_file_line_and_problem_of_every_bad_row(tmp_path):
    bad = tmp_path / "bad_rules.csv"
    bad.write_text(
        HEADER + "\n"
        "greeting.hello,wave,smile,0.7,70,0.6,你好|hello\n"
        "farewell.bye,wave,warm,0.7,70,0.3,再见,bye\n"
        "warn.x,warn,serious,2,90,0,小心\n",
        encoding="utf-8",
    )
    lexicon = tmp_path / "lexicon.csv"
    lexicon.write_text("kind,term,weight\nword,开心,5\n", encoding="utf-8")
    out = fay_ros("--check", str(bad), str(lexicon))
    assert out.returncode == 1
    assert f"{bad}:3: 1 cell(s) beyond the header's columns" in out.stderr
    assert f"{bad}:4: intensity 2 is outside 0..1" in out.stderr
    assert f"{lexicon}:2: word '开心': weight '5' must be one of" in out.stderr


def test_a_bad_table_stops_the_analysis_with_the_reason(tmp_path):
    bad = tmp_path / "rules.csv"
    bad.write_text(HEADER + "\na.b,Dance!,smile,0.5,50,0,hi\n", encoding="utf-8")
    out = fay_ros("--rules", str(bad), "hi")
    assert out.returncode == 1 and out.stdout == ""
    assert f"{bad}:2: behavior 'Dance!' must be one lower-case word" in out.stderr


def test_check_accepts_fays_table_and_warns_about_words_no_consumer_maps(tmp_path):
    out = fay_ros("--check", str(FAY_RULES))
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"OK {FAY_RULES}: 20 rules, 85 keywords\n", "Fay's layout: no problem, no warning"
    own = tmp_path / "own.csv"
    own.write_text(HEADER + "\nshow.dance,dance,smile,0.5,50,1.8,跳舞\n", encoding="utf-8")
    out = fay_ros("--check", str(own))
    assert out.returncode == 0, out.stderr
    assert (
        f"warning: {own}:2: behavior 'dance' is not in the shared vocabulary: consumers that do not map it "
        "use their default"
    ) in out.stdout


def test_policy_no_match_and_explain_options():
    fay = json.loads(fay_ros("--rules", str(FAY_RULES), "--policy", "fay", "--explain", "没错，当然可以，小心").stdout)
    assert (fay["code"], fay["match_policy"]) == ("dialogue.confirm", "fay")
    assert fay["explain"]["winner"] == "dialogue.confirm"
    assert [c["code"] for c in fay["explain"]["candidates"]] == ["dialogue.confirm", "guidance.warn"]
    assert fay["explain"]["why"].startswith("dialogue.confirm beats guidance.warn on number of keywords found: 3 vs 1")
    ours = json.loads(fay_ros("--rules", str(FAY_RULES), "没错，当然可以，小心").stdout)
    assert ours["code"] == "guidance.warn" and "explain" not in ours
    out = fay_ros("--rules", str(FAY_RULES), "--no-match", "none", "-", stdin="今天星期三\n这边请\n")
    nothing, invite = [json.loads(line) for line in out.stdout.splitlines()]
    assert nothing["cue"] is None and nothing["text"] == "今天星期三" and "no rule matched" in nothing["reason"]
    assert (invite["code"], invite["sentiment_hint"]) == ("guidance.invite", 0.7)
    bad = fay_ros("--policy", "loudest", "hi")
    assert bad.returncode == 2 and "invalid choice: 'loudest'" in bad.stderr
