#!/bin/bash
# Every output of two builds on the shipped recordings, compared byte for byte:
#   bash bench/same-bytes.sh <build A> <build B>     (each a checkout with bin/ built)
# Runs the snapshot (csv, xlsx, html, findings; --include vms), diff, findings,
# report, convert, history load and as-of with each build into the same path in
# turn, and prints `diff -r` of the two trees (the "done in N s" lines differ).
set -u
REC=$(cd "$(dirname "$0")/../recordings" && pwd)
WORK=$(mktemp -d)
export TZ=UTC
outputs() {
  local B="node $1/bin/svc-snapshot.js" O=$WORK/out
  rm -rf "$O" && mkdir -p "$O"
  for n in platform-3.13.8 platform-3.14.1 platform-3.14.1-night2 platform-3.14.1-night3; do
    $B --replay "$REC/$n" --out-dir "$O/$n" --format csv,xlsx,html --findings --quiet >"$O/$n.stdout" 2>&1
    $B --replay "$REC/$n" --out-dir "$O/$n-vms" --include vms --format csv --quiet >/dev/null 2>&1
  done
  $B diff "$O/platform-3.14.1" "$O/platform-3.14.1-night2" --json >"$O/diff12.json" 2>/dev/null
  $B diff "$O/platform-3.14.1" "$O/platform-3.14.1-night3" >"$O/diff13.txt" 2>/dev/null
  $B findings "$O/platform-3.14.1-night3" --json >"$O/findings3.json" 2>/dev/null
  $B findings "$O/platform-3.14.1-night3" >"$O/findings3.txt" 2>/dev/null
  $B convert "$O/platform-3.14.1-night2" --out-dir "$O/conv" --format csv,xlsx >/dev/null 2>&1
  $B history load "$O/platform-3.14.1" "$O/platform-3.14.1-night2" "$O/platform-3.14.1-night3" --history "$O/h.db" --quiet >/dev/null 2>&1
  $B history as-of 2026-11-27 --history "$O/h.db" --out-dir "$O/asof" >/dev/null 2>&1
  $B report "$O/platform-3.14.1-night3" --previous "$O/platform-3.14.1-night2" --history "$O/h.db" >/dev/null 2>&1
  mv "$O" "$WORK/$2"
}
outputs "$(cd "$1" && pwd)" a
outputs "$(cd "$2" && pwd)" b
diff -r "$WORK/a" "$WORK/b"
echo "same-bytes: compared in $WORK"
