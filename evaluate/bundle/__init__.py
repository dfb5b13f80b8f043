"""A leaderboard row's reproduction bundle: making one, checking its seal, re-scoring it."""
