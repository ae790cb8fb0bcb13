#!/usr/bin/env bash
# Make sure a Docker engine answers on /var/run/docker.sock: install docker.io if dockerd is
# missing, start dockerd in the background if the socket does not answer, then wait (bounded).
# Idempotent: returns at once when the engine already answers.
#
# Environment: DOCKER_WAIT_SECONDS (default 60), DOCKERD_LOG (default /var/log/dockerd.log).
set -euo pipefail

SOCKET=/var/run/docker.sock
WAIT="${DOCKER_WAIT_SECONDS:-60}"
LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"

log() { printf 'ensure_docker: %s\n' "$*" >&2; }
answering() { [ -S "$SOCKET" ] && docker version >/dev/null 2>&1; }

if answering; then
    exit 0
fi

if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
    log "installing docker.io"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

if ! pgrep -x dockerd >/dev/null; then
    log "starting dockerd (log: $LOG)"
    nohup dockerd >"$LOG" 2>&1 </dev/null &
fi

for _ in $(seq $((WAIT * 2))); do
    if answering; then
        log "docker engine is up"
        exit 0
    fi
    sleep 0.5
done
log "docker engine did not answer on $SOCKET within ${WAIT}s; last lines of $LOG:"
tail -n 5 "$LOG" >&2 || true
exit 1
