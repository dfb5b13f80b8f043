"""Test and benchmark support: a scripted OpenAI-compatible server and seeded synthetic results files.

Never imported by the product (``rqbench``, ``builder``, ``evaluate``, ``space``,
``dataset_card``); the tests and the benchmarks import it, and a test checks
that nothing else does.
"""
