"""One RAG prediction per task: retrieve, prompt once, extract and check the diff, record.

Predictions go to `<out>/preds.json` in SWE-bench's format (rewritten atomically after each
instance, so an interrupted run keeps what it did); each instance's prompt size, retrieved and
included files, reply, cost and outcome go to `<out>/records/<instance_id>.json`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.config import EnvConfig
from swe_aci.models.base import Model, ModelAuthError, ModelConfigError, ModelError
from swe_aci.models.factory import make_model
from swe_aci.rag.bm25 import rank
from swe_aci.rag.config import RagConfig
from swe_aci.rag.documents import BaseTree
from swe_aci.rag.patch import apply_diff, extract_diff
from swe_aci.rag.prompt import build_prompt
from swe_aci.recipes import RecipeError
from swe_aci.records import PREDS_FILE, Prediction, predictions_json, write_json_atomic

if TYPE_CHECKING:
    from swe_aci.tasks import Task

OpenEnvironment = Callable[["Task", EnvConfig], Environment]
RETRIEVED_KEPT = 50  # ranked paths kept in a record (the whole ranking can be thousands)


@dataclass
class RagRecord:
    """What happened to one instance. `status`: applied, no_diff, patch_failed, no_gold_patch,
    model_error or environment_error; `reason` says more when there is no prediction."""

    instance_id: str
    retrieval: str
    context_tokens: int
    status: str = ""
    reason: str | None = None
    prompt_tokens: int = 0
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    included: list[str] = field(default_factory=list)
    skipped: int = 0
    cost: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    apply_method: str | None = None
    model_patch: str = ""
    extracted_diff: str | None = None
    reply: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


def open_task_environment(task: Task, env_config: EnvConfig) -> Environment:
    """A fresh sandbox holding the task's repository at its base."""
    from swe_aci.env.factory import make_environment
    from swe_aci.recipes import task_environment

    prepared = task_environment(task, env_config)
    return make_environment(prepared.config, prepared.source, prepared.commit)


def predict(task: Task, config: RagConfig, model: Model, open_env: OpenEnvironment) -> RagRecord:
    """The RAG prediction for one task; failures of this instance end up in the record.

    A model config or authentication error is raised: every other instance would fail the same.
    """
    record = RagRecord(task.instance_id, config.retrieval, config.context_tokens)
    if config.retrieval == "oracle" and not (task.patch or "").strip():
        return finish(record, "no_gold_patch", "oracle retrieval needs the row's gold patch")
    try:
        env = open_env(task, config.env)
    except (SandboxError, RecipeError) as error:
        return finish(record, "environment_error", str(error))
    try:
        return predict_in(env, task, config, model, record)
    except (SandboxError, OSError) as error:
        return finish(record, "environment_error", str(error) or type(error).__name__)
    finally:
        env.close()


def predict_in(
    env: Environment, task: Task, config: RagConfig, model: Model, record: RagRecord
) -> RagRecord:
    settings = config.documents
    tree = BaseTree(env, settings.max_file_bytes)
    if config.retrieval == "oracle":
        documents = tree.oracle(task.patch or "")
        record.retrieved = [{"path": document.path} for document in documents]
    else:
        ranking = rank(
            task.problem_statement, tree.sources(settings.extensions, settings.include_tests)
        )
        documents = [ranked.document for ranked in ranking]
        record.retrieved = [
            {"path": ranked.document.path, "score": round(ranked.score, 4)}
            for ranked in ranking[:RETRIEVED_KEPT]
        ]
    if settings.readme:
        readmes = tree.readmes()
        shown = {document.path for document in readmes}
        documents = readmes + [document for document in documents if document.path not in shown]
    prompt = build_prompt(config, task.problem_statement, documents, config.context_tokens)
    record.messages = prompt.messages
    record.prompt_tokens = prompt.tokens
    record.included = prompt.included
    record.skipped = len(prompt.skipped)
    try:
        reply = model.query(prompt.messages)
    except (ModelConfigError, ModelAuthError):
        raise
    except ModelError as error:
        return finish(record, "model_error", str(error) or type(error).__name__)
    record.reply = reply.content
    record.cost = reply.cost
    record.input_tokens = reply.input_tokens
    record.output_tokens = reply.output_tokens
    diff = extract_diff(reply.content)
    record.extracted_diff = diff
    if diff is None:
        return finish(record, "no_diff", "the reply holds no unified diff")
    applied = apply_diff(env, diff)
    if applied.reason is not None:
        return finish(record, "patch_failed", applied.reason)
    record.model_patch = applied.model_patch
    record.apply_method = applied.method
    return finish(record, "applied", None)


def finish(record: RagRecord, status: str, reason: str | None) -> RagRecord:
    record.status = status
    record.reason = reason
    return record


def make_rag_model(config: RagConfig) -> Model:
    """The model asked for the patch: it answers in free text (no agent reply format, so a local
    model runs without the agent's grammar). Raises ModelConfigError (one line)."""
    settings = config.model_settings()
    if settings.name in ("replay", "human"):
        raise ModelConfigError(
            f"model {settings.name!r} cannot answer the RAG prompt: "
            "use scripted, openai/<model>, anthropic/<model> or local"
        )
    return make_model(settings, None)


def prediction_name(config: RagConfig) -> str:
    """`model_name_or_path` of the predictions, e.g. `openai__gpt-4o__rag-bm25-27000`."""
    model_name = config.model_settings().name.replace("/", "__")
    if config.retrieval == "oracle":
        return f"{model_name}__rag-oracle"
    return f"{model_name}__rag-bm25-{config.context_tokens}"


def run_rag(
    tasks: Iterable[Task],
    config: RagConfig,
    model: Model,
    output_dir: Path,
    open_env: OpenEnvironment = open_task_environment,
    on_record: Callable[[RagRecord], None] | None = None,
) -> dict[str, Prediction]:
    """Predict every task, writing preds.json and one record per instance as it goes."""
    name = prediction_name(config)
    predictions: dict[str, Prediction] = {}
    records = output_dir / "records"
    records.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        record = predict(task, config, model, open_env)
        predictions[task.instance_id] = Prediction(
            instance_id=task.instance_id, model_name_or_path=name, model_patch=record.model_patch
        )
        write_json_atomic(records / f"{task.instance_id}.json", asdict(record))
        write_json_atomic(output_dir / PREDS_FILE, predictions_json(predictions))
        if on_record is not None:
            on_record(record)
    return predictions
