"""The container's persistent shell (`DockerShellTransport`) and its interrupt and reap scripts."""

from __future__ import annotations

import contextlib
import re
import secrets
from typing import TYPE_CHECKING

from swe_aci.env.base import SandboxError
from swe_aci.env.docker.exec import HANDSHAKE_SECONDS, ChannelBroken, ExecSocket, run_exec
from swe_aci.env.process import CLOCK_TICKS, RUNAWAY_PROCESSES, count_descendants

if TYPE_CHECKING:
    from docker import APIClient

KILL_SECONDS = 30.0

# Sends the shell (pid = session id $1) SIGUSR1 so it abandons its command, then kills the processes
# of that session started at or after clock tick $2; or, when $3 is "all", kills all of them, the
# shell included. /proc start times count from the boot of the host, which containers
# share, so the host's CLOCK_BOOTTIME sets the threshold.
KILL_SCRIPT = r"""
sid=$1 min=$2 scope=$3
[ "$scope" = all ] || kill -USR1 "$sid" 2>/dev/null
for stat in /proc/[0-9]*/stat; do
    read -r line < "$stat" 2>/dev/null || continue
    pid=${line%% *}
    set -- ${line##*) }
    [ "$4" = "$sid" ] || continue
    [ "$scope" = all ] || { [ "$pid" != "$sid" ] && [ "${20}" -ge "$min" ]; } || continue
    kill -9 "$pid" 2>/dev/null
done
exit 0
"""

# Kills every process of the shell's session ($1) but the shell when they are a runaway (see
# env/process.py: stopped round after round, then killed together); prints how many there were.
RUNAWAY_SCRIPT = r"""
sid=$1 found=0
for ((round = 0; round < 200; round++)); do
    members=() running=()
    for stat in /proc/[0-9]*/stat; do
        read -r line < "$stat" 2>/dev/null || continue
        pid=${line%% *}
        set -- ${line##*) }
        [ "$4" = "$sid" ] && [ "$pid" != "$sid" ] || continue
        case $1 in Z|X|x) continue ;; T|t) ;; *) running+=("$pid") ;; esac
        members+=("$pid")
    done
    [ ${#members[@]} -gt 0 ] || break
    [ ${#members[@]} -gt $found ] && found=${#members[@]}
    if [ ${#running[@]} -gt 0 ]; then kill -STOP "${running[@]}" 2>/dev/null
    else kill -9 "${members[@]}" 2>/dev/null
    fi
done
echo "$found"
"""


class DockerShellTransport:
    """A ShellTransport: one `bash` exec'd in the container, stderr merged into stdout.

    runc starts each exec in a new session, so the shell's pid is the session id of every command
    it runs; `interrupt` kills that session's recent processes with one small exec.
    """

    def __init__(self, api: APIClient, container_id: str) -> None:
        self._stream = ExecSocket(api, container_id, ["bash", "--noprofile", "--norc"])
        tag = b"__SWE_ACI_SHELL_" + secrets.token_hex(8).encode()
        # Merge stderr first, so that frame order is output order; then learn the session id.
        self._stream.send(
            b"exec 2>&1; read -r -a __swe_aci_stat < /proc/$$/stat\n"
            b"printf '%s %s\\n' " + tag + b' "${__swe_aci_stat[5]}"; unset __swe_aci_stat\n'
        )
        try:
            _, match = self._stream.receive_until(re.compile(tag + rb" (\d+)\n"), HANDSHAKE_SECONDS)
        except ChannelBroken as exc:
            self._stream.close()
            detail = " ".join(exc.received.decode("utf-8", errors="replace").split())[-300:]
            detail = detail or str(exc)
            raise SandboxError(f"bash did not start in the container: {detail}") from None
        self.session_id = int(match.group(1))
        self._host_pids = _host_pids(api, container_id, self._stream.exec_id)

    def fileno(self) -> int:
        return self._stream.fileno()

    def write(self, data: bytes) -> None:
        self._stream.send(data)

    def read_available(self) -> bytes | None:
        return self._stream.receive()

    def is_alive(self) -> bool:
        return self._stream.running()

    def interrupt(self, since_boot_seconds: float) -> None:
        threshold = max(1, int(since_boot_seconds * CLOCK_TICKS))
        self._kill(str(threshold), "recent")

    def reap_runaway(self) -> int:
        """Counted on the host when the engine runs here (the descendants of the shell and of
        the container's init, which adopts orphans), so a command costs no exec; only a runaway
        is killed, by one exec of RUNAWAY_SCRIPT. With a remote engine nothing is checked."""
        if self._host_pids is None:
            return 0
        count = sum(count_descendants(pid, RUNAWAY_PROCESSES) for pid in self._host_pids)
        if count < RUNAWAY_PROCESSES:
            return 0
        api, container_id = self._stream.api, self._stream.container_id
        command = ["bash", "-c", RUNAWAY_SCRIPT, "reap", str(self.session_id)]
        _, out, _ = run_exec(api, container_id, command, None, KILL_SECONDS)
        found = out.decode(errors="replace").split()
        return int(found[-1]) if found and found[-1].isdigit() else 0

    def _kill(self, threshold: str, scope: str) -> None:
        api, container_id = self._stream.api, self._stream.container_id
        command = ["bash", "-c", KILL_SCRIPT, "kill", str(self.session_id), threshold, scope]
        run_exec(api, container_id, command, None, KILL_SECONDS)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._kill("0", "all")
        self._stream.close()


def _host_pids(api: APIClient, container_id: str, exec_id: str) -> tuple[int, int] | None:
    """The host pids of the container's init and of the shell, when the engine runs on this
    host (each pid's command line is checked: a remote engine's pids mean nothing here)."""
    try:
        init = int(api.inspect_container(container_id)["State"]["Pid"])
        shell = int(api.exec_inspect(exec_id)["Pid"])
        with open(f"/proc/{init}/cmdline", "rb") as handle:
            init_line = handle.read()
        with open(f"/proc/{shell}/cmdline", "rb") as handle:
            shell_line = handle.read()
    except Exception:  # a remote engine, a pid gone: nothing checked
        return None
    if b"sleep\0infinity\0" not in init_line or not shell_line.startswith(b"bash\0"):
        return None
    return init, shell
