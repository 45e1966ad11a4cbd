"""The package's layers, read from its source with `ast`: which module imports which
(at the top, inside functions and under TYPE_CHECKING alike), and what the hook path and
the launcher's early scan may load. docs/architecture.md draws the same picture."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "git_checkpoint"

# Low to high: a module imports only from its own package or from a lower rank.
# Packages that share a rank are siblings and never import each other.
RANKS = {
    "core": 0,
    "gitcore": 1,
    "risk": 1,
    "fast": 2,
    "config": 3,
    "storage": 4,
    "save": 5,
    "restore": 6,
    "verify": 7,
    "runloop": 8,
    "share": 8,
    "install": 8,
    "doctor": 9,
    "app": 10,
    "api": 11,
    "entry": 12,
}
TOP = {
    "git_checkpoint": "core",
    "__main__": "entry",
    "launch": "entry",
    "hook": "entry",
    "api": "api",
}
# The part of gitcore the hook path and the launcher may load: no subprocess, no pygit2.
LIGHT_GITCORE = {"formats", "spawn", "locate", "pathrules", "loose", "indexfile"}
# What the hook path (fast/, entry/hook.py at its top) may reach besides the standard
# library: never a third-party package, never the save path.
HOOK_PATH_ALLOWED = ("core", "risk", "fast")
THIRD_PARTY = {"yaml", "click", "pygit2", "detect_secrets", "mcp"}
MAX_POSITIONAL = 5
GIT_STARTERS = {"run", "Popen", "check_output", "check_call", "call", "posix_spawnp", "execvp"}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str  # a module of ours ("git_checkpoint.x.y") or a top-level foreign name
    line: int
    top_level: bool  # run on import: at the module's top, not in a function or TYPE_CHECKING

    def where(self) -> str:
        return f"{_path(self.source)}:{self.line}"


def _path(module: str) -> str:
    parts = module.split(".")[1:]
    folder = PACKAGE.joinpath(*parts)
    rel = folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")
    return str(rel.relative_to(PACKAGE.parent))


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _edges(module: str, path: Path) -> list[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    # (an `if` at the top runs on import, unless it is `if TYPE_CHECKING:`)
    top |= {
        id(n)
        for stmt in tree.body
        if isinstance(stmt, ast.If) and ast.unparse(stmt.test) != "TYPE_CHECKING"
        for n in stmt.body
    }
    out = []
    for node in ast.walk(tree):
        at_top = id(node) in top
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append(Edge(module, alias.name, node.lineno, at_top))
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.append(Edge(module, full if full in MODULES else target, node.lineno, at_top))
    return out


EDGES = [edge for module, path in MODULES.items() for edge in _edges(module, path)]
OURS = [e for e in EDGES if e.target in MODULES and e.target != e.source]


def _package(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return TOP["git_checkpoint"]
    return TOP.get(parts[1], parts[1]) if len(parts) == 2 else parts[1]


def _light(module: str) -> bool:
    parts = module.split(".")
    return len(parts) == 3 and parts[1] == "gitcore" and parts[2] in LIGHT_GITCORE


def find_cycles(edges: list[Edge]) -> list[list[str]]:
    """Every import cycle (Tarjan's strongly connected components of more than one)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def _cycle_path(component: list[str]) -> str:
    """One loop through a cycle's modules, each step with the line that imports."""
    members = set(component)
    by_source: dict[str, Edge] = {}
    start = component[0]
    path = [start]
    seen = {start}
    current = start
    while True:
        step = next(
            e for e in OURS if e.source == current and e.target in members and e.target != current
        )
        by_source[current] = step
        current = step.target
        if current in seen:
            break
        seen.add(current)
        path.append(current)
    loop = [*path[path.index(current) :], current]
    return " -> ".join(
        f"{m} ({by_source[m].where()})" if m in by_source and i < len(loop) - 1 else m
        for i, m in enumerate(loop)
    )


def test_no_import_cycle() -> None:
    cycles = find_cycles(OURS)
    assert not cycles, "import cycles:\n" + "\n".join(_cycle_path(c) for c in cycles)


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for e in OURS:
        source, target = _package(e.source), _package(e.target)
        if source == target:
            continue
        if RANKS[target] >= RANKS[source]:
            wrong.append(
                f"{e.where()}: {source} (rank {RANKS[source]}) imports {e.target} "
                f"({target}, rank {RANKS[target]})"
            )
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_light_gitcore_never_reaches_the_full_one() -> None:
    wrong = [
        f"{e.where()}: {e.source} imports {e.target}"
        for e in OURS
        if _light(e.source) and _package(e.target) == "gitcore" and not _light(e.target)
    ]
    assert not wrong, "\n".join(wrong)


def _hook_path() -> dict[str, Edge | None]:
    """Every module of ours the hook path can load: from fast/ (any import) and from
    the entries' tops (entry/hook.py, entry/cmdline.py, entry/launch.py), with the edge
    that first reached it."""
    roots = [m for m in MODULES if _package(m) == "fast" and m != "git_checkpoint.fast"]
    roots += ["git_checkpoint.entry.hook", "git_checkpoint.entry.cmdline"]
    reached: dict[str, Edge | None] = dict.fromkeys(roots)
    todo = list(roots)
    while todo:
        module = todo.pop()
        entry_top = _package(module) == "entry"
        for e in EDGES:
            if e.source != module or (entry_top and not e.top_level):
                continue
            if e.target in MODULES and e.target not in reached:
                reached[e.target] = e
                todo.append(e.target)
    return reached


def test_the_hook_path_loads_only_the_light_layers() -> None:
    reached = _hook_path()
    wrong = [
        f"{edge.where() if edge else module}: {module}"
        for module, edge in reached.items()
        if _package(module) not in ("entry", *HOOK_PATH_ALLOWED)
        and not (_package(module) == "gitcore" and (_light(module) or module.endswith("gitcore")))
        and module != "git_checkpoint"
    ]
    assert not wrong, "the hook path reaches beyond core, risk, fast and light gitcore:\n" + (
        "\n".join(wrong)
    )


def test_the_hook_path_imports_no_third_party_package() -> None:
    reached = _hook_path()
    wrong = [
        f"{e.where()}: {e.target}"
        for e in EDGES
        if e.source in reached
        and e.target.split(".")[0] in THIRD_PARTY
        and (_package(e.source) != "entry" or e.top_level)
    ]
    assert not wrong, "\n".join(wrong)


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((module, node))
    return out


def test_no_function_takes_more_than_five_positional_parameters() -> None:
    wrong = []
    for module, fn in _functions():
        names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        if names[:1] in (["self"], ["cls"]):
            names = names[1:]
        if len(names) > MAX_POSITIONAL:
            wrong.append(f"{_path(module)}:{fn.lineno}: {fn.name}({', '.join(names)})")
    assert not wrong, "use keyword-only parameters or a dataclass:\n" + "\n".join(wrong)


def _calls(module: str) -> list[ast.Call]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return f"{_name(func.value)}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else ""


def test_only_the_entries_print_or_exit() -> None:
    wrong = []
    for module in MODULES:
        if _package(module) == "entry":
            continue
        for call in _calls(module):
            name = _name(call.func)
            if name in ("print", "sys.exit", "os._exit", "exit", "quit") or name.startswith(
                ("sys.stdout.", "sys.stderr.")
            ):
                wrong.append(f"{_path(module)}:{call.lineno}: {name}()")
    assert not wrong, "\n".join(wrong)


def test_only_gitcore_starts_git() -> None:
    wrong = []
    for module in MODULES:
        if _package(module) == "gitcore":
            continue
        for call in _calls(module):
            if _name(call.func).rsplit(".", 1)[-1] not in GIT_STARTERS or not call.args:
                continue
            argv = call.args[-1] if _name(call.func).endswith("posix_spawnp") else call.args[0]
            first = argv.elts[0] if isinstance(argv, ast.List | ast.Tuple) and argv.elts else None
            if isinstance(first, ast.Constant) and first.value == "git":
                wrong.append(f"{_path(module)}:{call.lineno}: {_name(call.func)}(['git', …])")
    assert not wrong, "git started outside gitcore:\n" + "\n".join(wrong)


def test_every_module_says_what_it_owns() -> None:
    missing = [
        _path(m)
        for m, path in MODULES.items()
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not missing, "modules without a docstring:\n" + "\n".join(missing)


def test_the_cycle_finder_sees_a_cycle() -> None:
    """The check above can fail: a made-up cycle through three modules is found."""
    made_up = [
        Edge("git_checkpoint.a", "git_checkpoint.b", 1, True),
        Edge("git_checkpoint.b", "git_checkpoint.c", 1, False),
        Edge("git_checkpoint.c", "git_checkpoint.a", 1, True),
        Edge("git_checkpoint.c", "git_checkpoint.d", 1, True),
    ]
    assert find_cycles(made_up) == [["git_checkpoint.a", "git_checkpoint.b", "git_checkpoint.c"]]
