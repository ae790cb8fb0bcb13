"""`swe-aci inspect`: a local, read-only web app over runs (see docs/inspect.md)."""
