"""`local` / `local/<name-or-path>`: a GGUF model on this machine's CPU, no API key needed.

llama.cpp's OpenAI-compatible HTTP server (through the `xllamacpp` wheel, which embeds it) runs in
a child process on 127.0.0.1 at a free port, and the model talks to it through the same
`OpenAICompatModel` as hosted APIs. The child lives as long as the run: `close()` / the context
manager / atexit stop it, and it exits by itself when its parent dies (its stdin pipe reaches EOF,
or it is re-parented). One server per (model file, runtime settings) is shared by the models of a
process and stays loaded between episodes, so a batch worker loads the weights once; `parallel`
slots let them decode together.

Replies are constrained by the grammar of the agent's reply format (reply_format.py) unless the
config names its own grammar, an empty `grammar: ""` switches it off, the agent expects function
calls, or tools are offered.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from swe_aci.models.base import (
    Message,
    ModelAPIError,
    ModelConfigError,
    ModelReply,
    ToolSpec,
)
from swe_aci.models.config import LocalConfig, LocalRuntimeConfig, OpenAIConfig, Price
from swe_aci.models.fetch import DEFAULT_MODEL, fetch_model, is_path
from swe_aci.models.reply_format import ThoughtActionFormat

PREFIX = "local"
URL_MARKER = "SWE_ACI_SERVER_URL "
KEY_ENV = "SWE_ACI_LLAMA_KEY"
LOG_ENV = "SWE_ACI_LLAMA_LOG"
LOG_ERROR = re.compile(r"^[\d.]+ E (.*)$")


def server_options(runtime: LocalRuntimeConfig, model_path: Path, alias: str) -> dict[str, Any]:
    """What the child process needs to start llama.cpp's server."""
    return {
        "model": str(model_path),
        "alias": alias,
        "ctx_size": runtime.ctx_size * runtime.parallel,  # llama.cpp splits n_ctx among slots
        "parallel": runtime.parallel,
        "threads": runtime.threads,
        "prompt_cache_mib": runtime.prompt_cache_mib,
    }


def model_reference(name: str) -> str:
    """The catalog name or .gguf path selected by a `local[/<ref>]` model name."""
    provider, _, ref = name.partition("/")
    if provider != PREFIX:
        raise ModelConfigError(f"not a local model name: {name!r}")
    return ref or DEFAULT_MODEL


class LocalServer:
    """llama.cpp's HTTP server in a child process; `base_url` is its OpenAI-compatible root."""

    def __init__(self, options: dict[str, Any], startup_timeout: float) -> None:
        self.options = options
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[str] | None = None
        self.url: str | None = None
        self.log_path: Path | None = None
        self.api_key = secrets.token_urlsafe(24)  # only this process may use the server

    @property
    def base_url(self) -> str:
        if self.url is None:
            raise ModelAPIError("the local model server is not running")
        return f"{self.url}/v1"

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Spawn the child and wait until it listens; ModelConfigError (one line) if it cannot."""
        if self.process is not None:
            return
        try:
            import xllamacpp  # noqa: F401  (checked here for a clear message; used by the child)
        except ImportError:
            raise ModelConfigError(
                "the local model needs the llama.cpp runtime: pip install xllamacpp"
            ) from None
        fd, log_name = tempfile.mkstemp(prefix="swe-aci-llama-", suffix=".log")
        self.log_path = Path(log_name)
        with os.fdopen(fd, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, json.dumps(self.options)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, KEY_ENV: self.api_key, LOG_ENV: log_name},
                start_new_session=True,  # Ctrl-C reaches us; we stop the child cleanly
            )
        atexit.register(self.stop)
        try:
            self.url = self._read_url()
        except BaseException:
            self.stop(keep_log=True)
            raise

    def _read_url(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(timeout=0.5):
                    continue
                line = self.process.stdout.readline()
                if not line:
                    raise ModelConfigError(
                        f"the local model server failed to start: {self.log_tail()}"
                    )
                if line.startswith(URL_MARKER):
                    return line[len(URL_MARKER) :].strip()
        raise ModelConfigError(
            f"the local model server did not start within {self.startup_timeout:.0f}s "
            f"(log: {self.log_path})"
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self) -> str:
        """The first llama.cpp error line of the log (else its last line), for one-line errors."""
        try:
            lines = (
                self.log_path.read_text(errors="replace") if self.log_path else ""
            ).splitlines()
        except OSError:
            lines = []
        errors = [m.group(1) for line in lines if (m := LOG_ERROR.search(line))]
        last = errors[:1] or [line.strip() for line in lines if line.strip()][-1:]
        return f"{last[0] if last else 'no log output'} (log: {self.log_path})"

    def stop(self, keep_log: bool = False) -> None:
        """Close the child's stdin (it exits at EOF), then escalate. Safe to call twice."""
        process, self.process, self.url = self.process, None, None
        atexit.unregister(self.stop)
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self.log_path is not None and not keep_log:
            self.log_path.unlink(missing_ok=True)


