"""Figures as the report writes them: matplotlib without a display, each PNG written whole or not at all."""

from __future__ import annotations

from pathlib import Path

from plainsight.io import atomic_path


def pyplot():
    """matplotlib's pyplot on the Agg backend (jobs run without a display), imported only when a figure
    is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(plt, figure, path: str | Path) -> None:
    """`figure` as a PNG at `path` (replaced whole), then closed."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)
    plt.close(figure)
