#!/usr/bin/env bash
# Work longer than one device call (10 minutes at most): the first call
# starts COMMAND detached, writing under JOB; each call (the first and the
# ones that follow, back to back while the machine stays warm) waits up to
# SECONDS for it to end, then copies JOB's small text files (logs, JSON,
# journals; no captures or binaries) to $OUT. Prints "running" or "ended
# RC" last.
#
#   bench/gpu/detached.sh JOB SECONDS COMMAND...
set -uo pipefail
job=$1 seconds=$2
shift 2
mkdir -p "$job"
if [[ ! -f $job/pid ]]; then
  setsid nohup bash -c '"$@"; echo $? >"$0/rc"' "$job" "$@" >"$job/stdout.txt" 2>&1 </dev/null &
  echo $! >"$job/pid"
fi
pid=$(cat "$job/pid")
deadline=$((SECONDS + seconds))
while [[ ! -f $job/rc ]] && ((SECONDS < deadline)); do sleep 5; done
if [[ -n ${OUT:-} ]]; then
  (cd "$job" && find . -type f -size -8M \( -name '*.txt' -o -name '*.log' -o -name '*.json' -o -name '*.jsonl' \
    -o -name '*.controls' -o -name '*.csv' -o -name 'command-line' \) -print0 |
    xargs -0 -r cp --parents -t "$OUT")
fi
if [[ -f $job/rc ]]; then echo "ended $(cat "$job/rc") (pid $pid)"; else echo "running (pid $pid)"; fi
