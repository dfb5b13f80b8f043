"""The Hugging Face Space entry point: ``demo`` is built from the environment; ``python app.py`` serves it.

In the project checkout the ``rqbench`` package is installed; in an exported
Space folder (``rqbench space --export DIR``) it sits beside this file.
"""

import sys
from pathlib import Path

_here = Path(__file__).resolve().parent
if (_here / "rqbench").is_dir():
    sys.path.insert(0, str(_here))

from rqbench.space.ui import build_app, config_from_env, launch_options, start_background_worker, with_queue

config = config_from_env()
demo = build_app(config)

if __name__ == "__main__":
    start_background_worker(config)
    with_queue(demo).launch(**launch_options(config, demo))
