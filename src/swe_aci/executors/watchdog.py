"""`python -m swe_aci.executors.watchdog OWNER_PID`, started by `owned.watch_owner`: waits for
end-of-file on stdin (the owner ended), then kills what the owner left (`owned.kill_owned`):
the processes marked with its pid, and those whose environment holds an entry it named on stdin
(`owned.adopt_environment`).
Only the standard library is loaded while it waits (about 10 MB), the rest once it acts."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    owner = int(sys.argv[1])
    entries: set[str] = set()
    for line in sys.stdin.buffer:  # `NAME=value` lines: environments to kill too, until EOF
        entry = line.decode(errors="replace").strip()
        if "=" in entry:
            entries.add(entry)
    from swe_aci.executors.owned import kill_owned

    kill_owned(owner, entries)


if __name__ == "__main__":
    main()
