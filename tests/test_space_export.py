"""The exported Space, run as the Hub runs it: its requirements.txt installed into a fresh virtual environment
(nothing of this checkout on the path), then ``python app.py``, which must answer HTTP.

Slow (a fresh environment of gradio, datasets, litellm... from pip's warm cache: about two minutes here),
and run by ``.ci/run`` like every other test. ``RQB_SKIP_EXPORT_INSTALL=1`` skips it on a machine without
the package registry.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_requirements_are_the_packages_own_dependency_list(tmp_path):
    import tomllib

    from rqbench.space.cli import ROOT, export_space

    out = export_space(tmp_path / "space")
    listed = [line for line in (out / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert listed == declared and any(d.startswith("threadpoolctl") for d in listed)


@pytest.mark.skipif(bool(os.environ.get("RQB_SKIP_EXPORT_INSTALL")), reason="RQB_SKIP_EXPORT_INSTALL is set")
def test_the_exported_space_installs_from_its_requirements_and_answers_http(tmp_path):
    from rqbench.space.cli import export_space

    out = export_space(tmp_path / "space")
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
        py = venv / "bin" / "python"
        t0 = time.monotonic()
        pip = subprocess.run(
            [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", str(out / "requirements.txt")],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        install_s = time.monotonic() - t0
        assert pip.returncode == 0, pip.stderr[-3000:]
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "RQB_"))}
        env.update(
            GRADIO_SERVER_NAME="127.0.0.1",
            GRADIO_SERVER_PORT=str(port),
            GRADIO_ANALYTICS_ENABLED="False",
            HF_HUB_OFFLINE="1",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            RQB_HOME=str(tmp_path / "home"),
            PATH=f"{venv / 'bin'}:{env.get('PATH', '')}",
        )
        log = (tmp_path / "app.log").open("w")
        app = subprocess.Popen([str(py), "app.py"], cwd=out, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline, body, t0 = time.monotonic() + 180, "", time.monotonic()
            while time.monotonic() < deadline and app.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                        body = resp.read().decode("utf-8", "replace")
                        break
                except OSError:
                    time.sleep(0.5)
            start_s = time.monotonic() - t0
            assert "RQ-Bench" in body, (tmp_path / "app.log").read_text()[-3000:]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=10) as resp:
                assert resp.status == 200 and b"Leaderboard" in resp.read()
        finally:
            app.terminate()
            app.wait(30)
            log.close()
        imported = subprocess.run(
            [str(py), "-c", "import rqbench, sys; print(rqbench.__file__)"],
            cwd=out,
            env=env,
            capture_output=True,
            text=True,
        )
        assert Path(imported.stdout.strip()).is_relative_to(out), imported  # the vendored package, not the checkout
        print(
            f"\nexported Space: requirements installed into a fresh venv in {install_s:.0f} s; app.py answered "
            f"HTTP after {start_s:.0f} s"
        )
    finally:
        shutil.rmtree(venv, ignore_errors=True)
