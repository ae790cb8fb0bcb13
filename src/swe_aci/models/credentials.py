"""API keys and base URLs: from the config, the environment, or a `.env` file in the cwd.

The `.env` file is parsed here (KEY=VALUE lines, optional `export `, `#` comments, quotes
stripped) rather than with python-dotenv, and never copied into `os.environ`.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from swe_aci.models.base import ModelConfigError
from swe_aci.models.config import HostedConfig

NO_KEY = "no-key"  # sent to keyless servers (vLLM, Ollama, llama.cpp): the SDKs insist on a key


def read_dotenv(path: Path) -> dict[str, str]:
    """The variables of a `.env` file; empty if it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return {}
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return values


def lookup(variable: str) -> str | None:
    """`variable` from the environment, else from `./.env`; empty values count as unset."""
    value = os.environ.get(variable) or read_dotenv(Path.cwd() / ".env").get(variable)
    return value or None


def resolve_base_url(config: HostedConfig, variable: str) -> str | None:
    """config.base_url, else `variable` (e.g. OPENAI_BASE_URL); checked to be an http(s) URL."""
    url = config.base_url or lookup(variable)
    if url is None:
        return None
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ModelConfigError(f"bad model base URL {url!r}: expected http(s)://host[:port][/path]")
    return url.rstrip("/")


def resolve_api_key(config: HostedConfig, variable: str, base_url: str | None) -> str:
    """The key for `config`; keyless is allowed only for a custom base URL (local servers)."""
    if config.api_key is not None and config.api_key.get_secret_value():
        return config.api_key.get_secret_value()
    name = config.api_key_env or variable
    key = lookup(name)
    if key:
        return key
    if config.api_key_env:
        raise ModelConfigError(f"model.api_key_env names {name}, which is not set (env or .env)")
    if base_url is not None:
        return NO_KEY
    raise ModelConfigError(
        f"no API key for {config.name}: set {name} (environment or .env) or model.api_key"
    )
