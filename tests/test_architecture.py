"""The package's shape: stages import only earlier stages, and method names live in the registry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from plainsight.methods import registry

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "plainsight"
# Pipeline order: a module may import its own stage, an earlier stage, or a shared module.
STAGES = ("data", "codes", "methods", "training", "generation", "evaluation", "audit", "report")
SHARED = 0


def rank(module: str) -> int:
    """0 for a shared module (plainsight.io, plainsight.matching, ...), else 1 + the stage's position."""
    parts = module.split(".")
    return STAGES.index(parts[1]) + 1 if len(parts) > 1 and parts[1] in STAGES else SHARED


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def plainsight_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every plainsight import in a file, top-level and inside functions."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "plainsight":  # from plainsight import io
            found += [(node.lineno, f"plainsight.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("plainsight."):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name) for alias in node.names if alias.name.startswith("plainsight")
            ]
    return found


def upward_imports(path: Path) -> list[str]:
    importer = module_name(path)
    return [
        f"{path.relative_to(REPO)}:{line} ({importer}) imports {imported}"
        for line, imported in plainsight_imports(path)
        if rank(imported) > rank(importer)
    ]


def test_rank_orders_the_stages_after_the_shared_modules():
    assert rank("plainsight.io") == rank("plainsight.matching") == SHARED
    assert (
        rank("plainsight.data.tab")
        < rank("plainsight.codes.control_code")
        < rank("plainsight.methods.registry")
    )
    assert (
        rank("plainsight.training.loop")
        < rank("plainsight.generation.runner")
        < rank("plainsight.report.table_format")
    )


def test_the_check_finds_an_upward_import(tmp_path, monkeypatch):
    fake_package = tmp_path / "plainsight"
    (fake_package / "codes").mkdir(parents=True)
    module = fake_package / "codes" / "control_code.py"
    module.write_text("def f():\n    from plainsight.evaluation.privacy import summarise\n", encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.PACKAGE", fake_package)
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    assert upward_imports(module) == [
        "plainsight/codes/control_code.py:2 (plainsight.codes.control_code) imports "
        "plainsight.evaluation.privacy"
    ]


def test_no_module_imports_a_later_stage():
    problems = [problem for path in sorted(PACKAGE.rglob("*.py")) for problem in upward_imports(path)]
    assert not problems, "\n".join(problems)


def imported_modules(path: Path) -> set[str]:
    """The plainsight modules a file imports: `from plainsight.x import y` is module `plainsight.x.y`
    where `y` is a module, else `plainsight.x`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("plainsight"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if is_module(candidate) else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("plainsight")}
    return found


def is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def mutual_imports(paths: list[Path]) -> list[str]:
    """`a <-> b` for each pair of modules that import each other, top-level or inside functions."""
    imports = {module_name(path): imported_modules(path) for path in paths}
    return [
        f"{importer} <-> {imported}"
        for importer, modules in sorted(imports.items())
        for imported in sorted(modules)
        if importer < imported and importer in imports.get(imported, set())
    ]


def test_the_check_finds_two_modules_that_import_each_other(tmp_path, monkeypatch):
    fake_package = tmp_path / "plainsight"
    (fake_package / "evaluation").mkdir(parents=True)
    (fake_package / "evaluation" / "__init__.py").write_text("", encoding="utf-8")
    files = {
        "task.py": "from plainsight.evaluation.model import Settings\n",
        "model.py": "def fit():\n    from plainsight.evaluation import task\n",
        "table.py": "from plainsight.evaluation.task import score\nfrom plainsight.evaluation import model\n",
    }
    for name, text in files.items():
        (fake_package / "evaluation" / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.PACKAGE", fake_package)
    paths = sorted(fake_package.rglob("*.py"))
    # table imports both, but neither imports table: only the task and the model form a circle
    assert mutual_imports(paths) == ["plainsight.evaluation.model <-> plainsight.evaluation.task"]


def test_no_two_modules_import_each_other():
    circles = mutual_imports(sorted(PACKAGE.rglob("*.py")))
    assert not circles, "\n".join(circles)


def string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("folder", ["src/plainsight", "workflow/scripts"])
def test_method_names_are_spelled_only_in_the_registry(folder):
    names = set(registry.names())
    spelled = [
        f"{path.relative_to(REPO)}:{line}: {value!r}"
        for path in sorted((REPO / folder).rglob("*.py"))
        if path.name != "registry.py"
        for line, value in string_literals(path)
        if value in names
    ]
    assert not spelled, "\n".join(spelled)


def test_rule_files_spell_no_method_name():
    """Config keys (`config["dpsgd"]`, the DP-SGD settings block) are the config's, not method names."""
    names = set(registry.names())
    spelled = [
        f"{path.relative_to(REPO)}: {quoted}"
        for path in sorted((REPO / "workflow").rglob("*.smk"))
        for text in [re.sub(r'\["\w+"\]', "", path.read_text(encoding="utf-8"))]
        for quoted in (f'"{name}"' for name in names)
        if quoted in text
    ]
    assert not spelled, "\n".join(spelled)


def statement_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Statements in a function's body, nested ones included: a length the formatter cannot change."""
    return sum(isinstance(node, ast.stmt) for node in ast.walk(function)) - 1


def function_lengths(path: Path) -> list[tuple[str, int]]:
    return [
        (node.name, statement_count(node))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def test_statement_count_ignores_line_breaks():
    one_line = ast.parse("def f(a):\n    x = g(a, 1)\n    return x\n").body[0]
    wrapped = ast.parse("def f(a):\n    x = g(\n        a,\n        1,\n    )\n    return x\n").body[0]
    assert statement_count(one_line) == statement_count(wrapped) == 2


def test_no_function_in_the_package_is_over_35_statements():
    long = [
        f"{path.relative_to(REPO)}: {name} ({statements} statements)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, statements in function_lengths(path)
        if statements > 35
    ]
    assert long == []


def parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters a caller passes: positional, keyword-only and their variadic forms, not `self` or
    `cls`."""
    arguments = function.args
    named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    variadic = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    bound = 1 if named and named[0].arg in ("self", "cls") else 0
    return len(named) + len(variadic) - bound


def test_parameter_count_leaves_out_self():
    method = ast.parse("class A:\n    def f(self, a, *b, c=1, **d):\n        pass\n").body[0].body[0]
    assert parameter_count(method) == 4


def test_no_function_in_the_package_takes_over_8_parameters():
    """A function that needs more takes a typed object that groups them (a settings block, a run)."""
    wide = [
        f"{path.relative_to(REPO)}: {node.name} ({parameter_count(node)} parameters)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameter_count(node) > 8
    ]
    assert wide == []


SCRIPTS = REPO / "workflow" / "scripts"


@pytest.mark.parametrize("script", sorted(SCRIPTS.glob("*.py")), ids=lambda path: path.name)
def test_scripts_only_read_the_job_and_call_the_package(script):
    """A rule script defines `main(job)` and ends with `run_rule(main)`; `main` holds no control flow."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [f.name for f in functions] == ["main"]
    flow = [
        type(node).__name__
        for node in ast.walk(functions[0])
        if isinstance(node, (ast.For, ast.While, ast.If, ast.Try, ast.With))
    ]
    assert flow == []
    assert statement_count(functions[0]) <= 8
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and ast.unparse(last) == "run_rule(main)"
