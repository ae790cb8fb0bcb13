"""The agent-computer interface: file viewer, editor with lint guardrail, search, submit
(`interface.py: ACI`, its config in `config.py`). Every command and its observations are
described in docs/aci.md; adding one in docs/extending.md ("An ACI command").

Nothing is imported here, so a reader of one module (`aci/edits.py`: which commands edit) loads
neither the interface nor the sandbox.
"""
