"""Stage 8, report: paper-style tables, the privacy-utility plot and readable corpus samples.

- tables: `tables` (paper-style tables and their notes), `table_specs` (what the rules and the tables
  both read from a table spec; no heavy imports), `paper_table` (rule `table`), `utility_table`,
  `methods_table` (every method side by side);
- `plots` (the privacy-utility picture), `samples` (readable corpus samples), `plan` (the cost plan
  of a target from its dry run);
- release: `release` (release bundles and their dataset card), `audit_verdict` (a run's verdicts
  from the privacy audit table), `leak_classes` (source-specific or common real values);
- review page: `review_data`, `review_site`, `review_comments`, `units_at_risk` (its person view).
"""
