"""Generation, judging, metrics and reports over RQ-Bench instances."""
