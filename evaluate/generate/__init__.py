"""Generation: a model's five RQs per instance, the background it reads, and the submission format."""
