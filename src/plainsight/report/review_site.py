"""The review page of one dataset, setting and identifier set: a static site that opens from a
file:// URL with no server and no network.

`index.html` holds the page (Jinja2 template, styles and vanilla JavaScript inline) and a manifest of
the corpora; the data sit beside it in `data/*.js`, one file per corpus plus the real segments, the
entity index and the units at risk (`plainsight.report.units_at_risk`). They are scripts that assign
to a global, added to the page when first needed: a page opened from file:// may not fetch() JSON
files in Chromium, but it may load scripts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pandas as pd

from plainsight.evaluation.privacy import configured_real_values
from plainsight.io import atomic_directory, write_text
from plainsight.methods import registry
from plainsight.report.audit_verdict import NO_AUDIT, AuditVerdict
from plainsight.report.release_run import KNOWN_LIMITS
from plainsight.report.review_data import (
    RealCorpus,
    corpus_fingerprint,
    corpus_records,
    entity_index,
    leak_flag_columns,
    real_corpus,
)
from plainsight.report.sign_off import UNSIGNED
from plainsight.report.summary import ReleaseSummary, SummaryFrames, build_summary, value_types
from plainsight.report.summary_page import overview
from plainsight.report.summary_render import summary_html
from plainsight.report.units_at_risk import PersonView

VERDICTS: tuple[str, ...] = ("fine", "leaks", "copies", "not a document", "other")
DATA_GLOBAL = "PLAINSIGHT_REVIEW_DATA"
COMMENTS_FORMAT = "plainsight-review-comments"


@dataclass(frozen=True)
class ReviewRun:
    """One synthetic corpus on the page, with its per-generation metrics and nearest real segments."""

    method: str
    seed: int
    corpus: Path
    metrics: Path
    nearest: Path

    @property
    def key(self) -> str:
        return f"{self.method}/{self.seed}"

    @property
    def data_name(self) -> str:
        return f"corpus_{self.method}_seed{self.seed}"


@dataclass(frozen=True)
class ReviewSubject:
    """What the page reviews: one dataset, setting and identifier set."""

    dataset: str
    setting: str
    idset: str

    @property
    def name(self) -> str:
        return f"{self.dataset}/{self.setting}/{self.idset}"

    @property
    def keys(self) -> dict[str, str]:
        return {"dataset": self.dataset, "setting": self.setting, "idset": self.idset}


def data_script(name: str, payload: Any) -> str:
    """A data file the page loads with a <script> tag: it stores `payload` under `name`."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return (
        f"window.{DATA_GLOBAL} = window.{DATA_GLOBAL} || {{}};\n"
        f"window.{DATA_GLOBAL}[{json.dumps(name)}] = {body};\n"
    )


def _referenced_refs(
    records: Iterable[Mapping[str, Any]],
    index: Mapping[str, Mapping[str, Any]],
    units: Mapping[str, Sequence[Mapping[str, Any]]],
) -> set[str]:
    refs = {ref for entry in index.values() for ref in entry["real"]}
    refs.update(
        segment["ref"] for entries in units.values() for entry in entries for segment in entry["real"]
    )
    for record in records:
        refs.update(c["ref"] for c in record["contexts"])
        refs.update(n["ref"] for n in record["nearest"])
        refs.update(ref for highlight in record["highlights"] for ref in highlight[4])
    return refs


def real_payload(real: RealCorpus, refs: Iterable[str]) -> dict[str, Any]:
    """The real segments the page refers to: text, split and gold spans of the identifier set."""
    return {
        ref: {
            "text": real.texts[ref],
            "split": real.splits[ref],
            "spans": [list(span) for span in real.spans.get(ref, [])],
        }
        for ref in sorted(refs)
        if ref in real.texts
    }


def corpus_summary(
    run: ReviewRun, records: Sequence[Mapping[str, Any]], display: str, units_at_risk: int
) -> dict[str, Any]:
    leaking = sum(any(r["flags"].get(key) for key in leak_flag_keys()) for r in records)
    return {
        "key": run.key,
        "method": run.method,
        "seed": run.seed,
        "display": display,
        "family": registry.method(run.method).family,
        "data": run.data_name,
        "generations": len(records),
        "leaking": leaking,
        "units_at_risk": units_at_risk,
    }


