"""`fay-ros models pull` against a local HTTP server speaking the hub's download protocol
(test/local_hub.py): progress, resume after a cut connection, hash checks, the licence, the
free-disk check. Files of a few KB; nothing leaves this machine."""

from __future__ import annotations

import hashlib
import json

import huggingface_hub.constants
import pytest

from fay_ros.cli import main
from local_hub import COMMIT, LocalHub, point_at

CHAT = "qwen2.5-0.5b-instruct"
CHAT_REPO = "Qwen/Qwen2.5-0.5B-Instruct-GGUF"
CHAT_FILE = "qwen2.5-0.5b-instruct-q4_k_m.gguf"
GGUF = b"GGUF" + bytes(range(256)) * 32  # 8 KB
ASR = "whisper-small"
ASR_REPO = "Systran/faster-whisper-small"
ASR_FILES = {
    "model.bin": bytes(reversed(range(256))) * 20,
    "config.json": b'{"alignment_heads": [], "lang_ids": []}\n',
    "tokenizer.json": b'{"version": "1.0"}\n',
    "vocabulary.txt": b"a\nb\nc\n",
}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    server = LocalHub(files={CHAT_REPO: {CHAT_FILE: GGUF}, ASR_REPO: dict(ASR_FILES)}, lfs={CHAT_FILE, "model.bin"})
    server.start()
    point_at(server, tmp_path, monkeypatch)
    yield server
    server.stop()


def leftovers(directory):
    return sorted(p.name for p in directory.rglob("*") if p.is_file() and p.name not in (".gitignore", "CACHEDIR.TAG"))


def test_pull_fetches_checks_and_marks_a_chat_model_with_progress_on_stderr(hub, tmp_path, capsys):
    assert main(["models", "pull", CHAT, "--accept-licence"]) == 0
    out, err = capsys.readouterr()
    target = tmp_path / "models" / CHAT
    assert (target / CHAT_FILE).read_bytes() == GGUF
    assert "licence Apache-2.0" in out and f"pulled {CHAT} into {target}" in out
    # the progress bar, as lines (stderr is no terminal here)
    assert CHAT_FILE in err and "100%" in err and "\r" not in err
    marker = json.loads((target / ".fay-model.json").read_text())
    assert marker["commit"] == COMMIT
    assert marker["files"][CHAT_FILE] == {
        "sha256": hashlib.sha256(GGUF).hexdigest(),
        "size": len(GGUF),
        "verified": True,
    }
    # HEAD first (size, hash, commit), then the bytes from the "CDN", pinned to the commit
    assert [r.method for r in hub.requests if r.path.endswith(CHAT_FILE)][:1] == ["HEAD"]
    assert hub.seen("GET", CHAT_FILE)[0].path == f"/cdn/{CHAT_REPO}/{CHAT_FILE}"
    assert any(f"/resolve/{COMMIT}/" in r.path for r in hub.requests)

    assert main(["models", "info", CHAT]) == 0
    out = capsys.readouterr().out
    assert str(target / CHAT_FILE) in out and hashlib.sha256(GGUF).hexdigest() in out

    gets = len(hub.seen("GET", CHAT_FILE))
    assert main(["models", "pull", CHAT]) == 0  # installed: no licence question, no download
    assert "already installed" in capsys.readouterr().out
    assert len(hub.seen("GET", CHAT_FILE)) == gets


def test_a_cut_connection_is_resumed_with_a_range_request(hub, tmp_path, capsys, monkeypatch):
    # huggingface_hub hands the file its bytes in chunks of DOWNLOAD_CHUNK_SIZE (10 MB): bytes
    # of an unfinished chunk are fetched again. 1 KB chunks let a file of a few KB show it.
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 1024)
    hub.cut_after[CHAT_FILE] = 3072
    assert main(["models", "pull", CHAT, "--accept-licence"]) == 0
    gets = hub.seen("GET", CHAT_FILE)
    assert len(gets) == 2
    assert "range" not in gets[0].headers and gets[1].headers["range"] == "bytes=3072-"
    assert (tmp_path / "models" / CHAT / CHAT_FILE).read_bytes() == GGUF
    assert not [p for p in (tmp_path / "models").rglob("*.incomplete")]


