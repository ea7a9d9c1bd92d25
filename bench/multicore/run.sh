#!/usr/bin/env bash
# The multicore device against the host device on a compute-bound parallel loop (issue 4's
# goal: 1.8x or more on a 2-core machine). Both runs print the same checksum; the loop's own
# time (clock() around it) is compared, best of $RUNS (default 5) each.
#
#   bench/multicore/run.sh                  # target/release/acc
#   ACC=path/to/acc RUNS=7 bench/multicore/run.sh --set n=800000
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
acc="${ACC:-${CARGO_TARGET_DIR:-$root/target}/release/acc}"
runs="${RUNS:-5}"
cores="$(nproc)"

best() { # device, extra args → best loop time; checks the checksum is the same each run
    local device=$1; shift
    local best="" sum=""
    for _ in $(seq "$runs"); do
        out="$("$acc" "$here/compute.acc" --device "$device" "$@")"
        s="$(grep checksum <<<"$out")"
        t="$(grep '^time' <<<"$out" | cut -d' ' -f2)"
        [[ -z "$sum" ]] && sum="$s"
        [[ "$s" == "$sum" ]] || { echo "checksum changed between runs: $s vs $sum" >&2; exit 1; }
        if [[ -z "$best" ]] || awk "BEGIN{exit !($t < $best)}"; then best="$t"; fi
    done
    echo "$best $sum"
}

read -r host hsum <<<"$(best host "$@" | cut -d' ' -f1,3)"
read -r multi msum <<<"$(best multicore "$@" | cut -d' ' -f1,3)"
[[ "$hsum" == "$msum" ]] || { echo "host and multicore disagree: $hsum vs $msum" >&2; exit 1; }
echo "cores: $cores  checksum: $hsum"
printf "host      %.4f s\nmulticore %.4f s\nspeed-up  %.2fx\n" "$host" "$multi" \
    "$(awk "BEGIN{print $host / $multi}")"
