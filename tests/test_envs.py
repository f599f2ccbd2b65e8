"""Conda environments of the rules: every rule that runs code has one, each is generated from pyproject.toml
and the lock (and current), and the lock pins every declared dependency."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ENVS = REPO / "workflow/envs"
PIN_FILES = ("constraints.txt", "requirements-models.txt")  # the lock, and the models installed without deps
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")


def normalise(name: str) -> str:
    """Package names as pip compares them: case, '-', '_' and '.' do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(words: list[str]) -> dict[str, str]:
    """name -> version of every `name==version` among `words` (requirement lines or command words)."""
    return {normalise(m.group(1)): m.group(2) for m in map(PIN.match, words) if m}


def pin_mismatches(pins: dict[str, str], references: dict[str, dict[str, str]]) -> list[str]:
    """Each pin of `pins` that is not pinned by any reference, or pinned differently by one of them."""
    problems = []
    for name, version in sorted(pins.items()):
        pinned = {source: ref[name] for source, ref in references.items() if name in ref}
        if not pinned:
            problems.append(f"{name}=={version} is pinned in none of {sorted(references)}")
        problems += [
            f"{name}=={version}, but {source} pins {other}"
            for source, other in pinned.items()
            if other != version
        ]
    return problems


def read_lines(path: Path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]


def env_file_pins(path: Path) -> dict[str, str]:
    """The pip pins of a conda env file."""
    pip_sections = [
        d["pip"]
        for d in yaml.safe_load(path.read_text(encoding="utf-8"))["dependencies"]
        if isinstance(d, dict)
    ]
    return parse_pins([line.strip() for section in pip_sections for line in section])


def post_deploy_pins(path: Path) -> dict[str, str]:
    """The pins a post-deploy script installs."""
    return parse_pins(" ".join(read_lines(path)).split())


def post_deploy_script(env: Path) -> Path:
    return env.with_name(env.stem + ".post-deploy.sh")


@pytest.fixture(scope="module")
def references() -> dict[str, dict[str, str]]:
    return {name: parse_pins(read_lines(REPO / name)) for name in PIN_FILES}


@pytest.fixture(scope="module")
def rules():
    """The workflow's rules as Snakemake loads them; two shards, so that the shard-joining rule exists too."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            storage_settings=StorageSettings(),
            config_settings=ConfigSettings(config={"generation": {"shards": 2}}),
            snakefile=REPO / "workflow/Snakefile",
            workdir=REPO,
        )
        return list(workflow._workflow.rules)


def env_path(rule) -> Path:
    """Snakemake reads a rule's env file relative to the file that defines the rule."""
    return (Path(rule.snakefile).parent / rule.conda_env).resolve()


def test_every_rule_that_runs_code_has_an_env_file(rules):
    runs_code = [rule for rule in rules if not rule.norun]  # norun: a target rule, only inputs
    assert {"generate_icl", "concat_shards", "table"} <= {rule.name for rule in runs_code}
    for rule in runs_code:
        assert rule.script or rule.shellcmd or rule.notebook or rule.wrapper, (
            f"rule {rule.name}: a run: block cannot use a conda env; move the code into a script"
        )
        assert rule.conda_env, f"rule {rule.name} has no conda: directive"
        path = env_path(rule)
        assert path.parent == ENVS and path.is_file(), (
            f"rule {rule.name}: {path} is not a file in workflow/envs/"
        )


def test_every_env_file_is_used(rules):
    used = {env_path(rule) for rule in rules if rule.conda_env}
    assert used == set(ENVS.glob("*.yaml"))


@pytest.mark.parametrize("env", sorted(ENVS.glob("*.yaml")), ids=lambda path: path.name)
def test_env_pins_are_the_project_pins(env, references):
    spec = yaml.safe_load(env.read_text(encoding="utf-8"))
    assert "python=3.11" in spec["dependencies"] and "pip" in spec["dependencies"]
    pins = env_file_pins(env)
    assert pins, f"{env.name} pins no pip package"
    assert pin_mismatches(pins, references) == []
    script = post_deploy_script(env)
    assert script.is_file(), f"{script.name} (installs the project package) is missing"
    assert "pip install --quiet --no-deps -e ." in script.read_text(encoding="utf-8")
    assert pin_mismatches(post_deploy_pins(script), references) == []


def conda_envs_tool():
    spec = importlib.util.spec_from_file_location("conda_envs", REPO / "tools/conda_envs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_files_are_current():
    """Each env file is what tools/conda_envs.py writes from pyproject.toml and constraints.txt."""
    for path, text in conda_envs_tool().environments().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is not current: run python tools/conda_envs.py"
        )


def test_an_env_holds_its_extra_pinned_by_the_lock():
    tool = conda_envs_tool()
    project = {"dependencies": ["pandas>=2.2"], "optional-dependencies": {"x": ["Torch>=2.4", "rouge-score"]}}
    text = tool.environment(
        "x", "a header", project, tool.lock_pins("torch==2.13.0\nrouge_score==0.1.2\npandas==3.1.1")
    )
    assert parse_pins([line.strip(" -") for line in text.splitlines()]) == {
        "pandas": "3.1.1",
        "torch": "2.13.0",
        "rouge-score": "0.1.2",
    }
    with pytest.raises(SystemExit, match="pins none of"):
        tool.environment("x", "a header", project, tool.lock_pins("torch==2.13.0"))


def test_the_lock_pins_every_declared_dependency_and_requirements_pin_nothing(references):
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    names = {normalise(re.match(r"[A-Za-z0-9._-]+", requirement).group(0)) for requirement in declared} - {
        "plainsight"
    }
    assert names - set(references["constraints.txt"]) == set()
    assert {
        "accelerate",
        "nltk",
        "scikit-learn",
    } <= names and "faiss-cpu" not in names  # mauve-text brings faiss
    for requirements in ("requirements.txt", "requirements-dev.txt"):
        assert parse_pins(read_lines(REPO / requirements)) == {}, (
            f"{requirements} pins a version: the lock does"
        )


def test_pin_mismatches_finds_a_version_changed_in_one_place():
    references = {
        "requirements.txt": parse_pins(["torch==2.13.0", "PyYAML==6.0.3", "# a comment"]),
        "constraints.txt": parse_pins(["torch==2.13.0", "pyyaml==6.0.3", "rouge_score==0.1.2"]),
    }
    env = parse_pins(["Torch==2.13.0", "pyyaml==6.0.3", "rouge-score==0.1.2"])
    assert pin_mismatches(env, references) == []  # names compare as pip does
    assert pin_mismatches({**env, "torch": "2.12.0"}, references) == [
        "torch==2.12.0, but requirements.txt pins 2.13.0",
        "torch==2.12.0, but constraints.txt pins 2.13.0",
    ]
    references["constraints.txt"]["torch"] = "2.14.0"  # changed in the lock only
    assert pin_mismatches(env, references) == ["torch==2.13.0, but constraints.txt pins 2.14.0"]
    assert pin_mismatches({"faker": "1.0"}, references) == [
        "faker==1.0 is pinned in none of ['constraints.txt', 'requirements.txt']"
    ]