def test_a_file_whose_hash_differs_from_the_hubs_is_deleted_and_named(hub, tmp_path, capsys):
    bad = bytearray(GGUF)
    bad[100] ^= 0xFF
    hub.serve_instead[CHAT_FILE] = bytes(bad)
    assert main(["models", "pull", CHAT, "--accept-licence"]) == 1
    err = capsys.readouterr().err
    assert f"expected {hashlib.sha256(GGUF).hexdigest()}" in err
    assert f"got {hashlib.sha256(bad).hexdigest()}" in err and "deleted" in err
    target = tmp_path / "models" / CHAT
    assert leftovers(target) == []  # no model file, no partial, no bookkeeping, no marker
    assert main(["models", "use", CHAT]) == 1
    assert f"fay-ros models pull {CHAT}" in capsys.readouterr().err


def test_the_catalogues_own_sha256_wins_over_the_hubs(hub, tmp_path, capsys):
    catalogue = tmp_path / "models.yaml"
    wrong = "ab" * 32
    catalogue.write_text(
        "models:\n"
        f"  {CHAT}:\n    kind: chat\n    repo: {CHAT_REPO}\n"
        f"    files:\n      - name: {CHAT_FILE}\n        sha256: {wrong}\n"
        "    approx_mb: 1\n    ram_mb: 1\n    licence: Apache-2.0\n    languages: [en]\n"
    )
    assert main(["models", "--catalogue", str(catalogue), "pull", CHAT, "--accept-licence"]) == 1
    err = capsys.readouterr().err
    assert f"sha256 expected {wrong}, got {hashlib.sha256(GGUF).hexdigest()}" in err
    assert leftovers(tmp_path / "models" / CHAT) == []


def test_without_the_licence_flag_and_no_terminal_nothing_is_downloaded(hub, tmp_path, capsys):
    assert main(["models", "pull", CHAT]) == 1
    out, err = capsys.readouterr()
    assert "licence Apache-2.0" in out
    assert f"fay-ros models pull {CHAT} --accept-licence" in err
    assert hub.requests == [] and not (tmp_path / "models" / CHAT).exists()


def test_not_enough_free_disk_space_refuses_before_any_byte(hub, tmp_path, capsys):
    catalogue = tmp_path / "models.yaml"
    catalogue.write_text(
        "models:\n"
        f"  {CHAT}:\n    kind: chat\n    repo: {CHAT_REPO}\n"
        f"    files:\n      - name: {CHAT_FILE}\n        size: {10**18}\n"
        "    approx_mb: 1\n    ram_mb: 1\n    licence: Apache-2.0\n    languages: [en]\n"
    )
    assert main(["models", "--catalogue", str(catalogue), "pull", CHAT, "--accept-licence"]) == 1
    err = capsys.readouterr().err
    assert "not enough free disk space" in err and " free, 1000000.0 TB needed" in err
    assert hub.seen("GET", CHAT_FILE) == [] and not (tmp_path / "models" / CHAT).exists()


def test_a_speech_model_is_several_files_each_checked(hub, tmp_path, capsys):
    assert main(["models", "pull", ASR, "--accept-licence"]) == 0
    target = tmp_path / "models" / ASR
    for name, data in ASR_FILES.items():
        assert (target / name).read_bytes() == data
    marker = json.loads((target / ".fay-model.json").read_text())
    assert all(f["verified"] for f in marker["files"].values())  # model.bin by sha256, the rest by git blob id


def test_a_small_file_that_does_not_match_its_git_blob_id_is_refused(hub, tmp_path, capsys):
    hub.serve_instead["config.json"] = b'{"alignment_heads": [], "lang_ids": [1]}'
    assert main(["models", "pull", ASR, "--accept-licence"]) == 1
    err = capsys.readouterr().err
    assert "config.json of whisper-small is corrupt: git blob id expected" in err
    assert not (tmp_path / "models" / ASR / "config.json").exists()
    assert not (tmp_path / "models" / ASR / ".fay-model.json").exists()


def test_a_file_missing_on_the_hub_is_named(hub, capsys):
    del hub.files[ASR_REPO]["vocabulary.txt"]
    assert main(["models", "pull", ASR, "--accept-licence"]) == 1
    assert f"{ASR_REPO}@main has no file vocabulary.txt" in capsys.readouterr().err
    assert hub.seen("GET", "model.bin") == []
