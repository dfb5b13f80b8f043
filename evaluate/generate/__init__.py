"""Generation: a model's five RQs per instance, the submission format and its validator, and what generating cost."""
