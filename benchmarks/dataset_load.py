"""How fast the published sample loads, and how big it is on disk per 1,000 RQs (parquet vs JSONL).

    python benchmarks/dataset_load.py [DATASET_DIR] [--revision vX.Y.Z]

DATASET_DIR defaults to the local sample (``rqbench setup-sample``); ``--smoke``
publishes a small made-up release (tests/fake_build.py) instead. Cold = a
fresh datasets cache folder (parquet read and converted to Arrow); warm = the
same call again (Arrow files reused). The baseline each ratio is printed against
is the cold load in the same process. Sizes compare the release's parquet files
with the same rows written as JSONL (one JSON object a line), scaled to 1,000 RQs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _smoke_release() -> Path:
    """A release of the made-up build the dataset-card tests use, published to a temporary local git repo."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from fake_build import write_build

    from rqbench.dataset_card.card_base import CardSettings
    from rqbench.dataset_card.publish import publish
    from rqbench.dataset_card.repo import LocalGitTarget

    root = Path(tempfile.mkdtemp(prefix="rqb-load-bench-"))
    publish(
        write_build(root / "build"),
        "0.1.0",
        LocalGitTarget(root / "dataset"),
        CardSettings(target="local", repo="smoke/rq-bench"),
    )
    return root / "dataset"


def main(argv: list[str] | None = None) -> int:
    from datasets import load_dataset
    from datasets.utils.logging import disable_progress_bar

    from rqbench import paths
    from rqbench.dataset_card.features import CONFIG_RECORDS
    from rqbench.dataset_card.repo import materialize
    from rqbench.dataset_card.versions import RELEASE_FILE

    disable_progress_bar()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", nargs="?", default=str(paths.sample_dataset_dir()))
    p.add_argument("--revision", default=None)
    p.add_argument("--repeats", type=int, default=3, help="warm loads to average")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.dataset, args.revision, args.repeats = str(_smoke_release()), None, 1
    if not Path(args.dataset).exists():
        print(f"{args.dataset} does not exist; run 'rqbench setup-sample' first", file=sys.stderr)
        return 2
    folder, commit = materialize(args.dataset, args.revision)
    release = json.loads((folder / RELEASE_FILE).read_text(encoding="utf-8"))
    n_rqs = release["splits"]["rqs"]["test"]
    print(f"dataset {args.dataset} @ {release['tag']} ({commit[:12] if commit else 'work tree'}), {n_rqs} RQs")
    print(
        f"{'config':<14}{'rows':>7}{'cold s':>9}{'warm s':>9}{'warm/cold':>11}"
        f"{'parquet KB/1k RQs':>19}{'jsonl KB/1k RQs':>17}{'jsonl/parquet':>15}"
    )
    with tempfile.TemporaryDirectory() as cache:
        for config in CONFIG_RECORDS:
            t0 = time.perf_counter()
            ds = load_dataset(str(folder), config, split="test", cache_dir=cache)
            cold = time.perf_counter() - t0
            warm_times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                load_dataset(str(folder), config, split="test", cache_dir=cache)
                warm_times.append(time.perf_counter() - t0)
            warm = sum(warm_times) / len(warm_times)
            parquet = sum(f.stat().st_size for f in (folder / "data" / config).glob("test-*.parquet"))
            jsonl = sum(len(json.dumps(row, ensure_ascii=False).encode("utf-8")) + 1 for row in ds)
            scale = 1000 / max(n_rqs, 1) / 1024
            print(
                f"{config:<14}{len(ds):>7}{cold:>9.3f}{warm:>9.3f}{warm / cold:>11.2f}"
                f"{parquet * scale:>19.1f}{jsonl * scale:>17.1f}{jsonl / max(parquet, 1):>15.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
