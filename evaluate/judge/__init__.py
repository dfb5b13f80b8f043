"""Judging: a submission scored by one or more judges, one results file per judge and setting."""
