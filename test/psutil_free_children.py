"""Child-process lookups from /proc (no psutil dependency)."""

from __future__ import annotations

from pathlib import Path


def of(pid: int) -> list[int]:
    """Direct children of `pid`."""
    result = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            result.append(int(entry.name))
    return result


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def running(parent: int, module: str) -> int | None:
    """The child of `parent` that runs `python -m <module>` (a node of `fay-ros up`), if any."""
    for pid in of(parent):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if module.encode() in argv and alive(pid):
            return pid
    return None
