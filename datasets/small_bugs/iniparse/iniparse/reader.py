"""Reading INI text into nested dicts."""


def parse_ini(text):
    """`{section: {key: value}}` from INI text; lines starting with `;` or `#` are comments."""
    sections = {}
    current = sections.setdefault("", {})
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1].strip(), {})
            continue
        key, _, value = line.partition("=")
        current[key.strip()] = value.strip()
    return sections
