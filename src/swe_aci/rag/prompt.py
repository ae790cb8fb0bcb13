"""The one prompt of the RAG baseline: the issue plus retrieved files packed up to a budget.

Packing follows SWE-bench: the prompt without files is measured first, then files are taken in
rank order, each one that still fits is kept and one that does not is skipped (a later, smaller
file may still fit). Tokens are estimated at 4 characters per token (`estimate_tokens`), the
approximation the backends without a tokenizer use here; a model's own tokenizer can count more
for code, so choose a budget with a margin below the model's context window.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swe_aci.configuration import jinja
from swe_aci.models.base import Message, estimate_tokens
from swe_aci.rag.config import RagStrategy
from swe_aci.retrieval.documents import Document


@dataclass
class Prompt:
    messages: list[Message]
    tokens: int
    included: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def numbered(text: str) -> str:
    """The text with each line prefixed by its number and a space, as SWE-bench shows files."""
    return "\n".join(f"{number} {line}" for number, line in enumerate(text.splitlines(), 1))


def file_block(config: RagStrategy, document: Document) -> str:
    return (
        jinja()
        .from_string(config.templates.file)
        .render(path=document.path, text=document.text, numbered=numbered(document.text))
    )


def render_messages(
    config: RagStrategy, problem_statement: str, blocks: list[str]
) -> list[Message]:
    user = (
        jinja()
        .from_string(config.templates.user)
        .render(problem_statement=problem_statement, files=blocks, retrieval=config.retrieval)
    )
    system = jinja().from_string(config.templates.system).render()
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def messages_tokens(messages: list[Message]) -> int:
    return sum(estimate_tokens(str(message["content"])) for message in messages)


def build_prompt(
    config: RagStrategy, problem_statement: str, documents: list[Document], budget: int
) -> Prompt:
    """Pack `documents` (best first) into the prompt while its estimate stays within `budget`."""
    used = messages_tokens(render_messages(config, problem_statement, []))
    blocks: list[str] = []
    included: list[str] = []
    skipped: list[str] = []
    for document in documents:
        if used + estimate_tokens(document.text) > budget:  # the block is longer than the text
            skipped.append(document.path)
            continue
        block = file_block(config, document)
        cost = estimate_tokens(block + "\n")
        if used + cost > budget:
            skipped.append(document.path)
            continue
        blocks.append(block)
        included.append(document.path)
        used += cost
    messages = render_messages(config, problem_statement, blocks)
    return Prompt(messages, messages_tokens(messages), included, skipped)
