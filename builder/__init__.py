"""The dataset builder: sourcing, filtering, LaTeX parsing and the LLM stages that turn papers into RQ records."""
