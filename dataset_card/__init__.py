"""Publishing RQ-Bench as a versioned Hugging Face dataset, with a card computed from the data."""
