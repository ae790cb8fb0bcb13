"""The non-interactive retrieval baseline of SWE-bench: retrieve files, ask the model once for a
patch, keep the patch when it applies. `swe-aci rag` runs it over a task file."""
