"""BM25 ranking of documents against an issue, with the bm25s library (optional extra `rag`).

As in SWE-bench's retrieval, a document is its path followed by its contents, so names in the
issue that match a path count too.
"""

from __future__ import annotations

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


def rank(query: str, documents: list[Document]) -> list[Ranked]:
    """All documents, best match first; equal scores keep path order."""
    if not documents:
        return []
    bm25s = bm25s_module()
    corpus = [f"{document.path}\n{document.text}" for document in documents]
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
