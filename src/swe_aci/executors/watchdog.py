"""`python -m swe_aci.executors.watchdog OWNER_PID`, started by `owned.watch_owner`: waits for
end-of-file on stdin (the owner ended), then kills what the owner left (`owned.kill_owned`):
the processes marked with its pid, and those it named on stdin (`owned.adopt`).
Only the standard library is loaded while it waits (about 10 MB), the rest once it acts."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    owner = int(sys.argv[1])
    adopted: dict[int, str] = {}
    for line in sys.stdin.buffer:  # "pid start-time" lines of processes to kill too, until EOF
        pid, _, start = line.decode(errors="replace").strip().partition(" ")
        if pid.isdigit() and start:
            adopted[int(pid)] = start
    from swe_aci.executors.owned import kill_owned

    kill_owned(owner, adopted)


if __name__ == "__main__":
    main()