def leak_flag_keys() -> tuple[str, ...]:
    """The page's leak flags: "only leaking" shows the generations with any of them."""
    return tuple(key for key, _ in leak_flag_columns())


def page_flags() -> tuple[str, ...]:
    return (*leak_flag_keys(), "not_document", "regenerated")


def audit_summary(methods: Mapping[str, str], verdicts: Mapping[str, AuditVerdict] | None) -> dict[str, Any]:
    """The audit's verdict of each method on the page ({method: display name}, in page order): `no audit`
    where the run is not audited (`verdicts` None) or the audit has no row for the method."""
    entries = []
    for method, display in methods.items():
        verdict = (verdicts or {}).get(method, AuditVerdict(NO_AUDIT, (), ""))
        entries.append(
            {
                "method": method,
                "display": display,
                "verdict": verdict.verdict,
                "kind": verdict.kind,
                "seeds": verdict.seed_verdicts,
                "reasons": list(verdict.reasons),
            }
        )
    threat = next((v.threat_model for v in (verdicts or {}).values() if v.threat_model), "")
    return {"audited": verdicts is not None, "threat_model": threat, "methods": entries}


def manifest(
    subject: ReviewSubject,
    fingerprint: str,
    summaries: list[dict[str, Any]],
    flags: set[str],
    audit: Mapping[str, Any],
) -> dict[str, Any]:
    """What index.html holds itself: the corpora, the audit's verdicts, the reviewers' verdicts and the
    flags (those the metrics have)."""
    return {
        "dataset": subject.dataset,
        "setting": subject.setting,
        "idset": subject.idset,
        "fingerprint": fingerprint,
        "corpora": summaries,
        "audit": audit,
        "verdicts": list(VERDICTS),
        "flags": [flag for flag in page_flags() if flag in flags],
        "leak_flags": list(leak_flag_keys()),
        "format": COMMENTS_FORMAT,
        "data_global": DATA_GLOBAL,
    }


