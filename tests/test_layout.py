"""The floors of framework/ stay as the README draws them: no import cycle at module level, an
engine that imports nothing above the ops, at most five imports inside the engine's functions
(where the ops, built on the engine, are reached at call time), and an engine small enough to
read in one sitting."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CODE_LINES = 2000  # the engine's code lines (docstrings, comments and blanks aside)


def _modules():
    modules = {}
    for path in sorted((ROOT / "framework").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _targets(module, path, node):
    """The framework modules an import statement names (a package's submodule if it is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if node.level:
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    found = []
    for alias in node.names:
        name = f"{base}.{alias.name}"
        found.append(name if name in MODULES else base)
    return [t for t in found if t in MODULES and t != module]


def _imports(inside_functions):
    """module -> the framework modules it imports at module level, or inside functions."""
    graph = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        nodes = ([n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(f)] if inside_functions else tree.body)
        graph[module] = {t for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
                         for t in _targets(module, path, n)}
    return graph


def test_no_import_cycle_at_module_level():
    graph, state, cycles = _imports(False), {}, []

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(trail[trail.index(target):] + [target])
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_engine_imports_nothing_above_the_ops():
    allowed = ("framework.engine", "framework.ops")
    for inside in (False, True):
        for module, targets in _imports(inside).items():
            if module.startswith("framework.engine"):
                above = sorted(t for t in targets if not t.startswith(allowed))
                assert not above, f"{module} imports {above}"


def test_at_most_five_imports_inside_the_engines_functions():
    inside = {module: targets for module, targets in _imports(True).items()
              if module.startswith("framework.engine") and targets}
    count = sum(len(targets) for targets in inside.values())
    assert count <= 5, f"{count} deferred imports in the engine: {inside}"


def test_the_engine_reads_in_one_sitting():
    code = 0
    for module, path in MODULES.items():
        if module.startswith("framework.engine"):
            tree = ast.parse(path.read_text())
            docstrings = {n.body[0].value.lineno for n in ast.walk(tree)
                          if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
                          and n.body and isinstance(n.body[0], ast.Expr)
                          and isinstance(n.body[0].value, ast.Constant)
                          and isinstance(n.body[0].value.value, str)}
            lines = path.read_text().splitlines()
            skipped = set()
            for n in ast.walk(tree):
                if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) \
                        and n.value.lineno in docstrings:
                    skipped.update(range(n.value.lineno, n.value.end_lineno + 1))
            code += sum(1 for i, line in enumerate(lines, 1)
                        if i not in skipped and line.strip() and not line.strip().startswith("#"))
    assert code <= ENGINE_CODE_LINES, f"the engine has {code} code lines"
