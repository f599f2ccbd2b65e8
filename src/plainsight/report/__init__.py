"""Stage 7, report: paper-style tables, the privacy-utility plot and readable corpus samples."""
