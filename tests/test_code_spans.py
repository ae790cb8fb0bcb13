"""Localization by the issue's inline code: a span of code the issue writes that few locations
hold ranks them first, and picks one over the entry point the issue names; and the pipeline's
BM25, which counts a compound identifier by its words too."""

from __future__ import annotations

from swe_aci.pipeline.code_spans import code_spans, span_scores
from swe_aci.pipeline.localize import candidate_locations, issue_choice
from swe_aci.pipeline.skeleton import locations
from swe_aci.retrieval.bm25 import rank, with_word_parts
from swe_aci.retrieval.documents import Document

PARSER = '''import re


class Parser:
    """Parse strings against a format: parse the format, parse the string."""

    def __init__(self, format):
        self.format = format
        self.expression = format.replace("{}", "(.+?)")

    def parse(self, string):
        """Parse the string: the parse result, or None when the string does not parse."""
        match = self.match_re().match(string)
        return None if match is None else match.groups()

    def search(self, string):
        """Search the string for the format: a parse result of the part that matches."""
        found = re.search(self.expression, string)
        return None if found is None else found.groups()

    def match_re(self):
        return re.compile(r"^%s$" % self.expression, re.DOTALL)


def parse(format, string):
    """Parse a string against a format: the parse result, or None."""
    return Parser(format).parse(string)
'''

ISSUE = """parse() drops the trailing newline of the string

```python
>>> import parse
>>> parse.parse('{}', 'a\\n')
('a',)
```

Expected `('a\\n',)`: the `$` anchor matches just before a final newline, not only at the end
of the string; `\\Z` matches the real end.
"""


def test_spans_are_the_prose_backticks_without_a_call_s_empty_parentheses() -> None:
    issue = "`wcswidth()` fails.\n\n```\n`not a span`\n>>> `nor this`\n```\n`$` and `$`, `n`\n"
    assert code_spans(issue) == ["wcswidth", "$", "n"]
    found = locations("p.py", PARSER)
    spans = span_scores(ISSUE, found)
    assert set(spans.weights) == {"$"}  # `('a\n',)` and `\Z` are held by no location
    held = {location.qualname: spans.held(location) for location in found}
    assert held["Parser.match_re"] == ["$"] and held["parse"] == []
    everywhere = span_scores("`self` is wrong and `$` too", found)
    assert everywhere.weights["self"] < everywhere.weights["$"]


def test_the_function_holding_the_issue_s_code_comes_first_and_is_chosen() -> None:
    documents = [Document("parse.py", PARSER)]
    found, spans = candidate_locations(ISSUE, documents, 1, 10)
    assert found[0].qualname == "Parser.match_re"  # BM25 and the name put `parse` first
    without_spans = ISSUE.replace("`$`", "dollar").replace("`\\Z`", "Z")
    others, none = candidate_locations(without_spans, documents, 1, 10)
    assert others[0].qualname == "parse" and not none.weights
    named = (others[0], "the issue writes one candidate dotted")
    assert issue_choice(without_spans, others, none) == named
    picked = issue_choice(ISSUE, found, spans)
    assert picked is not None and picked[0].qualname == "Parser.match_re"
    assert picked[1] == "it holds the issue's code `$`, more than parse does"


def test_compound_identifiers_count_by_their_words_in_the_pipeline_s_bm25_only() -> None:
    assert with_word_parts("self._match_re(SemVerWithVPrefix)") == (
        "self._match_re match re(SemVerWithVPrefix Sem Ver With V Prefix)"
    )
    documents = [
        Document("a.py", "def _match_re(self):\n    return self.pattern\n"),
        Document("b.py", "def anchors(text):\n    return text\n"),
    ]
    issue = "the match of the pattern ignores the anchors"
    assert rank(issue, documents, word_parts=True)[0].document.path == "a.py"
    assert rank(issue, documents)[0].document.path == "b.py"  # SWE-bench's BM25, as the RAG's
