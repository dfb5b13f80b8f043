"""``rqbench space``: serve the leaderboard Space locally, or export it as a Space folder."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# package folder in the checkout -> its place under rqbench/ in an exported Space
PACKAGES = {
    "rqbench": "rqbench",
    "evaluate": "rqbench/evaluate",
    "space": "rqbench/space",
    "builder": "rqbench/builder",
    "dataset_card": "rqbench/dataset_card",
}


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--store", type=Path, default=None, help="store folder (default: RQB_HOME/space)")
    p.add_argument(
        "--results", type=Path, default=None, help="read results files from this folder instead of the store's results/"
    )
    p.add_argument("--dataset", default=None, help="benchmark to check submissions against (default: the sample)")
    p.add_argument("--worker", action="store_true", help="also judge pending requests in the background")
    p.add_argument(
        "--export",
        type=Path,
        default=None,
        metavar="DIR",
        help="write a ready-to-push Space folder (app.py, README.md, requirements.txt, the package)",
    )


def package_dependencies() -> list[str]:
    """The package's own runtime dependencies, as ``pyproject.toml`` lists them (``[project].dependencies``);
    from the installed distribution's metadata where the checkout's file is not beside the package."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        return list(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"])
    from importlib.metadata import requires

    return [r for r in requires("rq-bench") or [] if "extra ==" not in r]


def requirements_txt() -> str:
    """The exported Space's ``requirements.txt``: exactly the package's dependency list, so it cannot drift."""
    head = (
        "# The Space's runtime dependencies: [project].dependencies of RQ-Bench's pyproject.toml, written by\n"
        "# `rqbench space --export` (the rqbench package itself is vendored beside app.py).\n"
    )
    return head + "".join(f"{dep}\n" for dep in package_dependencies())


def export_space(dest: Path) -> Path:
    """A folder laid out as a Hugging Face Space repository, with the package vendored beside app.py."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not empty; choose a new folder")
    dest.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for name in ("app.py", "README.md"):
        shutil.copy2(here / name, dest / name)
    (dest / "requirements.txt").write_text(requirements_txt(), encoding="utf-8")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "testing")  # rqbench/testing: test support only
    for src, target in PACKAGES.items():
        if (ROOT / src).is_dir():
            shutil.copytree(ROOT / src, dest / target, ignore=ignore, dirs_exist_ok=True)
    return dest


def run(args: argparse.Namespace) -> int:
    if args.export is not None:
        out = export_space(args.export)
        print(f"Space folder written to {out}; push it to a Space repository (sdk: gradio)")
        return 0
    import os

    from rqbench.space.ui import build_app, config_from_env, launch_options, start_background_worker, with_queue

    if args.worker:
        os.environ["RQB_SPACE_WORKER"] = "1"
    config = config_from_env(args.store, args.results, args.dataset)
    demo = build_app(config)
    start_background_worker(config, dataset=args.dataset)
    print(f"RQ-Bench Space on http://{args.host}:{args.port} (store: {config.stores.backend})")
    with_queue(demo).launch(server_name=args.host, server_port=args.port, **launch_options(config, demo))
    return 0
