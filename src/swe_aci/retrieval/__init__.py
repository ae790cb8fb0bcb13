"""Retrieval shared by the strategies below them: the repository's files at the base commit read
from inside the sandbox (`documents.py`) and their BM25 ranking against an issue (`bm25.py`).
Used by the RAG strategy and by the pipeline's localization."""
