"""The inspector over HTTP on 127.0.0.1 (a real server, a real client): what each page shows, that
agent text stays text, that nothing outside the run directories is served, that it is read-only,
and the static export."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector_helpers import (
    HOSTILE,
    SENTINEL,
    inspect_command,
    request,
    serving,
    snapshot,
    write_batch_files,
    write_episode,
    write_evaluation,
)
from swe_aci.inspector.app import export
from swe_aci.inspector.runs import discover
from swe_aci.inspector.site import Site

PAPER_ERA = Path(__file__).parent / "fixtures" / "paper_era" / "calc__calc-1.traj"
TEMPLATES = Path(__file__).parents[1] / "src" / "swe_aci" / "inspector" / "templates"
LONG = "\n".join(f"line {n} of a long observation" for n in range(5000))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished batch with an evaluation: one resolved, one hostile and unresolved."""
    run = tmp_path / "run"
    write_episode(run, "good", [("open a.py", LONG), ("edit 1:1\nx = 2\nend_of_edit", "ok")])
    path = write_episode(
        run, "hostile", [(f"echo '{HOSTILE}'", HOSTILE + "LONE"), ("submit", PATCH_OBS)]
    )
    path.write_text(path.read_text().replace("LONE", "\\ud800"))  # JSON may hold lone surrogates
    write_batch_files(run, {"good": {}, "hostile": {"exit_status": "submitted (exit_cost)"}})
    write_evaluation(run, {"good": "resolved", "hostile": "unresolved"})
    return run


PATCH_OBS = "diff --git a/a.py b/a.py"


def get(address: tuple[str, int], path: str) -> tuple[int, str]:
    status, _, body = request(address, path)
    return status, body.decode("utf-8")


def test_run_page_lists_every_instance_from_the_summary_files(run_dir: Path) -> None:
    with serving([run_dir]) as address:
        status, page = get(address, "/run/0/index.html")
    assert status == 200
    assert 'data-id="good"' in page and 'data-id="hostile"' in page
    assert 'data-exit="submitted (exit_cost)"' in page and 'data-outcome="resolved"' in page
    assert "resolved 1 of 2 (50.0%)" in page


def test_agent_text_is_shown_as_text(run_dir: Path) -> None:
    with serving([run_dir]) as address:
        status, page = get(address, "/run/0/instance/hostile.html")
        _, search = get(address, "/run/0/search.html?q=onerror")
        _, history = get(address, "/run/0/instance/hostile/history.html")
    assert status == 200
    for text in (page, search, history):
        assert SENTINEL in text  # shown...
        assert "<script>window" not in text and "<img src=x" not in text  # ...never as markup
        assert "&lt;script&gt;window." in text and "&lt;img src=x onerror=" in text
        assert "\x00" not in text and "\x1b" not in text
    assert "\\x1b[31mred" in page and "NUL:\\x00 end" in page and "\ufffd" in page
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.DOTALL)
    assert len(scripts) == 1 and scripts[0][0] == ""  # one inline script, ours
    assert "hostile step 1" in search and "matching steps" in search


def test_content_security_policy_allows_only_the_inspectors_own_script(run_dir: Path) -> None:
    with serving([run_dir]) as address:
        status, headers, body = request(address, "/run/0/instance/good.html")
    assert status == 200
    policy = headers["Content-Security-Policy"]
    page = body.decode()
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    style_digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert f"style-src 'sha256-{style_digest}'" in policy
    assert "default-src 'none'" in policy and "unsafe" not in policy
    assert "http" not in policy and "*" not in policy  # no other origin
    assert headers["X-Content-Type-Options"] == "nosniff"
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"<[a-z][^>]*\s(on[a-z]+|style)\s*=", markup)  # no inline handler or style


def test_no_template_marks_text_safe() -> None:
    for template in TEMPLATES.glob("*.html"):
        assert "|safe" not in template.read_text().replace(" ", ""), template.name


def test_observations_are_loaded_on_demand(run_dir: Path) -> None:
    with serving([run_dir]) as address:
        _, page = get(address, "/run/0/instance/good.html")
        status, full = get(address, "/run/0/instance/good/observation/1.txt")
        missing, _ = get(address, "/run/0/instance/good/observation/9.txt")
    assert "line 4999 of a long observation" not in page  # only a preview in the page
    assert 'data-src="good/observation/1.txt"' in page
    assert status == 200 and full == LONG and missing == 404
    assert 'id="step-1"' in page and 'href="#step-1"' in page  # a deep link per step
    assert "model 0.500 s" in page and "tokens in 100" in page and "cost $0.0010" in page
    assert "tests/test_a.py::test_x" in page and "log of good &lt;b&gt;" in page


