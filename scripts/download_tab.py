"""Rule `download_tab`: fetch one official TAB file and check that it parses."""

import logging
import urllib.request

from plainsight.data.tab import read_tab_file
from plainsight.io import atomic_path
from plainsight.logs import run_step


def main():
    url, target = snakemake.params.url, snakemake.output[0]  # noqa: F821
    with atomic_path(target) as tmp:
        logging.getLogger("plainsight").info("downloading %s", url)
        urllib.request.urlretrieve(url, tmp)
        documents = read_tab_file(tmp)
        logging.getLogger("plainsight").info("%s: %d documents", target, len(documents))


run_step(main, snakemake.log[0])  # noqa: F821