class _SharedServers:
    """Reference-counted servers, one per option set, for the models of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.servers: dict[str, tuple[LocalServer, int]] = {}

    def acquire(
        self, options: dict[str, Any], startup_timeout: float, say: Callable[[str], None]
    ) -> LocalServer:
        """The running server for `options`, started (and `say` told so) when there is none."""
        key = json.dumps(options, sort_keys=True)
        with self.lock:
            self._stop_idle(keep=key)
            server, count = self.servers.get(key, (None, 0))
            if server is None or not server.alive():
                model = Path(options["model"])
                say(f"loading the model {model} ({file_size(model)}) into llama.cpp...")
                started = time.monotonic()
                server = LocalServer(options, startup_timeout)
                server.start()
                say(f"model loaded in {time.monotonic() - started:.1f} s")
                count = 0
            self.servers[key] = (server, count + 1)
            return server

    def release(self, server: LocalServer) -> None:
        """One user fewer. A server nobody uses stays loaded (idle) for the next episode of this
        process (a batch worker loads the weights once); it stops at exit, or when a model of
        other options is loaded (one set of weights in memory at a time)."""
        with self.lock:
            for key, (known, count) in list(self.servers.items()):
                if known is server:
                    self.servers[key] = (known, max(count - 1, 0))
                    return

    def stop_idle(self) -> None:
        """Stop the servers nobody uses now."""
        with self.lock:
            self._stop_idle(keep=None)

    def _stop_idle(self, keep: str | None) -> None:
        for key, (known, count) in list(self.servers.items()):
            if count == 0 and key != keep:
                del self.servers[key]
                known.stop()


SHARED = _SharedServers()


class LocalModel:
    """The Model protocol over a local llama.cpp server, through the OpenAI-compatible backend."""

    def __init__(self, config: LocalConfig, reply_format: ThoughtActionFormat | None) -> None:
        from swe_aci.models.openai_compat import OpenAICompatModel
        from swe_aci.models.pricing import Pricing

        self.name = config.name
        grammar = local_grammar(config, reply_format)  # before the server: a bad budget is quick
        reference = model_reference(config.name)
        self.model_path = fetch_model(reference, progress=_stderr)
        alias = self.model_path.stem if is_path(reference) else reference
        self.server: LocalServer | None = SHARED.acquire(
            server_options(config.local, self.model_path, alias),
            config.local.startup_timeout,
            say=_stderr,
        )
        try:
            inner = backend_config(config, self.server, alias, grammar)
            free = Pricing({inner.name: Price(input=0.0, output=0.0)})
            self.backend = OpenAICompatModel(inner, pricing=free)
        except BaseException:
            self.close()
            raise

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        if self.server is None:
            raise ModelAPIError(f"{self.name}: the model was closed")
        if not self.server.alive():
            raise ModelAPIError(
                f"{self.name}: the local model server died: {self.server.log_tail()}"
            )
        return self.backend.query(messages, tools, timeout)

    def close(self) -> None:
        if self.server is not None:
            SHARED.release(self.server)
            self.server = None

    def __enter__(self) -> LocalModel:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def local_grammar(config: LocalConfig, reply_format: ThoughtActionFormat | None) -> str | None:
    """The configured grammar, else the reply format's for this output budget; None for none."""
    if config.grammar is not None:
        return config.grammar or None
    if reply_format is None:
        return None
    try:
        return reply_format.grammar(config.max_output_tokens)
    except ValueError as error:
        raise ModelConfigError(f"{config.name}: {error} (raise max_output_tokens)") from None


def backend_config(
    config: LocalConfig, server: LocalServer, alias: str, grammar: str | None
) -> OpenAIConfig:
    """The `openai/<alias>` config that reaches the local server."""
    return OpenAIConfig(
        **config.model_dump(exclude={"name", "local", "grammar", "extra_body"}),
        name=f"openai/{alias}",
        base_url=server.base_url,
        api_key=SecretStr(server.api_key),
        grammar=grammar,
        extra_body={"cache_prompt": True, **config.extra_body},
    )


def file_size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return "size unknown"
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.1f} MB"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _serve(options: dict[str, Any]) -> None:
    """Child process: run the server until stdin reaches EOF or the parent goes away."""
    parent = os.getppid()
    url_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything native code prints goes to the log, not to our URL pipe
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = options["model"]
    params.model_alias = {options["alias"]}
    params.n_ctx = options["ctx_size"]
    params.n_parallel = options["parallel"]
    params.cache_ram_mib = options["prompt_cache_mib"]
    # Every request looks in the prompt cache: a slot chosen because its last prompt is similar
    # enough (llama.cpp's default, 10% of the tokens) is used as it is, and a prompt computed
    # earlier that shares far more (the pipeline's rewrite of a target after a blocks prompt of
    # another) is never restored.
    params.slot_prompt_similarity = 0.0
    if options["threads"]:
        params.cpuparams.n_threads = options["threads"]
        params.cpuparams_batch.n_threads = options["threads"]
    params.hostnames = ["127.0.0.1"]
    params.api_keys = [os.environ.pop(KEY_ENV)]
    log = Path(os.environ.pop(LOG_ENV))
    params.port = 0
    server = xlc.Server(params)
    url_out.write(f"{URL_MARKER}{server.listening_address}\n")
    url_out.close()

    def leave() -> None:
        log.unlink(missing_ok=True)  # the parent may be gone and unable to
        os._exit(0)  # skip the server's slow teardown: the OS frees everything

    def watch_parent() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        leave()

    threading.Thread(target=watch_parent, daemon=True).start()
    sys.stdin.read()
    leave()


if __name__ == "__main__":
    _serve(json.loads(sys.argv[1]))
