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

ROS_PACKAGES = {"rclpy", "fay_msgs", "std_msgs", "diagnostic_msgs", "sensor_msgs", "trajectory_msgs",
                "builtin_interfaces", "rcl_interfaces", "lifecycle_msgs", "action_msgs", "launch", "launch_ros",
                "ament_index_python", "rosidl_runtime_py", "hri_msgs", "diagnostic_updater"}
# The ROS side of the core/shell split: node shells and their shared ROS helpers.
SHELL_MODULES = {"fay_ros.common.node_main", "fay_ros.common.params", "fay_ros.common.qos",
                 "fay_ros.common.rostime", "fay_ros.common.readiness", "fay_ros.common.diagnostics",
                 "fay_ros.common.lifecycle"}
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
    return name.startswith("fay_ros.nodes.") or name == "fay_ros.nodes" or name in SHELL_MODULES


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
                    base = base[:len(base) - (child.level - 1)] if child.level > 1 else base
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
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


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
    fake.write_text("import rclpy\nfrom fay_msgs.msg import Utterance\nfrom . import qos\n"
                    "def f():\n    from ..dialogue import engine\n")
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
