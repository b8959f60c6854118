"""No import cycle within fay_ros.memory (the ast walk of test_package_structure, on the memory
modules alone), and the rule that keeps it so: the package's __init__ imports nothing.

The package once re-exported names from its submodules in __init__ (and built services there
with lazy imports of service and store) while store.py did `from . import schema`, which
imports the package: memory <-> memory.store.

Also a script: `python test/test_memory_imports.py` prints the cycle, if any.
"""

from __future__ import annotations

import sys

from test_package_structure import find_cycles, import_graph, imports

MEMORY = "fay_ros.memory"


def memory_graph() -> dict[str, set[str]]:
    """The import graph of fay_ros.memory's modules, among themselves."""

    def inside(name: str) -> bool:
        return name == MEMORY or name.startswith(MEMORY + ".")

    return {name: {t for t in targets if inside(t)} for name, targets in import_graph().items() if inside(name)}


def test_no_import_cycle_within_the_memory_package():
    graph = memory_graph()
    assert {f"{MEMORY}.service", f"{MEMORY}.scheduler", f"{MEMORY}.store"} <= graph.keys()  # the walk saw them
    assert find_cycles(graph) == []


def test_the_memory_package_init_imports_nothing():
    assert memory_graph()[MEMORY] == set()


def test_the_walk_sees_the_cycle_the_package_had(tmp_path):
    """The old shape, reduced to its imports, as a cycle the walk reports."""
    init, store = tmp_path / "__init__.py", tmp_path / "store.py"
    init.write_text("from .model import MemoryNode\n\ndef build_service():\n    from .store import MemoryStore\n")
    store.write_text("from . import schema\n")
    known = {MEMORY, f"{MEMORY}.model", f"{MEMORY}.store", f"{MEMORY}.schema"}
    graph = {
        MEMORY: {t for t, _line, _top in imports(MEMORY, init) if t in known},
        f"{MEMORY}.store": {t for t, _line, _top in imports(f"{MEMORY}.store", store) if t in known},
    }
    assert find_cycles(graph) == [[MEMORY, f"{MEMORY}.store"]]


if __name__ == "__main__":
    cycles = find_cycles(memory_graph())
    print("\n".join(" <-> ".join(c) for c in cycles) or f"no import cycle within {MEMORY}")
    sys.exit(1 if cycles else 0)
