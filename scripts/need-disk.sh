#!/usr/bin/env bash
# need-disk.sh GB WHAT: fail with a clear message, before an install starts, when the disk under
# the repository has less than GB gigabytes free (pip's own message on a full disk comes mid-install,
# as "OSError: [Errno 28]", after minutes).
set -euo pipefail
need_gb=$1
what=$2
dir="$(cd "$(dirname "$0")/.." && pwd)"
free_kb=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
tmp_kb=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 {print $4}')
if [ "$tmp_kb" -lt "$free_kb" ]; then free_kb=$tmp_kb; fi  # pip unpacks wheels under TMPDIR
if [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "error: not enough free disk for $what: about $need_gb GB needed, $((free_kb / 1024)) MB free at $dir (or ${TMPDIR:-/tmp})." >&2
    echo "       Free some space (old clones, old .venv-torch* folders, /tmp) and run it again." >&2
    exit 2
fi
