"""The pipeline strategy (Agentless-style): localize, repair, reproduce, validate and choose.

An alternative to the agent loop for the same episode (selected by `strategy.type: pipeline`),
run in the same sandbox, with the ACI's lint guardrail on every edit and the same trajectory
and prediction files. See docs/pipeline.md.
"""
