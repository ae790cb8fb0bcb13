"""`python -m swe_aci.executors.watchdog OWNER_PID`, started by `owned.watch_owner`: waits for
end-of-file on stdin (the owner ended), then kills what the owner left (`owned.kill_owned`): the
processes marked with its pid and their descendants.

A `track` line on stdin (`owned.track_descendants`) makes it also remember, every
`TRACK_SECONDS` while it waits, the descendants of the owner's marked processes, and kill those
at the end too: Ray's raylet dies with the owner (it asks the kernel to), before the watchdog
looks, and the agents it started have no marker to be found by (they are started with an
environment of their own, which setproctitle overwrites in /proc/<pid>/environ) and no parent
left to be found through. A pid is only killed while its start time is the one remembered.
Only the standard library is loaded while it waits (about 10 MB), the rest once it acts."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys

TRACK_SECONDS = 1.0
MARKER = b"SWE_ACI_SANDBOX="


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    owner = int(sys.argv[1])
    stdin = sys.stdin.fileno()
    tracking = False
    remembered: dict[int, bytes] = {}  # pid: start time
    while True:
        ready, _, _ = select.select([stdin], [], [], TRACK_SECONDS if tracking else None)
        if ready:
            data = os.read(stdin, 4096)
            if not data:
                break
            tracking = tracking or b"track" in data
        if tracking:
            remembered.update(descendants_of_marked(owner))
    for pid, start in remembered.items():
        if start_time(pid) == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    from swe_aci.executors.owned import kill_owned

    kill_owned(owner)


def descendants_of_marked(owner: int) -> dict[int, bytes]:
    """The processes marked with `owner`'s pid (any kind), and their descendants, with their
    start times."""
    suffix = f"-{owner}".encode()
    children: dict[int, list[int]] = {}
    starts: dict[int, bytes] = {}
    roots = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read()
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read(1 << 20)
        except OSError:
            continue
        fields_after_name = fields[fields.rfind(b")") + 2 :].split()
        children.setdefault(int(fields_after_name[1]), []).append(pid)
        starts[pid] = fields_after_name[19]
        if any(
            variable.startswith(MARKER) and variable.endswith(suffix)
            for variable in environ.split(b"\0")
        ):
            roots.append(pid)
    found: dict[int, bytes] = {}
    while roots:
        pid = roots.pop()
        if pid not in found and pid != os.getpid():
            found[pid] = starts[pid]
            roots.extend(children.get(pid, ()))
    return found


def start_time(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read()
    except OSError:
        return None
    return fields[fields.rfind(b")") + 2 :].split()[19]


if __name__ == "__main__":
    main()
