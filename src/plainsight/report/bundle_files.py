"""The names of a release bundle's files that the workflow's rules and the bundle's writers both use, free
of the writers' imports: the Snakefile reads them while it parses."""

# where a bundle's custodian's part lies in its folder: the evidence, the verdict and the summary the
# custodian signs, none of which leaves with the bundle
CUSTODIAN_FOLDER = "custodian"
EVIDENCE_FILE = "EVIDENCE.md"  # the custodian's card, with every count the audit read from the private corpus
UTILITY_FILE = "utility.csv"  # the run's full utility table, beside the card
