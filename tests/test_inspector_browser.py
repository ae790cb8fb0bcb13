"""The inspector in a real browser: Debian's chromium driven by playwright (no browser download),
on runs made by the real CLI (two batches with the scripted model, evaluated), served by
`swe-aci inspect` as a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from batch_helpers import generated_task_file, scripted_overrides
from inspector_helpers import inspect_command

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SENTINEL = "__inspector_pwned"
HOSTILE = (
    f"<script>window.{SENTINEL}=1;alert(1)</script>"
    f'<img src=x onerror="window.{SENTINEL}=2;alert(2)">'
)
SRC = str(Path(__file__).parents[1] / "src")


def act(thought: str, command: str) -> str:
    return f"DISCUSSION\n{thought}\n```\n{command}\n```\n"


FULL_RUN = [
    act(f"Look at it {HOSTILE}", "open calc/__init__.py"),
    act("A bad edit.", "edit 2:2\n  return a +\nend_of_edit"),
    act("The fix.", "edit 2:2\n    return a + b\nend_of_edit"),
    act("Print something hostile.", f"printf '%s\\033[31m red\\n' '{HOSTILE}'"),
    act("A long output.", "seq 1 400"),
    act("Done.", "submit"),
]
SHORT_RUN = [
    act("Look at it.", "open calc/__init__.py"),
    act("The fix.", "edit 2:2\n    return a + b\nend_of_edit"),
    act("Done.", "submit"),
]


def swe_aci(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "swe_aci", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def make_run(task_file: Path, out: Path, replies: list[str]) -> Path:
    args = ["batch", "--instances", str(task_file), "--output-dir", str(out), "--env", "local"]
    args += ["--cache-dir", str(task_file.parent / "cache"), "--evaluate"]
    for override in scripted_overrides(replies):
        args += ["--set", override]
    result = swe_aci(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("browser")
    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp, 3, test_cmd=test_cmd)
    rows = [json.loads(line) for line in task_file.read_text().splitlines()]
    rows[2]["FAIL_TO_PASS"] = json.dumps(["tests/test_add.py::test_missing"])  # never resolved
    task_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return make_run(task_file, tmp / "full", FULL_RUN), make_run(
        task_file, tmp / "short", SHORT_RUN
    )


@pytest.fixture(scope="module")
def base_url(runs: tuple[Path, Path]) -> Iterator[str]:
    with inspect_command(*runs) as line:
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, line
        yield match.group(1)


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[tuple[object, list[str]]]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium)")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            dialogs: list[str] = []

            def dismiss(dialog: object) -> None:
                dialogs.append(dialog.message)  # type: ignore[attr-defined]
                dialog.dismiss()  # type: ignore[attr-defined]

            page.on("dialog", dismiss)
            yield page, dialogs
        finally:
            browser.close()


def test_the_inspector_in_a_browser(
    base_url: str, browser_page: tuple[object, list[str]], tmp_path: Path
) -> None:
    page, dialogs = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))  # type: ignore[attr-defined]
    page.goto(base_url)  # type: ignore[attr-defined]
    page.click("text=full")  # type: ignore[attr-defined]

    # The run page: three instances, filtered by outcome.
    rows = page.locator("#instances tbody tr")  # type: ignore[attr-defined]
    assert rows.count() == 3
    first = page.locator("#instances tr[data-id=demo__calc-0] td")  # type: ignore[attr-defined]
    assert first.nth(3).inner_text() == "6" and first.nth(8).inner_text() == "1"  # steps, failed
    page.select_option("#filter-outcome", "resolved")  # type: ignore[attr-defined]
    assert page.locator("#instances tbody tr:visible").count() == 2  # type: ignore[attr-defined]
    assert page.inner_text("#shown-count") == "2 shown"  # type: ignore[attr-defined]
    page.select_option("#filter-outcome", "unresolved")  # type: ignore[attr-defined]
    visible = page.locator("#instances tbody tr:visible")  # type: ignore[attr-defined]
    assert visible.count() == 1 and "demo__calc-2" in visible.inner_text()
    page.select_option("#filter-outcome", "")  # type: ignore[attr-defined]
    page.click("th:has-text('instance')")  # type: ignore[attr-defined]
    page.click("th:has-text('instance')")  # type: ignore[attr-defined]  # descending
    assert "demo__calc-2" in rows.first.inner_text()

    # Search across the run lists the matching steps.
    page.fill("#search", "seq 1 400")  # type: ignore[attr-defined]
    page.press("#search", "Enter")  # type: ignore[attr-defined]
    page.wait_for_selector("#match-count")  # type: ignore[attr-defined]
    assert page.inner_text("#match-count").startswith("3 matching steps")  # type: ignore[attr-defined]
    page.go_back()  # type: ignore[attr-defined]

    # An instance: step with the keyboard, unfold an observation, follow a deep link.
    page.click("text=demo__calc-0")  # type: ignore[attr-defined]
    page.wait_for_selector("#step-1")  # type: ignore[attr-defined]
    assert "j/k" in page.inner_text("#keys").replace(" ", "")  # type: ignore[attr-defined]
    for _ in range(5):
        page.keyboard.press("j")  # type: ignore[attr-defined]
    assert page.url.endswith("#step-5")  # type: ignore[attr-defined]
    assert "current" in page.get_attribute("#step-5", "class")  # type: ignore[attr-defined]
    full = page.locator("#step-5 pre.full")  # type: ignore[attr-defined]
    assert not full.is_visible()
    page.keyboard.press("o")  # type: ignore[attr-defined]
    page.wait_for_selector("#step-5 details[data-loaded=yes]")  # type: ignore[attr-defined]
    assert full.is_visible() and full.inner_text().endswith("399\n400")
    page.keyboard.press("k")  # type: ignore[attr-defined]
    assert page.url.endswith("#step-4")  # type: ignore[attr-defined]

    # The hostile step is shown as text and ran nothing.
    shown = page.inner_text("#step-4")  # type: ignore[attr-defined]
    assert f"<script>window.{SENTINEL}=1;alert(1)</script>" in shown
    assert '<img src=x onerror="' in shown and "\\x1b[31m red" in shown
    assert f"<script>window.{SENTINEL}" in page.inner_text("#step-1")  # type: ignore[attr-defined]
    assert page.evaluate(f"typeof window.{SENTINEL}") == "undefined"  # type: ignore[attr-defined]
    assert page.locator("main img").count() == 0  # type: ignore[attr-defined]
    page.screenshot(path=str(tmp_path / "instance.png"), full_page=False)  # type: ignore[attr-defined]
    if os.environ.get("INSPECTOR_SCREENSHOT"):
        page.screenshot(path=os.environ["INSPECTOR_SCREENSHOT"])  # type: ignore[attr-defined]

    deep = page.url.split("#")[0] + "#step-3"  # type: ignore[attr-defined]
    page.goto(base_url)  # type: ignore[attr-defined]
    page.goto(deep)  # type: ignore[attr-defined]
    assert "current" in page.get_attribute("#step-3", "class")  # type: ignore[attr-defined]
    assert "return a + b" in page.inner_text("#step-3")  # type: ignore[attr-defined]
    assert page.inner_text("#outcome") == "resolved"  # type: ignore[attr-defined]
    assert "tests/test_add.py::test_add" in page.inner_text("#tests")  # type: ignore[attr-defined]
    page.keyboard.press("n")  # type: ignore[attr-defined]
    page.wait_for_url(re.compile(r"demo__calc-1\.html$"))  # type: ignore[attr-defined]

    # The compare page: the same instance in both runs, the first divergence marked.
    page.click("a.compare-link")  # type: ignore[attr-defined]
    page.wait_for_selector("#compare")  # type: ignore[attr-defined]
    assert page.inner_text("#divergence-note") == "first divergence: row 2"  # type: ignore[attr-defined]
    assert "edit 2:2" in page.inner_text("#divergence")  # type: ignore[attr-defined]

    # The summary page shows the plots.
    page.goto(base_url + "run/0/summary.html")  # type: ignore[attr-defined]
    assert page.locator("img.plot").count() == 4  # type: ignore[attr-defined]
    width = page.evaluate("document.querySelector('img.plot').naturalWidth")  # type: ignore[attr-defined]
    assert width > 100  # the data: image loaded under the policy

    assert dialogs == [] and errors == []
