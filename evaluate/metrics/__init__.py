"""Figures computed from stored results: what a metric is, outcomes and agreement, intervals, summary rows."""
