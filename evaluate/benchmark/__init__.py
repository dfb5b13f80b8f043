"""What a model and its judges read: a benchmark revision wherever it lives, its trial runs, and the background block."""
