"""What an episode produces, whichever strategy ran it: its steps and result, its exit statuses,
the files it leaves (`<id>.traj` with its journal, `.patch`, `.pred`) and their reader and writer.
The ground floor of every layer that writes or reads an episode (batch, stats, the inspector,
GitHub), so none of them imports the code that ran it."""

from swe_aci.trajectory.exits import Interrupted
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryError, load_trajectory

__all__ = ["EpisodeResult", "Interrupted", "StepRecord", "TrajectoryError", "load_trajectory"]
