"""Privacy provenance of the workflow: which private files reach a file, and through which mechanisms.

`resources/privacy_provenance.yaml` declares once which files hold private data and which rules release
private information under an accounted guarantee (the mechanisms). A file is reached by private data when
a path of the workflow's DAG leads from a private file to it through jobs none of which is a registered
mechanism; a mechanism's outputs carry private information only through its guarantee. A corpus or a
bundle that states a formal guarantee must not be reached by private data (`unaccounted_paths`), and its
guarantee is the composition of the mechanisms on its paths (`mechanisms_behind`, then
`plainsight.audit.guarantee.bundle_accounting`):
a bundle that ships several seeds composes every seed's mechanisms.

The DAG comes from Snakemake's API (`workflow_jobs`), built without running a job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from plainsight.methods import registry

# where the workflow keeps the declaration, relative to its working directory
PROVENANCE = "resources/privacy_provenance.yaml"


@dataclass(frozen=True)
class Job:
    """One job of the workflow's DAG: its rule, wildcards and files."""

    rule: str
    wildcards: Mapping[str, str]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def label(self) -> str:
        shown = ", ".join(f"{key}={value}" for key, value in sorted(self.wildcards.items()))
        return f"{self.rule}({shown})"


@dataclass(frozen=True)
class Mechanism:
    """A rule whose jobs (of methods with the `method` registry attributes) release private information
    under an accounted guarantee."""

    name: str
    description: str
    rule: str
    method: Mapping[str, Any]
    budget: str
    bounds_release: bool
    record: str

    def covers(self, job: Job) -> bool:
        """Whether `job` is one of this mechanism's jobs."""
        if job.rule != self.rule:
            return False
        if not self.method:
            return True
        name = job.wildcards.get("method")
        if name is None:
            return False
        spec = registry.method(name)
        return all(getattr(spec, key) == value for key, value in self.method.items())


@dataclass(frozen=True)
class Provenance:
    """The declared private files and the registry of mechanisms."""

    private: tuple[str, ...]
    mechanisms: tuple[Mechanism, ...]

    @classmethod
    def from_yaml(cls, path: str | Path) -> Provenance:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return cls(
            tuple(data["private"]),
            tuple(Mechanism(**{"method": {}, **entry}) for entry in data["mechanisms"]),
        )

    def named(self, name: str) -> Mechanism:
        found = [m for m in self.mechanisms if m.name == name]
        if not found:
            raise ValueError(f"no mechanism {name!r} in the registry")
        return found[0]

    def is_private(self, path: str) -> bool:
        return any(pattern_regex(pattern).fullmatch(path) for pattern in self.private)

    def release_mechanism(self, job: Job) -> Mechanism | None:
        """The mechanism whose guarantee bounds what `job` writes; None: its outputs carry whatever private
        data its inputs do."""
        return next((m for m in self.mechanisms if m.bounds_release and m.covers(job)), None)

    def guaranteed_methods(self, methods: Iterable[str]) -> list[str]:
        """The methods of `methods` whose corpora a release-bounding mechanism writes or trains."""
        return [
            name
            for name in methods
            if any(
                m.bounds_release and m.method and m.covers(Job(m.rule, {"method": name}, (), ()))
                for m in self.mechanisms
            )
        ]


def pattern_regex(pattern: str) -> re.Pattern:
    """A path pattern with Snakemake's `{wildcard}`s as a regular expression (a wildcard: no slash)."""
    parts = re.split(r"\{[^}]+\}", pattern)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


@dataclass(frozen=True)
class Origin:
    """What reaches a file: a chain of files from a private one to it that no mechanism interrupts
    (empty: none), and the mechanism jobs on its paths."""

    private_chain: tuple[str, ...]
    mechanisms: frozenset[tuple[str, str]]  # (mechanism name, job label)


