"""The shape of the fay_ros package, checked from its source (ast, nothing imported):

- the core/shell split: only the node shells (fay_ros/nodes) and the few ROS helpers in
  fay_ros/common import rclpy or ROS message packages; every other module is pure Python
  that tests and tools can use without a ROS graph;
- no import cycles among fay_ros modules, counting imports inside functions too (a lazy
  import that closes a cycle still ties the two modules into one: a factory belongs next to
  its caller, shared types in a module of their own). Only `if TYPE_CHECKING:` imports,
  which never run, are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "fay_ros"

ROS_PACKAGES = {
    "rclpy",
    "fay_msgs",
    "std_msgs",
    "diagnostic_msgs",
    "sensor_msgs",
    "trajectory_msgs",
    "builtin_interfaces",
    "rcl_interfaces",
    "lifecycle_msgs",
    "action_msgs",
    "launch",
    "launch_ros",
    "ament_index_python",
    "rosidl_runtime_py",
    "hri_msgs",
    "diagnostic_updater",
}
# The ROS side of the core/shell split: node shells and their shared ROS helpers.
SHELL_MODULES = {
    "fay_ros.common.node_main",
    "fay_ros.common.params",
    "fay_ros.common.qos",
    "fay_ros.common.rostime",
    "fay_ros.common.readiness",
    "fay_ros.common.diagnostics",
    "fay_ros.common.lifecycle",
}
# A core module may look up an installed ROS package's share directory lazily (inside a
# function, so it still imports without ROS).
LAZY_ALLOWED = {"ament_index_python"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def is_shell(name: str) -> bool:
    return name.split(".")[:2] in (["fay_ros", "nodes"], ["fay_ros", "ros_side"]) or name in SHELL_MODULES


def imports(name: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import in the file; relative
    imports resolved against `name`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                inner = False  # typing-only imports never run
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.append((target, child.lineno, top))
                # `from . import x` / `from .pkg import mod` may import submodules
                found.extend((f"{target}.{alias.name}", child.lineno, top) for alias in child.names)
            visit(child, inner)

    visit(tree, True)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def test_only_the_node_shells_import_ros():
    offenders = []
    for name, path in modules().items():
        if is_shell(name):
            continue
        for target, line, top in imports(name, path):
            root = target.split(".")[0]
            if root in ROS_PACKAGES and (top or root not in LAZY_ALLOWED):
                offenders.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert offenders == [], "core modules must not import ROS:\n" + "\n".join(offenders)


def test_the_check_sees_a_ros_import(tmp_path):
    """The walker above finds module-level, function-level and relative imports."""
    sample = PACKAGE / "common" / "topics.py"
    found = {t for t, _line, _top in imports("fay_ros.common.topics", sample)}
    assert all(not t.startswith("rclpy") for t in found)
    fake = tmp_path / "x.py"
    fake.write_text(
        "import rclpy\nfrom fay_msgs.msg import Utterance\nfrom . import qos\n"
        "def f():\n    from ..dialogue import engine\n"
    )
    found = imports("fay_ros.common.x", fake)
    assert ("rclpy", 1, True) in found and ("fay_msgs.msg", 2, True) in found
    assert ("fay_ros.common.qos", 3, True) in found and ("fay_ros.dialogue.engine", 5, False) in found


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return cycles


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        edges = set()
        for target, _line, _top in imports(name, path):
            if target in known and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_cycles():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


# -- layering ---------------------------------------------------------------------------------
# Which fay_ros packages each package may import. Dependencies point one way: from the shells
# (cli, nodes, ros_side) down to the cores, and from the cores down to `text`, `llm` and
# `common`. A new edge is a design decision: make it here, with the reason in the docs
# (docs/ARCHITECTURE.md, "Module map"), not by accident in an import.
CORE_ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "text": {"common"},
    "llm": {"common"},
    "schedule": {"common", "text"},
    "action": {"common"},
    "body": {"common"},
    # turn-taking decisions: pure, fed events by hearing (the mic and asr cores) and the shells
    "turns": {"text"},
    "hearing": {"common", "text", "turns"},
    "voice": {"common", "text"},
    "memory": {"common", "text", "llm", "schedule"},
    # dialogue -> schedule: reminder turns and tools read a request with the one reminder parser
    # knowledge: the user's documents; it indexes with memory's embedders and backends
    "knowledge": {"common", "text", "memory"},
    "dialogue": {"common", "text", "llm", "memory", "schedule", "turns", "knowledge"},
    "agent": {"common", "dialogue", "memory", "knowledge"},
    "web": {"common", "action", "dialogue", "schedule", "knowledge"},
    # catalogue models: where a pulled GGUF / whisper dir lives next to the shipped defaults
    # (llm.embedded, hearing.models); the bring-up reads the user's choice of models
    "models": {"common", "llm", "hearing"},
    "bringup": {"common", "llm", "models"},
}
SHELL_PACKAGES = {"ros_side", "nodes", "cli"}
ALLOWED: dict[str, set[str]] = {
    **CORE_ALLOWED,
    # the ROS side of cores and commands: any core, never an executable or a command
    "ros_side": set(CORE_ALLOWED),
    "nodes": set(CORE_ALLOWED) | {"ros_side"},
    "cli": set(CORE_ALLOWED) | {"ros_side", "nodes", "root"},
}


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def layering_offences(graph: dict[str, set[str]], allowed: dict[str, set[str]]) -> list[str]:
    offences = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        for target in sorted(targets):
            wanted = package_of(target)
            if wanted == source or module == "fay_ros":
                continue
            if source not in allowed:
                offences.append(f"{module}: package '{source}' has no place in the layering (add it to ALLOWED)")
            elif wanted not in allowed[source]:
                offences.append(f"{module} imports {target}: '{source}' may not import '{wanted}'")
    return offences


def private_imports(name: str, path: Path) -> list[str]:
    """`from <other package> import _private` in the file: a private name is its package's own."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("fay_ros"):
            continue
        for alias in node.names:
            if (
                alias.name.startswith("_")
                and not alias.name.startswith("__")
                and package_of(target) != package_of(name)
            ):
                where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
                found.append(f"{where}:{node.lineno} imports {target}.{alias.name}")
    return found


