"""Progress lines: what a rule's log shows while a long job runs."""

from __future__ import annotations

import logging

from plainsight.progress import Progress, format_duration, progress_line


def test_format_duration():
    assert format_duration(42.4) == "42s"
    assert format_duration(185) == "3m05s"
    assert format_duration(3720) == "1h02m"


def test_progress_line_has_count_rate_and_eta():
    line = progress_line("generate icl", 12, 24, "documents", tokens=3720, elapsed=100.0)
    assert line == "generate icl: 12/24 documents (50%), 37.2 tokens/s, 1m40s elapsed, ETA 1m40s"


def test_progress_line_without_tokens_or_done_units():
    assert (
        progress_line("train", 0, 10, "steps", tokens=0, elapsed=5.0) == "train: 0/10 steps (0%), 5s elapsed"
    )


def test_progress_logs_every_interval_and_at_close(caplog):
    now = [0.0]
    with (
        caplog.at_level(logging.INFO, logger="plainsight.progress"),
        Progress(total=4, desc="job", unit="steps", interval_s=30, clock=lambda: now[0]) as progress,
    ):
        for _ in range(4):
            now[0] += 20
            progress.update(1, tokens=100)
    lines = [record.getMessage() for record in caplog.records]
    # at 40 s (30 s since the start) and at 80 s (40 s after), then at close
    assert lines == [
        "job: 2/4 steps (50%), 5.0 tokens/s, 40s elapsed, ETA 40s",
        "job: 4/4 steps (100%), 5.0 tokens/s, 1m20s elapsed",
        "job: 4/4 steps (100%), 5.0 tokens/s, 1m20s elapsed",
    ]
