"""Rule `download_tab`: fetch one official TAB file and check that it parses."""

import logging
import urllib.request

from plainsight.data.tab import read_tab_file
from plainsight.io import atomic_path
from plainsight.snakemake_job import RuleJob, run_rule


def main(job: RuleJob) -> None:
    url, target = job.params.url, job.output[0]
    with atomic_path(target) as tmp:
        logging.getLogger("plainsight").info("downloading %s", url)
        urllib.request.urlretrieve(url, tmp)
        documents = read_tab_file(tmp)
        logging.getLogger("plainsight").info("%s: %d documents", target, len(documents))


run_rule(main)
