"""RQ-Bench: research-question generation and the trustworthiness of LLM novelty judges."""

__version__ = "0.1.0"