def test_dependencies_point_one_way():
    offences = layering_offences(import_graph(), ALLOWED)
    assert offences == [], "layering broken:\n" + "\n".join(offences)


def test_core_packages_never_import_shells():
    assert all(not (ALLOWED[core] & SHELL_PACKAGES) for core in CORE_ALLOWED)


def test_no_package_imports_another_packages_private_names():
    offenders = [hit for name, path in modules().items() for hit in private_imports(name, path)]
    assert offenders == [], "private names imported across packages:\n" + "\n".join(offenders)


def test_the_layering_check_sees_a_wrong_edge_and_a_private_import(tmp_path):
    graph = {
        "fay_ros.memory.store": {"fay_ros.dialogue.engine", "fay_ros.common.errors"},
        "fay_ros.dialogue.engine": {"fay_ros.memory.store"},
        "fay_ros.hearing.asr_core": {"fay_ros.nodes.asr"},
        "fay_ros.newpkg.x": {"fay_ros.common.errors"},
    }
    offences = layering_offences(graph, ALLOWED)
    assert len(offences) == 3, offences
    assert "'memory' may not import 'dialogue'" in offences[1] and "'hearing' may not import 'nodes'" in offences[0]
    assert "newpkg" in offences[2]
    fake = tmp_path / "x.py"
    fake.write_text("from ..memory.self_facts import _private, public\nfrom ._own import _fine\n")
    assert private_imports("fay_ros.dialogue.x", fake) == [f"{fake}:1 imports fay_ros.memory.self_facts._private"]
