"""Batch runs: every task of a task set, in parallel on threads or Ray, resumable."""
