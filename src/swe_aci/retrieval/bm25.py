"""BM25 ranking of documents against an issue, with the bm25s library (optional extra `rag`).

As in SWE-bench's retrieval, a document is its path followed by its contents, so names in the
issue that match a path count too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from swe_aci.retrieval.documents import Document


class RetrievalUnavailable(Exception):
    """The BM25 library is not installed; the message says how to get it."""


@dataclass(frozen=True)
class Ranked:
    document: Document
    score: float


UNAVAILABLE = "BM25 retrieval needs the bm25s package: pip install 'swe-aci[rag]'"


def bm25s_module() -> Any:
    try:
        import bm25s
    except ImportError:
        raise RetrievalUnavailable(UNAVAILABLE) from None
    return bm25s


def check_available() -> None:
    """RetrievalUnavailable unless bm25s can be imported (without importing it)."""
    from importlib.util import find_spec

    if find_spec("bm25s") is None:
        raise RetrievalUnavailable(UNAVAILABLE)


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
WORD_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def with_word_parts(text: str) -> str:
    """`text` with each compound identifier followed by its words: `_match_re` also counts as
    `match` and `re`, `SemVerWithVPrefix` as `sem`, `ver`, `with`, `v`, `prefix`."""

    def expand(match: re.Match[str]) -> str:
        word = match.group(0)
        parts = WORD_PART.findall(word)
        return f"{word} {' '.join(parts)}" if len(parts) > 1 or word[0] == "_" else word

    return IDENTIFIER.sub(expand, text)


def rank(query: str, documents: list[Document], word_parts: bool = False) -> list[Ranked]:
    """All documents, best match first; equal scores keep path order. With `word_parts`, the
    words of compound identifiers count too (the pipeline's localization over code; SWE-bench's
    BM25 retrieval, which the RAG baseline follows, does not split them)."""
    if not documents:
        return []
    bm25s = bm25s_module()
    corpus = [f"{document.path}\n{document.text}" for document in documents]
    if word_parts:
        corpus, query = [with_word_parts(text) for text in corpus], with_word_parts(query)
    corpus_tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
    query_tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
    known = set(corpus_tokens.vocab)
    if not any(token in known for token in query_tokens[0]):
        return [Ranked(document, 0.0) for document in documents]
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    scores = retriever.get_scores([token for token in query_tokens[0] if token in known])
    order = sorted(range(len(documents)), key=lambda index: (-scores[index], index))
    return [Ranked(documents[index], float(scores[index])) for index in order]
