"""The release summary's blocks (`plainsight.report.summary_page`) as Markdown (SUMMARY.md of a
release bundle) or as an HTML fragment (the top of the review page)."""

from __future__ import annotations

import html
from collections.abc import Iterable

from plainsight.report.summary import ReleaseSummary
from plainsight.report.summary_page import Block, Bullets, Heading, Paragraph, Run, summary_blocks


def _markdown_runs(runs: Iterable[Run]) -> str:
    def one(run: Run) -> str:
        if run.href:
            return f"[{run.text}]({run.href})"
        return {"strong": f"**{run.text}**", "code": f"`{run.text}`"}.get(run.style, run.text)

    return "".join(map(one, runs))


def _markdown_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _markdown_block(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return [f"{'#' * block.level} {block.text}"]
    if isinstance(block, Paragraph):
        return [_markdown_runs(block.runs)]
    if isinstance(block, Bullets):
        return [f"- {_markdown_runs(item)}" for item in block.items]
    lines = ["| " + " | ".join(map(_markdown_cell, row)) + " |" for row in (block.header, *block.rows)]
    return [lines[0], "|" + "---|" * len(block.header), *lines[1:]]


def summary_markdown(summary: ReleaseSummary) -> str:
    """SUMMARY.md of a release bundle."""
    return "\n\n".join("\n".join(_markdown_block(block)) for block in summary_blocks(summary)) + "\n"


def _html_runs(runs: Iterable[Run]) -> str:
    def one(run: Run) -> str:
        text = html.escape(run.text)
        if run.href:
            return f'<a href="{html.escape(run.href)}">{text}</a>'
        return f"<{run.style}>{text}</{run.style}>" if run.style in ("strong", "code") else text

    return "".join(map(one, runs))


def _html_block(block: Block, top_level: int) -> str:
    role = f' class="{html.escape(block.role)}"' if getattr(block, "role", "") else ""
    if isinstance(block, Heading):
        level = min(top_level + block.level - 1, 6)
        return f"<h{level}>{html.escape(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        return f"<p{role}>{_html_runs(block.runs)}</p>"
    if isinstance(block, Bullets):
        return f"<ul{role}>" + "".join(f"<li>{_html_runs(item)}</li>" for item in block.items) + "</ul>"
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in block.header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in block.rows
    )
    return f"<table{role}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def summary_html(summary: ReleaseSummary, top_level: int = 1) -> str:
    """The same summary as an HTML fragment, every text escaped; the title is an `<h{top_level}>`."""
    return "\n".join(_html_block(block, top_level) for block in summary_blocks(summary))
