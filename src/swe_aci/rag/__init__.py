"""The non-interactive retrieval baseline of SWE-bench as `strategy.type: rag`: retrieve files,
ask the model once for a patch, keep the patch when it applies (`strategy.py`); the built-in
config `baselines/rag` runs it through `swe-aci batch`."""
