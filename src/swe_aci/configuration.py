"""The machinery of config files, shared by every config of swe-aci (episode, RAG): YAML layering
(`extends:`), `key.path=value` overrides, built-in configs by name, one-line validation errors,
and the one Jinja environment and check of the templates in configs (agent, RAG, pipeline).
Imports nothing of swe_aci.

The built-in configs (`default`, `shell_only`, `ablations/...`) live in the repository's
`configs/` directory; an installed wheel carries them as `swe_aci/configs/` (with the
demonstration under `swe_aci/examples/demo/`, so the relative path in the config works in both
layouts).
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    import jinja2

Schema = TypeVar("Schema", bound=BaseModel)

DEFAULT_CONFIG_NAME = "default"
BUILTIN_GROUPS = (
    "",
    "ablations",
    "baselines",
    "tools",
)  # subdirectories of the built-in config directory
BUILTIN_NAME = re.compile(r"[\w-]+(/[\w-]+)?")


class ConfigError(Exception):
    """The config cannot be used; the message is one line naming the file and the key. A value
    that failed validation gives its dotted `key` and the `problem` alone, so the caller that
    set it (a command-line flag) can name itself instead of the key."""

    def __init__(self, message: str, *, key: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.key, self.problem = key, problem


def builtin_config_dir() -> Path:
    """The packaged `swe_aci/configs/` when installed from a wheel, else the checkout's `configs/`."""
    packaged = Path(str(importlib.resources.files("swe_aci") / "configs"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "configs"


def resolve_config_path(path: str | Path | None) -> Path:
    """A path as given, or a built-in config by name (`shell_only`, `ablations/window_30`);
    None is the default."""
    if path is None:
        return builtin_config_dir() / f"{DEFAULT_CONFIG_NAME}.yaml"
    candidate = Path(path).expanduser()
    if candidate.exists() or candidate.suffix or not BUILTIN_NAME.fullmatch(str(path)):
        return candidate
    builtin = builtin_config_dir() / f"{path}.yaml"
    return builtin if builtin.is_file() else candidate


def builtin_configs() -> dict[str, str]:
    """Each built-in config's name and the one-line `description` its own file gives."""
    root = builtin_config_dir()
    found = {}
    for group in BUILTIN_GROUPS:
        for path in sorted((root / group).glob("*.yaml")):
            name = f"{group}/{path.stem}" if group else path.stem
            description = read_yaml(path).get("description")
            found[name] = description if isinstance(description, str) else ""
    return found


def read_layered(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """A config file merged over the config its `extends:` key names (a path relative to the
    file, or a built-in name such as `default`), recursively."""
    if path.resolve() in seen:
        raise ConfigError(f"config {path}: `extends` loops back to {path.name}")
    data = read_yaml(path)
    resolve_demonstrations(data, path.parent)
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError(f"config {path}: extends must name one config")
    candidate = path.parent / base
    base_path = candidate if candidate.is_file() else resolve_config_path(base)
    return deep_merge(read_layered(base_path, (*seen, path.resolve())), data)


def deep_merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """`layer` over `base`: mappings merge key by key, anything else (lists too) replaces."""
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {path}: {error}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" line {where.line + 1}" if where is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"config {path}: YAML error{line}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: the top level must be a mapping of sections")
    return data


def resolve_demonstrations(data: dict[str, Any], base: Path) -> None:
    """Make the file's relative demonstration paths absolute against `base`, in place."""
    agent = data.get("agent")
    demonstrations = agent.get("demonstrations") if isinstance(agent, dict) else None
    if isinstance(demonstrations, list):
        agent["demonstrations"] = [
            str((base / item).resolve()) if isinstance(item, str) else item
            for item in demonstrations
        ]


def load_validated(
    schema: type[Schema],
    path: Path,
    overrides: Sequence[str] = (),
    values: Mapping[str, Any] | None = None,
) -> Schema:
    """A YAML config file (its `extends:` chain merged), then the `key.path=value` overrides (text,
    parsed as YAML), then `values` (dotted key -> a typed value, set as it is: never YAML text
    again), validated by `schema`. Raises ConfigError (one line naming the file and the key)."""
    data = read_layered(path, seen=())
    for override in overrides:
        apply_override(data, override)
    for key, value in (values or {}).items():
        set_value(data, key, value, f"bad value for {key}")
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise ConfigError(
            f"config {path}: {describe_validation_error(error)}",
            key=".".join(str(part) for part in first["loc"]),
            problem=describe_problem(first),
        ) from None


def apply_override(data: dict[str, Any], override: str) -> None:
    """Set `a.b.c=value` in the nested dict `data` (the value parsed as YAML), creating missing
    sections."""
    key, separator, raw = override.partition("=")
    key = key.strip()
    if not separator or not all(key.split(".")):
        raise ConfigError(f"bad override {override!r}: expected key.path=value")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        raise ConfigError(f"bad override {override!r}: the value is not valid YAML") from None
    set_value(data, key, value, f"bad override {override!r}")


def set_value(data: dict[str, Any], key: str, value: Any, context: str) -> None:
    """Set the dotted `key` to `value` in the nested dict `data`, creating missing sections;
    `context` starts the message of a ConfigError."""
    parts = key.split(".")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            section = ".".join(parts[: depth + 1])
            raise ConfigError(f"{context}: {section} is not a section")
        node = child
    node[parts[-1]] = value


def describe_validation_error(error: ValidationError) -> str:
    """The first problem as `dotted.key: what is wrong`."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        return f"unknown key {key}"
    if first["type"] == "missing":
        return f"missing key {key}"
    message = describe_problem(first)
    if first["type"].startswith("value_error") or first["type"] == "assertion_error":
        return message if message.startswith("agent.") else f"{key}: {message}"
    return f"{key}: {message}"


def describe_problem(first: Any) -> str:
    """What is wrong with one validated value, without its key (pydantic's ErrorDetails)."""
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"].startswith("value_error") or first["type"] == "assertion_error":
        return message
    shown = repr(first.get("input"))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{message} (got {shown})"


def template_problem(key: str, source: str, allowed: set[str] | frozenset[str]) -> str | None:
    """Why the Jinja template at config `key` will not render with the variables `allowed`
    (a syntax error, or a variable nothing provides), or None when it will."""
    import jinja2
    import jinja2.meta

    try:
        used = jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(source))
    except jinja2.TemplateSyntaxError as error:
        return f"{key}: Jinja syntax error line {error.lineno}: {error}"
    unknown = sorted(used - allowed)
    if unknown:
        return (
            f"{key}: unknown variable(s) {', '.join(unknown)} "
            f"(available: {', '.join(sorted(allowed)) or 'none'})"
        )
    return None


def check_templates(
    section: BaseModel, prefix: str, variables: Mapping[str, frozenset[str]]
) -> None:
    """For a config's validator: ValueError `<prefix>.<name>: <problem>` for the first template
    of `section` named in `variables` (a None one left out) that will not render with that
    name's variables."""
    for name, allowed in variables.items():
        source = getattr(section, name)
        if source is not None:
            problem = template_problem(f"{prefix}.{name}", source, allowed)
            if problem is not None:
                raise ValueError(problem)


@functools.cache
def jinja() -> jinja2.Environment:
    """The one Jinja environment every config template renders in (the agent's, the RAG
    baseline's, the pipeline's): an unknown variable is an error, the trailing newline is kept, a
    line holding only a {% block tag %} leaves no blank line, nothing is escaped."""
    import jinja2

    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
