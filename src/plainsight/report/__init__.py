"""Stage 8, report: paper-style tables, the privacy-utility plot and readable corpus samples."""