def test_a_ten_megabyte_line_is_previewed_and_served_whole_on_demand(tmp_path: Path) -> None:
    run = tmp_path / "run"
    line = "<b>" + "y" * 10_000_000 + "\x1b[0m"
    write_episode(run, "huge", [("cat big.txt", line), ("echo " + "z" * 300_000, "ok")])
    with serving([run]) as address:
        status, page = get(address, "/run/0/instance/huge.html")
        _, full = get(address, "/run/0/instance/huge/observation/1.txt")
    assert status == 200 and len(page) < 600_000  # previews; the 300 KB action is cut too
    assert "more characters not shown" in page
    assert len(full) == len(line) - 1 + len("\\x1b") and full.startswith("<b>yyy")


def test_nothing_outside_the_run_directory_is_served(run_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-CONTENT")
    (run_dir / "link.txt").symlink_to(secret)
    (tmp_path / "elsewhere").mkdir()
    write_evaluation(tmp_path / "elsewhere", {"good": "SECRET-CONTENT"})
    shutil.rmtree(run_dir / "evaluation")
    (run_dir / "evaluation").symlink_to(tmp_path / "elsewhere" / "evaluation")
    outside = tmp_path / "elsewhere" / "stolen"
    write_episode(tmp_path / "elsewhere", "stolen", [("cat /etc/passwd", "SECRET-CONTENT")])
    (run_dir / "stolen").symlink_to(outside)
    with serving([run_dir]) as address:
        assert get(address, "/run/0/files/results.json")[0] == 200
        for path in (
            "/run/0/files/../../secret.txt",
            "/run/0/files/%2e%2e/%2e%2e/secret.txt",
            "/run/0/files/..%2f..%2fsecret.txt",
            "/run/0/files//etc/passwd",
            "/run/0/files/link.txt",
            "/run/0/instance/stolen.html",
            "/run/0/instance/stolen/observation/1.txt",
            "/run/0/instance/..%2f..%2fsecret.html",
            "/run/0/files/%00",
            "/run/0/files/evaluation/good/test_output.txt",
            "/run/7/index.html",
            "/../../etc/passwd",
        ):
            status, body = get(address, path)
            assert status == 404, path
            assert "SECRET-CONTENT" not in body and "root:" not in body, path
        for path in ("/run/0/index.html", "/run/0/instance/good.html"):  # the evaluation is out
            status, body = get(address, path)
            assert status == 200 and "SECRET-CONTENT" not in body and "log of good" not in body


def test_only_requests_addressed_to_127_0_0_1_are_answered(run_dir: Path) -> None:
    """DNS rebinding: a hostile page whose name resolves to 127.0.0.1 sends its own Host."""
    with serving([run_dir]) as address:
        port = address[1]
        assert request(address, "/", host=f"localhost:{port}")[0] == 200
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", ""):
            status, _, body = request(address, "/run/0/index.html", host=host)
            assert status == 403 and b"good" not in body, host


def test_the_server_is_read_only(run_dir: Path) -> None:
    before = snapshot(run_dir)
    with serving([run_dir]) as address:
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            for path in ("/run/0/files/results.json", "/run/0/index.html", "/"):
                status, headers, _ = request(address, path, method)
                assert status == 405 and headers["Allow"] == "GET, HEAD", (method, path)
        status, headers, body = request(address, "/run/0/index.html", "HEAD")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
        for path in ("/", "/run/0/index.html", "/run/0/summary.html", "/run/0/instance/good.html"):
            assert get(address, path)[0] == 200
    assert snapshot(run_dir) == before


def test_a_growing_journal_shows_its_progress_on_reload(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_episode(run, "done", [("ls", "a.py")])
    journal = write_episode(run, "live", [("ls", "a.py"), ("cat a.py", "x = 1")], finish=False)
    with serving([run]) as address:
        _, page = get(address, "/run/0/index.html")
        assert 'data-id="live"' in page and 'data-exit="running"' in page
        _, instance = get(address, "/run/0/instance/live.html")
        assert instance.count('class="step"') == 2 and ">running<" in instance
        lines = journal.with_name(journal.name + ".jsonl").read_text().splitlines()
        step = json.loads(lines[-1])
        step["step"]["action"] = "pytest -q"
        with open(journal.with_name(journal.name + ".jsonl"), "a") as stream:
            stream.write(
                json.dumps(step) + "\n" + '{"info": {"exit_st'
            )  # a line still being written
        _, instance = get(address, "/run/0/instance/live.html")
        assert instance.count('class="step"') == 3 and "pytest -q" in instance


def test_paper_era_trajectories(tmp_path: Path) -> None:
    run = tmp_path / "paper"
    run.mkdir()
    shutil.copy(PAPER_ERA, run / PAPER_ERA.name)
    with serving([run]) as address:
        _, page = get(address, "/run/0/index.html")
        status, instance = get(address, "/run/0/instance/calc__calc-1.html")
    assert 'data-id="calc__calc-1"' in page
    assert status == 200 and instance.count('class="step"') == 11
    assert "mean()" in instance  # the issue, cut out of the paper-era instance message


def test_compare_output_gives_one_run_per_config_and_marks_the_divergence(tmp_path: Path) -> None:
    out = tmp_path / "comparison"
    same = [("open a.py", "x = 1"), ("search_dir x", "found")]
    write_episode(
        out / "default" / "batch", "task", [*same, ("edit 1:1\nx = 2\nend_of_edit", "ok")]
    )
    write_episode(out / "no_lint" / "batch", "task", [*same, ("python -c 1", "1"), ("submit", "d")])
    (out / "comparison.json").write_text("{}")
    runs = discover([out])
    assert [run.name for run in runs] == ["comparison/default", "comparison/no_lint"]
    with serving([out]) as address:
        _, instance = get(address, "/run/0/instance/task.html")
        status, page = get(address, "/compare/0-1/task.html")
        _, listing = get(address, "/compare/0-1/index.html")
    assert 'href="../../../compare/0-1/task.html"' in instance
    assert status == 200 and "first divergence: row 3" in page
    rows = re.findall(r'<tr class="(same|differs)"( id="divergence")?', page)
    assert [row[0] for row in rows] == ["same", "same", "differs", "differs"]
    assert rows[2][1] and not rows[3][1]
    assert 'href="task.html"' in listing


def test_gold_and_test_patches_from_the_task_file(run_dir: Path, tmp_path: Path) -> None:
    row = {
        "instance_id": "good",
        "repo": "a/b",
        "problem_statement": "p",
        "base_commit": "c",
        "patch": "diff --git a/g.py b/g.py\n+GOLD-LINE\n",
        "test_patch": "+TEST-LINE\n",
    }
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(row) + "\n")
    from swe_aci.inspector.app import open_site

    site = open_site([run_dir], str(tasks))
    page = site.get("run/0/instance/good.html", {}).body.decode()
    assert '<span class="d-add">+GOLD-LINE</span>' in page and "+TEST-LINE" in page


def test_export_writes_pages_that_need_no_server(run_dir: Path, tmp_path: Path) -> None:
    before = snapshot(run_dir)
    out = tmp_path / "export"
    site = Site(discover([run_dir]), export=True)
    written = export(site, out)
    assert written == 7  # index, run, summary, two instances and their message pages
    page = (out / "run" / "0" / "instance" / "good.html").read_text()
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert "connect-src 'none'" in html.unescape(policy) and "default-src 'none'" in html.unescape(
        policy
    )
    assert "line 4999 of a long observation" in page  # no server to load it from
    assert "data-src" not in page and "search.html" not in page
    for file in out.rglob("*.html"):
        for link in re.findall(r'(?:href|src)="([^"#]*)', file.read_text()):
            if link and not link.startswith("data:"):
                assert not re.match(r"[a-z]+:|/", link), (file, link)  # relative links only
                assert (file.parent / link).resolve().is_file(), (file, link)
    assert snapshot(run_dir) == before
    with pytest.raises(Exception, match="inside the run"):
        export(site, run_dir / "pages")


def test_inspect_command_binds_127_0_0_1_on_a_free_port_and_prints_the_url(run_dir: Path) -> None:
    with inspect_command(run_dir) as line:
        match = re.fullmatch(r"swe-aci inspect: http://127\.0\.0\.1:(\d+)/\n", line)
        assert match, line
        status, page = get(("127.0.0.1", int(match.group(1))), "/")
        assert status == 200 and "run/0/index.html" in page


def test_inspect_command_errors_are_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "swe_aci", "inspect", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2 and "not a directory" in result.stderr
    assert "Traceback" not in result.stderr
