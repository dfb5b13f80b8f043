"""The RQ-Bench Space: leaderboard, submissions, worker, browsing, plots and human annotation."""
