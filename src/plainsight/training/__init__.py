"""Stage 4, training: prefix tuning (plain and masked objective) and the DP-SGD baseline."""