def ordered(jobs: Sequence[Job]) -> list[Job]:
    """`jobs` with every job after the jobs that write its inputs."""
    writer = {path: index for index, job in enumerate(jobs) for path in job.outputs}
    done: set[int] = set()
    order: list[Job] = []

    def visit(index: int, stack: frozenset[int]) -> None:
        if index in done:
            return
        if index in stack:
            raise ValueError(f"the workflow's jobs form a cycle at {jobs[index].label}")
        for path in jobs[index].inputs:
            if path in writer:
                visit(writer[path], stack | {index})
        done.add(index)
        order.append(jobs[index])

    for index in range(len(jobs)):
        visit(index, frozenset())
    return order


def trace(jobs: Sequence[Job], provenance: Provenance) -> dict[str, Origin]:
    """The origin of every file the jobs read or write."""
    origins: dict[str, Origin] = {}

    def origin(path: str) -> Origin:
        if path not in origins:
            private = (path,) if provenance.is_private(path) else ()
            origins[path] = Origin(private, frozenset())
        return origins[path]

    for job in ordered(jobs):
        inputs = [origin(path) for path in job.inputs]
        mechanism = provenance.release_mechanism(job)
        behind = frozenset().union(*(o.mechanisms for o in inputs))
        chain: tuple[str, ...] = ()
        if mechanism is not None:
            behind |= {(mechanism.name, job.label)}
        else:
            chain = next((o.private_chain for o in inputs if o.private_chain), ())
        for path in job.outputs:
            own = (path,) if provenance.is_private(path) else ()
            origins[path] = Origin((*chain, path) if chain else own, behind)
    return origins


def unaccounted_paths(
    jobs: Sequence[Job], provenance: Provenance, targets: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """Per target that private data reaches through no mechanism, one such path (private file first)."""
    origins = trace(jobs, provenance)
    missing = [target for target in targets if target not in origins]
    if missing:
        raise ValueError(f"no job of the DAG writes {', '.join(missing)}")
    return {target: origins[target].private_chain for target in targets if origins[target].private_chain}


def mechanisms_behind(jobs: Sequence[Job], provenance: Provenance, target: str) -> list[tuple[str, str]]:
    """The mechanism jobs on the paths to `target`, (name, job label), sorted."""
    return sorted(trace(jobs, provenance)[target].mechanisms)


# --- the composed guarantee --------------------------------------------------------------------------


def mechanism_records(
    provenance: Provenance, method: str, run: Mapping[str, str], seeds: Sequence[int]
) -> list:
    """(mechanism, record path) of every release-bounding mechanism behind a bundle of `method` on `run`
    (its dataset, setting and identifier set) shipping `seeds`: one per seed, or one for a mechanism
    whose record has no seed (the code patterns, shared by the seeds)."""
    entries = []
    for mechanism in provenance.mechanisms:
        if not (
            mechanism.bounds_release and mechanism.covers(Job(mechanism.rule, {"method": method}, (), ()))
        ):
            continue
        paths = [mechanism.record.format(method=method, seed=seed, **run) for seed in seeds]
        entries.extend((mechanism, path) for path in dict.fromkeys(paths))
    return entries


# --- the DAG of a profile ----------------------------------------------------------------------------


def workflow_jobs(root: str | Path, configfiles: Sequence[str | Path], targets: Sequence[str]) -> list[Job]:
    """The jobs of the workflow at `root` that build `targets` under `configfiles` (on top of the
    Snakefile's own config), from Snakemake's DAG: every job, whatever exists on disk; none is run."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    root = Path(root).resolve()
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(
            ResourceSettings(cores=1),
            ConfigSettings(configfiles=[Path(path).resolve() for path in configfiles]),
            snakefile=root / "workflow" / "Snakefile",
            workdir=root,
        )
        workflow_api.dag(DAGSettings(targets=list(targets), forceall=True))
        # Snakemake's API prints a DAG but does not return it: build it as its printers do
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        return [
            Job(job.rule.name, dict(job.wildcards), tuple(map(str, job.input)), tuple(map(str, job.output)))
            for job in workflow.dag.jobs
        ]
