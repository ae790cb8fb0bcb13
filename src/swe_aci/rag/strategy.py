"""`strategy.type: rag`: retrieve, prompt once, extract and check the diff, on the episode frame.

The trajectory has one step: the prompt (system and user message) as its query and in the
history with the reply; what was retrieved and included, the prompt's size, the outcome and how
the diff applied under the step's `pipeline`.
"""

from __future__ import annotations

import time
from typing import Any

from swe_aci.env.base import Environment
from swe_aci.models.base import Model, ModelAuthError, ModelConfigError, ModelError
from swe_aci.models.config import ModelConfig
from swe_aci.rag.config import RagStrategy
from swe_aci.rag.patch import apply_diff, extract_diff
from swe_aci.rag.prompt import build_prompt
from swe_aci.retrieval.bm25 import rank
from swe_aci.retrieval.documents import BaseTree, Document
from swe_aci.strategy import EpisodeRun
from swe_aci.trajectory.exits import SUBMITTED, exit_for
from swe_aci.trajectory.recorder import EpisodeRecorder
from swe_aci.trajectory.result import EpisodeResult

RETRIEVED_KEPT = 50  # ranked paths kept in the step (the whole ranking can be thousands)
# The exit status of each outcome short of a prediction.
EXIT_OF = {
    "no_diff": "exit_format",
    "patch_failed": "exit_format",
    "no_gold_patch": "exit_error",
}


class RetrievalBaseline:
    def run(self, episode: EpisodeRun) -> EpisodeResult:
        from swe_aci.retrieval.bm25 import check_available

        config: RagStrategy = episode.config.strategy
        if config.retrieval == "bm25":
            check_available()  # RetrievalUnavailable before any sandbox opens
        with episode.sandbox() as (environment, cleanup):
            model = make_rag_model(episode.config.model)
            if close_model := getattr(model, "close", None):
                cleanup.callback(close_model)
            record = episode.recorder(episode.config.model.name)
            record.start(episode.problem_statement, {"strategy": config.model_dump(mode="json")})
            return record.run(lambda: predict(environment, episode, config, model, record))


def predict(
    environment: Environment,
    episode: EpisodeRun,
    config: RagStrategy,
    model: Model,
    record: EpisodeRecorder,
) -> tuple[str, str]:
    """The one step; (exit status, submission). A model config or authentication error is
    raised: every other instance would fail the same."""
    details: dict[str, Any] = {
        "retrieval": config.retrieval,
        "context_tokens": config.context_tokens,
    }
    action = f"rag {config.retrieval}"
    if config.retrieval == "oracle" and not (episode.gold_patch or "").strip():
        return end(
            record, action, details, "no_gold_patch", "oracle retrieval needs the row's gold patch"
        )
    documents = retrieve(environment, episode, config, details)
    prompt = build_prompt(config, episode.problem_statement, documents, config.context_tokens)
    details.update(
        prompt_tokens=prompt.tokens, included=prompt.included, skipped=len(prompt.skipped)
    )
    record.querying(prompt.messages)
    started = time.monotonic()
    try:
        reply = model.query(prompt.messages)
    except (ModelConfigError, ModelAuthError):
        raise
    except ModelError as error:
        record.waited(time.monotonic() - started)
        reason = record.info["error"] = str(error) or type(error).__name__
        status = exit_for(error).status  # exit_api, exit_context
        return end(record, action, details, "model_error", reason, exit_status=status)
    record.replied(reply, time.monotonic() - started)
    messages = [*prompt.messages, {"role": "assistant", "content": reply.content}]
    diff = extract_diff(reply.content)
    details["extracted_diff"] = diff
    if diff is None:
        outcome = ("no_diff", "the reply holds no unified diff", "")
    else:
        applied = apply_diff(environment, diff)
        details["apply_method"] = applied.method
        if applied.reason is not None:
            outcome = ("patch_failed", applied.reason, "")
        else:
            outcome = ("applied", None, applied.model_patch)
    status, reason, patch = outcome
    return end(record, action, details, status, reason, reply.content, messages, patch)


def retrieve(
    environment: Environment, episode: EpisodeRun, config: RagStrategy, details: dict[str, Any]
) -> list[Document]:
    """The documents in the order the prompt shows them (the README files first)."""
    settings = config.documents
    tree = BaseTree(environment, settings.max_file_bytes)
    if config.retrieval == "oracle":
        documents = tree.oracle(episode.gold_patch or "")
        details["retrieved"] = [{"path": document.path} for document in documents]
    else:
        ranking = rank(
            episode.problem_statement, tree.sources(settings.extensions, settings.include_tests)
        )
        documents = [ranked.document for ranked in ranking]
        details["retrieved"] = [
            {"path": ranked.document.path, "score": round(ranked.score, 4)}
            for ranked in ranking[:RETRIEVED_KEPT]
        ]
    if settings.readme:
        readmes = tree.readmes()
        shown = {document.path for document in readmes}
        documents = readmes + [document for document in documents if document.path not in shown]
    return documents


def end(
    record: EpisodeRecorder,
    action: str,
    details: dict[str, Any],
    status: str,
    reason: str | None,
    response: str = "",
    messages: list[Any] | None = None,
    submission: str = "",
    exit_status: str | None = None,
) -> tuple[str, str]:
    """Record the step with the outcome (`status`, an RAG outcome: applied, no_diff,
    patch_failed, no_gold_patch, model_error) and end the episode."""
    exit_status = exit_status or (SUBMITTED if status == "applied" else EXIT_OF[status])
    details.update(status=status, reason=reason)
    record.info.update(exit_status=exit_status, submission=submission, rag_status=status)
    if exit_status == "exit_error":
        record.info["error"] = reason
    included = len(details.get("included", []))
    thought = f"{details['retrieval']} retrieval: {included} files in the prompt"
    observation = status if reason is None else f"{status}: {reason}"
    record.step(
        action,
        thought,
        observation,
        details,
        response=response,
        state={"stage": "rag"},
        messages=messages or [],
    )
    return exit_status, submission


def make_rag_model(settings: ModelConfig) -> Model:
    """The model asked for the patch: it answers in free text (no agent reply format, so a local
    model runs without the agent's grammar). Raises ModelConfigError (one line)."""
    from swe_aci.models.factory import make_model

    if settings.name in ("replay", "human"):
        raise ModelConfigError(
            f"model {settings.name!r} cannot answer the RAG prompt: "
            "use scripted, openai/<model>, anthropic/<model> or local"
        )
    return make_model(settings, None)
