#!/usr/bin/env bash
# Host benchmark of issue 3: the same four programs in acc, C (gcc -O2), Python 3 and Lua 5.4.
# Builds the C versions, checks that every version prints the same line, times each (best of
# $RUNS, default 3; a single run when the first one takes longer than $LONG seconds, default 10,
# which is the Python versions at full size), and prints times and ratios vs C and vs Python.
#
#   bench/host/run.sh                 # full sizes (C ~0.01-1 s each; Python several minutes in all)
#   bench/host/run.sh --quick         # small sizes: only checks that the versions agree
#   bench/host/run.sh jacobi fib      # some benchmarks only
#   ACC=path/to/acc RUNS=5 bench/host/run.sh
#
# acc runs with ACC_DEVICE_TYPE=host (one host thread, like the other versions); it is skipped
# with a message when target/release/acc is missing or cannot run scripts yet. lua5.4 is
# installed with apt-get when missing (skipped if that fails).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
acc="${ACC:-$target/release/acc}"
runs="${RUNS:-3}"
long="${LONG:-10}"

quick=0
selected=()
for a in "$@"; do
    case "$a" in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) selected+=("$a") ;;
    esac
done

# name | C/Python/Lua arguments | acc --set arguments   (full sizes, then --quick sizes)
full=(
    "jacobi|512 512 1000|--set n=512 --set m=512 --set iter_max=1000"
    "mandelbrot|2048 2048 255|--set width=2048 --set height=2048 --set max_iter=255"
    "nbody|5000000|--set steps=5000000"
    "fib|32|--set n=32"
)
small=(
    "jacobi|64 64 200|--set n=64 --set m=64 --set iter_max=200"
    "mandelbrot|200 200 255|--set width=200 --set height=200 --set max_iter=255"
    "nbody|1000|--set steps=1000"
    "fib|25|--set n=25"
)
if [ $quick -eq 1 ]; then benches=("${small[@]}"); else benches=("${full[@]}"); fi

build="$(mktemp -d "${TMPDIR:-/tmp}/acc-bench-host.XXXXXX")"
trap 'rm -rf "$build"' EXIT

# --- tools --------------------------------------------------------------------------------------

command -v gcc >/dev/null || { echo "gcc is needed to build the C versions" >&2; exit 2; }
for b in jacobi mandelbrot nbody fib; do
    gcc -O2 -ffp-contract=off -o "$build/$b" "$here/$b.c" -lm || { echo "building $b.c failed" >&2; exit 2; }
done

python="$(command -v python3 || true)"
[ -n "$python" ] || echo "note: python3 not found; skipping the Python versions"

lua="$(command -v lua5.4 || true)"
if [ -z "$lua" ]; then
    echo "note: lua5.4 not found; installing it with apt-get"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo_cmd="sudo"
    { $sudo_cmd apt-get install -y lua5.4 || { $sudo_cmd apt-get update && $sudo_cmd apt-get install -y lua5.4; }; } >/dev/null 2>&1
    lua="$(command -v lua5.4 || true)"
    [ -n "$lua" ] || echo "note: could not install lua5.4; skipping the Lua versions"
fi

acc_ok=0
if [ -x "$acc" ]; then
    printf 'print(40 + 2)\n' >"$build/probe.acc"
    if [ "$(ACC_DEVICE_TYPE=host "$acc" "$build/probe.acc" 2>/dev/null)" = "42" ]; then
        acc_ok=1
    else
        echo "note: $acc cannot run scripts yet; skipping the acc versions"
    fi
else
    echo "note: $acc not found (cargo build --release -p acc-repl); skipping the acc versions"
fi

# --- running and timing -------------------------------------------------------------------------

now() { date +%s.%N; }

# run_cmd LANG BENCH ARGS... : the command line of one version
cmd_for() {
    local lang="$1" b="$2" args="$3" sets="$4"
    case "$lang" in
    C) echo "$build/$b $args" ;;
    acc) echo "env ACC_DEVICE_TYPE=host $acc $here/$b.acc $sets" ;;
    Python) echo "$python $here/$b.py $args" ;;
    Lua) echo "$lua $here/$b.lua $args" ;;
    esac
}

langs=(C)
[ $acc_ok -eq 1 ] && langs+=(acc)
[ -n "$python" ] && langs+=(Python)
[ -n "$lua" ] && langs+=(Lua)

declare -A best
status=0
results=()
for entry in "${benches[@]}"; do
    IFS='|' read -r b args sets <<<"$entry"
    if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $b "* ]]; then
        continue
    fi
    expected=""
    for lang in "${langs[@]}"; do
        cmd="$(cmd_for "$lang" "$b" "$args" "$sets")"
        t0="$(now)"
        out="$($cmd 2>"$build/stderr")"
        rc=$?
        t1="$(now)"
        first="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
        if [ $rc -ne 0 ]; then
            echo "$b/$lang: exit status $rc"; sed 's/^/    /' "$build/stderr" | head -5
            status=1
            best["$b/$lang"]="fail"
            continue
        fi
        if [ -z "$expected" ]; then
            expected="$out"
            echo "$b: $out"
        elif [ "$out" != "$expected" ]; then
            echo "$b/$lang: output differs from C's:"
            echo "    C:     $expected"
            echo "    $lang: $out"
            status=1
        fi
        t="$first"
        if [ $quick -eq 0 ] && awk -v t="$first" -v l="$long" 'BEGIN { exit !(t <= l) }'; then
            for ((r = 2; r <= runs; r++)); do
                t0="$(now)"
                $cmd >/dev/null 2>&1
                t1="$(now)"
                t="$(awk -v a="$t0" -v b="$t1" -v t="$t" 'BEGIN { d = b - a; printf "%.3f", (d < t ? d : t) }')"
            done
        fi
        best["$b/$lang"]="$t"
    done
    results+=("$b")
done

# --- table --------------------------------------------------------------------------------------

echo
printf '%-11s %-7s %10s %9s %11s\n' benchmark version "best (s)" "vs C" "vs Python"
for b in "${results[@]}"; do
    c="${best[$b/C]:-}"
    p="${best[$b/Python]:-}"
    for lang in "${langs[@]}"; do
        t="${best[$b/$lang]:-}"
        [ -n "$t" ] || continue
        if [ "$t" = "fail" ]; then
            printf '%-11s %-7s %10s\n' "$b" "$lang" failed
            continue
        fi
        awk -v b="$b" -v l="$lang" -v t="$t" -v c="$c" -v p="$p" 'BEGIN {
            vc = (c != "" && c != "fail" && c > 0) ? sprintf("%.2fx", t / c) : "-"
            vp = (p != "" && p != "fail" && p > 0) ? sprintf("%.3fx", t / p) : "-"
            printf "%-11s %-7s %10.3f %9s %11s\n", b, l, t, vc, vp
        }'
    done
done
[ $quick -eq 1 ] && echo "(--quick: small sizes, single runs; the times mean little)"
[ $status -eq 0 ] && echo "all versions agree" || echo "SOME VERSIONS DISAGREE OR FAILED"
exit $status