def method_summaries(
    summaries: Sequence[ReleaseSummary], display_names: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Each method's release summary for the page: its row of the top table (`summary.overview`) and the
    whole summary as HTML, every text escaped by `summary.summary_html`."""
    return [
        {
            **overview(summary),
            "display": display_names[summary.method],
            "html": markupsafe.Markup(summary_html(summary, top_level=3)),
        }
        for summary in summaries
    ]


def render_page(
    page_manifest: Mapping[str, Any],
    summaries: Sequence[Mapping[str, Any]] = (),
    frontier: Mapping[str, Any] | None = None,
) -> str:
    """index.html: every corpus value reaches the page through the data files, and the page writes
    them with textContent; Jinja2 escapes what the template itself shows (the summaries' HTML is escaped
    where it is built). `frontier`: the privacy-utility frontier's rows and figure
    (`plainsight.report.frontier.frontier_view`), or None."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("plainsight.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template("review/index.html.j2").render(
        manifest=page_manifest, summaries=summaries, frontier=frontier
    )


def write_site(index_html: str, data_files: Mapping[str, str], index_path: Path, data_dir: Path) -> None:
    """The data folder and then index.html, each replaced whole: a failed build leaves the old site."""
    with atomic_directory(data_dir) as staging:
        for name, text in data_files.items():
            (staging / f"{name}.js").write_text(text, encoding="utf-8")
    write_text(index_html, index_path)


@dataclass(frozen=True)
class ReviewEvidence:
    """What the page's release summaries read beside the corpora: the audit's verdict per method
    (`plainsight.report.audit_verdict`; None where the run is not audited), the run's utility table and
    the reviewers' comments brought into the results (None: none); or, with `review.release_summaries`,
    each method's release bundle summary itself (`bundles`, by method:
    `plainsight.report.release.shipped_summary`), which the page shows in their place. A sign-off accepts
    the texts of a release bundle (`plainsight.report.sign_off`) and comes with its summary; it never lifts
    the stamp of the page's own corpora."""

    verdicts: Mapping[str, AuditVerdict] | None = None
    utility: pd.DataFrame | None = None
    comments: pd.DataFrame | None = None
    bundles: Mapping[str, ReleaseSummary] | None = None
    frontier: Mapping[str, Any] | None = None  # `frontier_view` of `review.frontier`, on Table 1's page


def run_audit_summaries(
    subject: ReviewSubject,
    methods: Mapping[str, str],
    metrics: Mapping[str, Sequence[pd.DataFrame]],
    spans: pd.DataFrame,
    evidence: ReviewEvidence,
) -> list[ReleaseSummary]:
    """Each method's summary from its run's privacy audit table (of the corpora before the release filter)
    and the page's corpora: where the page does not show the bundles' own summaries."""
    verdicts = evidence.verdicts
    return [
        build_summary(
            display,
            method,
            None if verdicts is None else verdicts.get(method, AuditVerdict(NO_AUDIT, (), "")),
            UNSIGNED,
            SummaryFrames(
                pd.concat(metrics[method], ignore_index=True), spans, evidence.utility, evidence.comments
            ),
            subject.keys,
            KNOWN_LIMITS,
        )
        for method, display in methods.items()
    ]


@dataclass(frozen=True)
class SitePaths:
    """Where the page goes: index.html and the folder of its data files."""

    index: Path
    data: Path


def build_review_site(
    subject: ReviewSubject,
    runs: Sequence[ReviewRun],
    docs: pd.DataFrame,
    spans: pd.DataFrame,
    display_names: Mapping[str, str],
    metrics_settings: Mapping[str, Any],
    paths: SitePaths,
    evidence: ReviewEvidence,
) -> None:
    """The review page of `runs` (ordered as the page lists them) and its data files. At the top, each
    method's release summary (`plainsight.report.summary`) from its corpora's metrics and `evidence`.
    `metrics_settings`: config `metrics` with `verbatim_ngram`, as rule `privacy_metrics` reads them,
    so that the person view links the units the metrics link."""
    min_letters = metrics_settings["partial_leak_min_letters"]
    real = real_corpus(docs, spans, subject.idset, min_letters)
    persons = PersonView(
        configured_real_values(docs, spans, subject.idset, metrics_settings),
        value_types(spans),
    )
    corpora, summaries, methods, units = {}, [], {}, {}
    metrics: dict[str, list[pd.DataFrame]] = {}
    for run in runs:
        run_metrics = pd.read_parquet(run.metrics)
        records = corpus_records(
            pd.read_parquet(run.corpus),
            run_metrics,
            pd.read_parquet(run.nearest),
            real,
            registry.method(run.method).in_context,
        )
        corpora[run.key] = records
        units[run.key] = persons.corpus([record["text"] for record in records])
        display = display_names.get(registry.base_method(run.method), run.method)
        summaries.append(corpus_summary(run, records, display, len(units[run.key])))
        methods.setdefault(run.method, display)
        metrics.setdefault(run.method, []).append(run_metrics.assign(seed=run.seed))
    index = entity_index(real, corpora)
    all_records = [record for records in corpora.values() for record in records]
    data_files = {run.data_name: data_script(run.data_name, corpora[run.key]) for run in runs}
    data_files["real"] = data_script("real", real_payload(real, _referenced_refs(all_records, index, units)))
    data_files["entities"] = data_script("entities", index)
    data_files["units"] = data_script("units", units)
    fingerprint = corpus_fingerprint([run.corpus for run in runs])
    flags = {flag for record in all_records for flag in record["flags"]}
    audit = audit_summary(methods, evidence.verdicts) | {"bundles": evidence.bundles is not None}
    page = manifest(subject, fingerprint, summaries, flags, audit)
    release = (
        [evidence.bundles[method] for method in methods]
        if evidence.bundles is not None
        else run_audit_summaries(subject, methods, metrics, spans, evidence)
    )
    html = render_page(page, method_summaries(release, methods), evidence.frontier)
    write_site(html, data_files, paths.index, paths.data)
