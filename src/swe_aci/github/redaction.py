"""The GitHub token's every printable form, removed from text built from what GitHub or git
answered: an API message may quote the credentials it was sent (`Bad credentials: Bearer ...`),
git may echo a URL or header holding them."""

from __future__ import annotations

import base64

REDACTED = "***"


def secret_forms(token: str | None) -> list[str]:
    """The token, git's basic-auth pair and the base64 of each, longest first (so a longer form
    is removed whole before a shorter one inside it)."""
    if not token:
        return []
    basic = f"x-access-token:{token}"
    forms = {token, basic}
    forms |= {base64.b64encode(form.encode()).decode() for form in (token, basic)}
    forms |= {base64.urlsafe_b64encode(form.encode()).decode() for form in (token, basic)}
    return sorted(forms, key=len, reverse=True)


class Redactor:
    """Replaces the token's forms with `***` in any text shown to the user."""

    def __init__(self, token: str | None) -> None:
        self.forms = secret_forms(token)

    def __call__(self, text: str) -> str:
        for form in self.forms:
            text = text.replace(form, REDACTED)
            stripped = form.rstrip("=")
            if stripped != form and len(stripped) >= 8:
                text = text.replace(stripped, REDACTED)
        return text
