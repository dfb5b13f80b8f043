"""The benchmark scripts that start a runtime of their own (the embedded model, a Ray cluster) run at their smoke
size: the longest smoke runs, in a file of their own so that the suite's two workers share them with the rest."""

from __future__ import annotations

import pytest
from test_benchmarks import _params, run_smoke


@pytest.mark.parametrize("script", list(_params(runtime=True)))
def test_a_benchmark_with_its_own_runtime_runs_at_its_smoke_size(script, tmp_path, request):
    run_smoke(script, tmp_path, request)
