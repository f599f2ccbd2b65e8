"""Stage 1, data: source files (TAB JSON, MIMIC-III NOTEEVENTS) -> segment and span tables."""
