"""Rule `all_tables`: a list of every table and plot built, one path per line."""

from plainsight.io import write_text
from plainsight.logs import run_step


def main():
    paths = [*snakemake.input.tables, *snakemake.input.plots]  # noqa: F821
    write_text("".join(f"{path}\n" for path in paths), snakemake.output[0])  # noqa: F821


run_step(main, snakemake.log[0])  # noqa: F821
