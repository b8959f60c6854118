"""Run benchmarks and write their results into docs/BENCHMARKS.md.

Each module bench/bench_<name>.py defines TITLE and run() -> str (a markdown section whose
figures are ratios against a baseline measured in the same run). Running a subset
(`make bench ONLY=name`) replaces only those sections and keeps the others.
"""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "BENCHMARKS.md"
HEADER = """# Benchmarks

Produced by `make bench` (all) or `make bench ONLY=<name>` (one section). Every figure is
compared with a baseline measured in the same run on the same machine, because absolute
timings on a shared 2-core machine are noisy; the ratios are what to read.

"""


def discover() -> list[str]:
    return sorted(p.stem[len("bench_") :] for p in (ROOT / "bench").glob("bench_*.py"))


def section_markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def existing_sections(text: str) -> dict[str, str]:
    found = {}
    for m in re.finditer(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", text, re.S):
        found[m.group(1)] = m.group(2)
    return found


def main(argv: list[str]) -> int:
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.path.insert(0, str(ROOT / "test"))
    names = argv or discover()
    unknown = [n for n in names if n not in discover()]
    if unknown:
        print(f"bench: unknown benchmark(s) {unknown}; available: {discover()}", file=sys.stderr)
        return 2
    sections = existing_sections(DOC.read_text(encoding="utf-8")) if DOC.exists() else {}
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        print(f"==> bench {name}: {module.TITLE}", flush=True)
        t0 = time.monotonic()
        body = module.run().strip()
        stamp = (
            f"_{datetime.date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
            f"{time.monotonic() - t0:.0f} s_"
        )
        sections[name] = f"## {module.TITLE}\n\n{stamp}\n\n{body}\n\n"
        print(body, flush=True)
    text = HEADER + "".join(
        f"{section_markers(n)[0]}\n{sections[n]}{section_markers(n)[1]}\n\n" for n in sorted(sections)
    )
    DOC.write_text(text, encoding="utf-8")
    print(f"bench: wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
