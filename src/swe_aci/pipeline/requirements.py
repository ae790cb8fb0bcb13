"""The optional packages a config needs, checked before any model loads or instance starts: a
missing one is one line naming the extra to install, once, not an error per instance."""

from __future__ import annotations

from importlib.util import find_spec

from pydantic import BaseModel

from swe_aci.models.config import LocalConfig, ModelConfig

# (module, what needs it, the extra that brings it)
LOCAL_RUNTIME = ("xllamacpp", "the local model", "local")
BM25 = ("bm25s", "the pipeline's BM25 localization", "local")


def missing_packages(model: ModelConfig, strategy: BaseModel) -> str | None:
    """One line naming what is missing for this model and strategy, else None."""
    needed = []
    if isinstance(model, LocalConfig):
        needed.append(LOCAL_RUNTIME)
    if getattr(strategy, "type", "") == "pipeline":
        needed.append(BM25)
    missing = [(module, who, extra) for module, who, extra in needed if find_spec(module) is None]
    if not missing:
        return None
    names = ", ".join(f"{module} ({who})" for module, who, _ in missing)
    extras = ",".join(sorted({extra for *_, extra in missing}))
    return f"missing packages: {names}: pip install 'swe-aci[{extras}]'"
