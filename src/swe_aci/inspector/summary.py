"""A run's summary page: the paper's analyses (`swe-aci stats`) and their plots, from every
trajectory of the run (this page, unlike the run page, reads them all)."""

from __future__ import annotations

import base64

from swe_aci.analysis.paper import paper_stats, summary_sections
from swe_aci.analysis.stats import UNFINISHED, trajectory_stats, with_result
from swe_aci.inspector.runs import Run, read_results_safely
from swe_aci.inspector.text import visible
from swe_aci.trajectory.instance import InstanceResult
from swe_aci.trajectory.store import TrajectoryError, load_trajectory


def run_records(run: Run) -> list[InstanceResult]:
    """Every instance's statistics, its trajectory read only from inside the run."""
    results = read_results_safely(run)
    records = []
    for instance_id in run.instance_ids():
        path = run.trajectory_path(instance_id)
        record = InstanceResult(instance_id, exit_status=UNFINISHED)
        if path is not None:
            try:
                record = trajectory_stats(instance_id, load_trajectory(path))
            except TrajectoryError as error:
                record.problem = str(error)
        if instance_id in results:
            with_result(record, results[instance_id])
        records.append(record)
    return records


def summary_page_data(
    run: Run,
) -> tuple[list[tuple[str, list[tuple[str, str]]]], list[tuple[str, str]], str]:
    """(sections of rows, plots as (name, data: URI), a note when there are no plots)."""
    from swe_aci.analysis.plots import PlotsUnavailable, figures, png_bytes

    stats = paper_stats(run_records(run), run.evaluation_report())
    sections = [
        (visible(title, 200), [(visible(k, 500), visible(v, 2000)) for k, v in rows])
        for title, rows in summary_sections(stats)
    ]
    try:
        drawn = figures(stats)
    except PlotsUnavailable as error:
        return sections, [], str(error)
    plots = [
        (name, "data:image/png;base64," + base64.b64encode(png_bytes(figure)).decode())
        for name, figure in drawn.items()
    ]
    return sections, plots, ""
