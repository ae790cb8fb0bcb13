#!/usr/bin/env bash
# Build the small docker image swe-aci/base:bookworm (bash, git, python3) from a Debian root made
# with debootstrap and loaded with `docker import` (no registry needed, Docker Hub is never used).
# Idempotent: does nothing when the image exists. The root filesystem tarball is cached, so a
# rebuild after `docker rmi` takes seconds.
#
# Environment: SWE_ACI_IMAGE (image name), SWE_ACI_CACHE (cache dir, default ~/.cache/swe-aci),
# SWE_ACI_DEBIAN_MIRROR (default: the host's apt mirror for the suite, from /etc/apt/sources.list
# and sources.list.d/*.list|*.sources, else http://deb.debian.org/debian), SWE_ACI_APT_DIR (where
# the apt sources are read, default /etc/apt), FORCE=1 to rebuild the image.
# `build_base_image.sh --print-mirror` prints the mirror it would use and exits.
set -euo pipefail

IMAGE="${SWE_ACI_IMAGE:-swe-aci/base:bookworm}"
CACHE="${SWE_ACI_CACHE:-$HOME/.cache/swe-aci}"
SUITE=bookworm
DEFAULT_MIRROR=http://deb.debian.org/debian

# The first plain `deb` URI of the host's apt sources that serves $SUITE itself (an Ubuntu or
# security-only mirror would not have it), in one-line or deb822 format.
host_mirror() {
    local apt="${SWE_ACI_APT_DIR:-/etc/apt}" file
    for file in "$apt"/sources.list "$apt"/sources.list.d/*.list; do
        [ -r "$file" ] || continue
        awk -v suite="$SUITE" '$1 == "deb" {
            i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
            if ($(i + 1) == suite) { print $i; exit }
        }' "$file"
    done
    for file in "$apt"/sources.list.d/*.sources; do
        [ -r "$file" ] || continue
        awk -v suite="$SUITE" '
            function flush() {
                if (deb && uri != "" && (" " suites " ") ~ (" " suite " ")) { print uri; found = 1 }
                deb = 0; uri = ""; suites = ""
            }
            /^[ \t]*$/ { flush(); if (found) exit; next }
            /^Types:/ { deb = ($0 ~ /[ \t]deb([ \t]|$)/) }
            /^URIs:/ { uri = $2 }
            /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
            END { if (!found) flush() }
        ' "$file"
    done
}

MIRROR="${SWE_ACI_DEBIAN_MIRROR:-$(host_mirror | head -n 1 || true)}"
MIRROR="${MIRROR:-$DEFAULT_MIRROR}"
if [ "${1:-}" = --print-mirror ]; then
    printf '%s\n' "$MIRROR"
    exit 0
fi
PACKAGES="bash,coreutils,git,python3,ca-certificates,procps"
TARBALL="$CACHE/rootfs-$SUITE-$(printf '%s' "$PACKAGES" | md5sum | cut -c1-8).tar"

log() { printf 'build_base_image: %s\n' "$*" >&2; }

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    log "$IMAGE already exists"
    exit 0
fi

if [ ! -s "$TARBALL" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
    mkdir -p "$CACHE/debs"
    root="$(mktemp -d /tmp/swe-aci-rootfs.XXXXXX)"
    # debootstrap mounts /proc, /sys and (in a container) binds /dev under the root: unmount
    # whatever a failed run left there before removing it, and never cross into another fs.
    cleanup() {
        awk -v root="$root" 'index($2, root "/") == 1 { print $2 }' /proc/mounts | sort -r |
            while read -r mount; do umount -l "$mount" || true; done
        rm -rf --one-file-system "$root"
    }
    trap cleanup EXIT
    log "debootstrap $SUITE (minbase + $PACKAGES) into $root (log: $CACHE/debootstrap.log)"
    if ! debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$CACHE/debs" \
        "$SUITE" "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1; then
        tail -n 20 "$CACHE/debootstrap.log" >&2
        exit 1
    fi
    # Shrink: package lists, caches, docs and logs are not needed in a sandbox.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
        "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
        "$root"/var/log/*.log "$root"/var/log/apt/* "$root"/debootstrap
    tar -C "$root" --numeric-owner --one-file-system -cf "$TARBALL.partial" .
    mv "$TARBALL.partial" "$TARBALL"
    log "cached root filesystem at $TARBALL"
fi

log "importing $TARBALL as $IMAGE"
docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /' \
    --change 'CMD ["bash"]' \
    "$TARBALL" "$IMAGE" >/dev/null
log "built $IMAGE"
