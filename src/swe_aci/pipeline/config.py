"""The `strategy:` sections of the agent loop (the default), the pipeline and the attempts (the
union of every strategy's section is `episode.py: StrategyConfig`).
The pipeline's prompts are Jinja templates in the config, like the agent's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swe_aci.configuration import check_templates

# The variables each pipeline template may use.
TEMPLATE_VARIABLES: dict[str, frozenset[str]] = {
    "localize": frozenset({"problem_statement", "skeleton", "count"}),
    "repair": frozenset({"problem_statement", "path", "name", "code", "context", "failure"}),
    "blocks": frozenset({"problem_statement", "names", "path", "regions", "failure"}),
    "window": frozenset({"problem_statement", "path", "name", "signature", "code", "failure"}),
    "reproduce": frozenset(
        {"problem_statement", "module", "name", "signature", "imports", "definitions", "rejected"}
    ),
}


class AgentStrategy(BaseModel):
    """The agent loop of `agent:` (the paper's way): the model drives the ACI turn by turn."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["agent"] = "agent"


class PipelineTemplates(BaseModel):
    """The prompts of the pipeline; each is one user message."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    localize: str
    """Choose the function to edit: {{problem_statement}}, {{skeleton}} (numbered candidates
    grouped by file), {{count}} (how many)."""
    repair: str
    """Rewrite it: {{problem_statement}}, {{path}}, {{name}}, {{code}} (the function's source),
    {{context}} (the file's top-level lines: imports, constants, signatures; the same for
    each target of the file), {{failure}} (how the reproduction test fails at the base:
    pytest's `E` lines; empty without one)."""
    blocks: str
    """Search/replace blocks for a long function or a non-function target (or two targets):
    {{problem_statement}}, {{names}} (the targets, joined), {{regions}} (each target's file and
    numbered lines), {{failure}}."""
    window: str
    """Rewrite a window of a long target: {{problem_statement}}, {{path}}, {{name}} (the
    target's qualified name), {{signature}} (its first line, summarized), {{code}} (the
    window's lines under the function's `def` line, `...` for the lines left out, the line
    where the reproduction fails marked), {{failure}}."""
    reproduce: str
    """A test from the issue's examples: {{problem_statement}}, {{module}} (import path),
    {{name}} (the function's name), {{signature}}, {{imports}} (the import statements of the
    issue's own code, a list), {{definitions}} (what the issue uses that only the repository's
    tests or docs define: each with `name`, `path` and `source`), {{rejected}} (why the test of
    the try before was not kept, with pytest's first words on it; empty on the first try)."""

    @model_validator(mode="after")
    def _templates_render(self) -> PipelineTemplates:
        check_templates(self, "strategy.templates", TEMPLATE_VARIABLES)
        return self


class LocalizeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: int = Field(3, ge=1, description="files (best BM25 first) whose functions are listed")
    functions: int = Field(12, ge=1, description="candidate functions shown to the model")
    max_file_bytes: int = Field(300_000, gt=0, description="larger files are not searched")


class RepairConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperatures: list[float] = Field(
        default_factory=lambda: [0.0, 0.8, 0.8],
        min_length=1,
        description="one repair sample per entry, at that temperature",
    )
    max_output_tokens: int = Field(
        1024,
        gt=0,
        description="per rewrite sample, at most: a rewrite of a function may take twice its "
        "own length in tokens, and a margin",
    )
    block_output_tokens: int = Field(
        320,
        gt=0,
        description="per search/replace sample: a block of a few lines takes ~50-120 tokens; "
        "a reply that runs longer copies the region shown, and would cost minutes on a CPU",
    )
    block_grammar: bool = Field(
        True,
        description="constrain a search/replace reply by a grammar (llama.cpp models): each "
        "old line one of the lines shown, copied exactly; at most a few blocks of a few lines",
    )
    more_temperatures: list[float] = Field(
        default_factory=lambda: [0.7, 1.0, 0.8, 1.0],
        description="further samples of a target while no candidate passes the reproduction "
        "test, within the time budget (each with its own seed)",
    )
    locations: int = Field(
        3, ge=1, description="candidates tried one by one (then the first two together)"
    )
    rounds_after: int = Field(
        4,
        ge=0,
        description="with a reproduction that no candidate passes once every planned sample "
        "and template is tried: rounds of one more sample of each target (the temperatures of "
        "`more_temperatures` in turn, each with its own seed), while the time budget lasts",
    )
    further_templates: int = Field(
        5,
        ge=0,
        description="candidates after the first `locations` whose template repairs (every "
        "pattern) are screened once the model's samples and the first targets' templates "
        "passed nothing, before the last rounds of samples",
    )
    templates: int = Field(
        60,
        ge=0,
        description="template repairs (pipeline/mutations.py: fix patterns, no model) of a "
        "Python target screened against the reproduction test before the target's model "
        "samples; 0: none",
    )
    rewrite_max_lines: int = Field(
        30,
        ge=0,
        description="functions up to this many lines are rewritten whole; longer "
        "ones, and other targets, are edited by search/replace blocks",
    )
    region_lines: int = Field(
        40,
        gt=0,
        description="lines of a target shown numbered for blocks (around the issue's words)",
    )
    window_lines: int = Field(
        0,
        ge=0,
        description="lines of code (comments and docstrings not counted) of a long Python "
        "target a windowed rewrite shows, around the issue's words or the failing line; every "
        "other sample of such a target is one (the first), the others blocks; 0: blocks only "
        "(the default: windows measured below blocks on the real bugs, docs/pipeline.md)",
    )


class ReproduceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperatures: list[float] = Field(
        default_factory=lambda: [0.0, 0.7],
        description="tries at writing a test that fails at the base; empty: no reproduction",
    )
    max_output_tokens: int = Field(512, gt=0)


class ValidateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    test_command: str = Field(
        "python -m pytest -q -p no:cacheprovider -rfEsxXp --continue-on-collection-errors",
        description="pytest with a summary line of every test's outcome (-rfEsxXp: -rA without "
        "the captured output of each passing test, which in a suite that prints fills the "
        "output cap before the summary); run from the repository root with --rootdir and the "
        "files (--continue-on-collection-errors: a test file that fails to import leaves the "
        "others' regression signal)",
    )
    timeout: float = Field(120.0, gt=0, description="seconds for one test run")
    max_test_files: int = Field(10, ge=0, description="existing test files run; 0: none")
    suite_command: str | None = Field(
        None,
        description="a repository in another language than Python: the command that runs its "
        "tests from the repository root (`go test ./...`, `node --test`), judged by its exit "
        "status: a candidate it fails on where it passes at the base regresses; none: no "
        "regression signal",
    )


class PipelineStrategy(BaseModel):
    """Agentless-style: localize, repair (n samples), reproduce, validate and choose."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["pipeline"]
    templates: PipelineTemplates
    localize: LocalizeConfig = Field(default_factory=LocalizeConfig)
    repair: RepairConfig = Field(default_factory=RepairConfig)
    reproduce: ReproduceConfig = Field(default_factory=ReproduceConfig)
    validation: ValidateConfig = Field(default_factory=ValidateConfig)
    time_budget: float = Field(
        0.0, ge=0, description="seconds; past it no new stage starts (0: no budget)"
    )


class AttemptsStrategy(BaseModel):
    """SWE-agent 1.x's retry agent: the agent loop of `agent:` once per temperature, each in a
    fresh sandbox, within one time budget; a chooser picks one submission by the repository's
    own tests (fewest regressions), then the majority of attempts, then the smallest diff."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["attempts"]
    temperatures: list[float] = Field(
        default_factory=lambda: [0.0, 0.7, 0.7], min_length=1, description="one attempt each"
    )
    time_budget: float = Field(
        0.0, ge=0, description="seconds for all attempts; each gets what is left as its wall time"
    )
    validation: ValidateConfig = Field(default_factory=ValidateConfig)
