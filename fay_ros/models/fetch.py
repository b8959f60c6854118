"""Downloading a catalogue model: the only code in fay_ros that fetches anything from a model
hub, run by `fay-ros models pull` and never by a node.

With huggingface_hub (`hf_hub_download`): `HF_ENDPOINT` (a mirror) and `HF_TOKEN` are
honoured, and a connection cut in the middle of a file is resumed from where it stopped
(a Range request). Before any byte is fetched every file is asked for with a HEAD request
(size, commit, hash) and the free space of the target checked. After the download each
file's sha256 is checked against the catalogue's value, else the hub's `X-Linked-Etag`
(the sha256 of an LFS file); a small non-LFS file is checked against its git blob id (the
hub's ETag). A mismatch deletes the file and the download's bookkeeping. Only when every
file checked out is `.fay-model.json` written: a model without it is not installed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from ..common.errors import FayError
from .catalogue import ModelEntry
from .store import pull_dir, write_marker

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GIT_OID = re.compile(r"^[0-9a-f]{40}$")
DISK_MARGIN = 50_000_000  # room left beside the model (bookkeeping, logs)


class FetchError(FayError, RuntimeError):
    """A pull that cannot go on; the message says why and what to do."""


class NotEnoughSpace(FetchError):
    pass


class HashMismatch(FetchError):
    pass


@dataclass
class RemoteFile:
    name: str
    size: int | None
    expected: str | None  # sha256 hex, or a git blob id (40 hex) for a small non-LFS file
    commit: str | None


def human(size: int | float) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def endpoint() -> str | None:
    """HF_ENDPOINT as set now (huggingface_hub reads it only once, when it is imported)."""
    return os.environ.get("HF_ENDPOINT") or None


def plan(entry: ModelEntry) -> list[RemoteFile]:
    """HEAD every file of the model: size, expected hash and commit, before anything is fetched."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError

    assert entry.repo is not None
    files = []
    for f in entry.files:
        url = hf_hub_url(entry.repo, f.name, revision=entry.revision, endpoint=endpoint())
        try:
            meta = get_hf_file_metadata(url, endpoint=endpoint())
        except EntryNotFoundError:
            raise FetchError(f"{entry.repo}@{entry.revision} has no file {f.name} ({url})") from None
        except HfHubHTTPError as exc:
            raise FetchError(f"the hub refused {url}: {exc}") from None
        except OSError as exc:  # connection refused, DNS, timeout
            raise FetchError(f"cannot reach the hub for {url}: {exc}") from None
        etag = (meta.etag or "").lower()
        expected = f.sha256 or (etag if _SHA256.fullmatch(etag) or _GIT_OID.fullmatch(etag) else None)
        files.append(RemoteFile(f.name, f.size if f.size is not None else meta.size, expected, meta.commit_hash))
    return files


def free_space(directory: Path) -> int:
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return shutil.disk_usage(existing).free


def check_space(name: str, target: Path, files: list[RemoteFile]) -> int:
    """The bytes still to fetch; NotEnoughSpace when the target's file system lacks them."""
    needed = sum(f.size or 0 for f in files if not (target / f.name).is_file())
    free = free_space(target)
    if needed + DISK_MARGIN > free:
        raise NotEnoughSpace(
            f"not enough free disk space for {name} in {target}: {human(free)} free, "
            f"{human(needed)} needed (+{human(DISK_MARGIN)} margin); free some space or set "
            "FAY_MODELS_DIR to a larger disk"
        )
    return needed


class _Lines:
    """A progress stream for a log file or pipe: one line per update, no carriage returns."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip("\n")
        if text.strip():
            self.out.write(text + "\n")

    def flush(self) -> None:
        self.out.flush()


class Progress(tqdm):
    """huggingface_hub's download bar, always on stderr: a redrawn bar on a terminal, a line
    every few seconds (and at the end) otherwise."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("name", None)
        kwargs["disable"] = False
        err = sys.stderr
        if err.isatty():
            kwargs["file"] = err
        else:
            kwargs.update(file=_Lines(err), ascii=True, ncols=80, mininterval=3.0)
        super().__init__(*args, **kwargs)


def digest(path: Path, expected: str) -> str:
    """sha256 of the file, or its git blob id when `expected` is one (40 hex digits)."""
    if _GIT_OID.fullmatch(expected):
        h = hashlib.sha1(usedforsecurity=False)
        h.update(f"blob {path.stat().st_size}\0".encode())
    else:
        h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def discard(target: Path, file_name: str) -> None:
    """A file that failed its check, with huggingface_hub's bookkeeping and partial downloads of it."""
    (target / file_name).unlink(missing_ok=True)
    download = target / ".cache" / "huggingface" / "download"
    if download.is_dir():
        for p in download.glob(f"{file_name}*"):
            p.unlink(missing_ok=True)


def pull(
    name: str,
    entry: ModelEntry,
    *,
    say: Callable[[str], None] = print,
) -> Path:
    """Fetch, check and mark a model in `pull_dir(name)`; returns that directory."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    assert entry.repo is not None
    target = pull_dir(name)
    files = plan(entry)
    commit = next((f.commit for f in files if f.commit), None)
    needed = check_space(name, target, files)
    say(f"pulling {name} from {entry.repo}@{commit or entry.revision} into {target} ({human(needed)} to fetch)")
    target.mkdir(parents=True, exist_ok=True)
    hashes: dict[str, dict[str, Any]] = {}
    for f in files:
        try:
            path = Path(
                hf_hub_download(
                    entry.repo,
                    f.name,
                    revision=commit or entry.revision,  # every file from the one commit
                    local_dir=target,
                    endpoint=endpoint(),
                    tqdm_class=Progress,
                )
            )
        except HfHubHTTPError as exc:
            raise FetchError(f"download of {entry.repo}/{f.name} failed: {exc}") from None
        except OSError as exc:
            raise FetchError(
                f"download of {entry.repo}/{f.name} failed: {exc}; run the same pull again to go on"
            ) from None
        if f.expected is None:
            actual = digest(path, "")
            say(f"warning: no published hash for {f.name}; sha256 {actual} (not verified)")
        else:
            actual = digest(path, f.expected)
            if actual != f.expected:
                discard(target, f.name)
                kind = "git blob id" if _GIT_OID.fullmatch(f.expected) else "sha256"
                raise HashMismatch(
                    f"{f.name} of {name} is corrupt: {kind} expected {f.expected}, got {actual}; "
                    f"the file was deleted, run `fay-ros models pull {name}` again"
                )
        sha256 = actual if len(actual) == 64 else digest(path, "")
        hashes[f.name] = {"sha256": sha256, "size": path.stat().st_size, "verified": f.expected is not None}
    write_marker(
        target,
        {
            "name": name,
            "kind": entry.kind,
            "repo": entry.repo,
            "revision": entry.revision,
            "commit": commit,
            "files": hashes,
            "licence": entry.licence,
            "licence_accepted": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
    )
    return target
