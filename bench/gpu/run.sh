#!/usr/bin/env bash
# GPU benchmark of issue 5: saxpy (f32, 2^28), dot (f64, 2^27), the guide's Jacobi (4096^2, 1000
# iterations, data region), CSR SpMV of the 27-point stencil (nx = 100: 26.5M nonzeros) in the
# tutorial's three schedules, and 10,000 waited-for launches of a tiny kernel over present data,
# in acc, CUDA C (nvcc -O3 -arch=sm_90) and CuPy, side by side, with each one's bandwidth against
# the measured device-to-device copy bandwidth, and the time to a first saxpy result from process
# start. `multi` (issue 19): saxpy (f32, 2^30) and Jacobi (8192^2 and 4096^2) written with
# `devices(all)`, on one GPU and on two (and on each count of $MULTI_GPUS, default "1 2"), with
# the speed-up over one GPU against its limit, and beside it the hand-written CUDA Jacobi on the
# same GPUs (`bench jacobi_multi`). Run it on the GPU machine from anywhere:
#
#   bench/gpu/run.sh                  # full sizes (about a minute for nvcc and CuPy together)
#   bench/gpu/run.sh --quick          # small sizes: checks that every version gives the same checksum
#   bench/gpu/run.sh saxpy spmv       # some benchmarks only (d2d saxpy dot jacobi spmv launch first multi)
#   ACC=path/to/acc ACC_TIMEOUT=60 bench/gpu/run.sh
#
# ACC (default .gpu/acc in the repository root) runs with --device $ACC_DEVICE (default nvidia).
# `multi` picks the GPUs with CUDA_VISIBLE_DEVICES (the first k of those already visible) and
# sets ACC_EMULATED_DEVICES=k too, so that `ACC_DEVICE=emulated run.sh --quick multi` checks it
# without a GPU (the CUDA baseline runs only with ACC_DEVICE=nvidia).
# A missing acc, nvcc or CuPy gives `-` in its columns. Every version prints lines
#   name=<bench> impl=<nvcc|cupy|acc> time_ms=<best> gbps=<GB/s or -> check=<checksum> [k=v ...]
# which are echoed as they come, then tabulated. Each run is cut off after $TIMEOUT seconds
# (default 300; $ACC_TIMEOUT for acc, default the same).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
acc="${ACC:-$root/.gpu/acc}"
acc_device="${ACC_DEVICE:-nvidia}"
timeout_s="${TIMEOUT:-300}"
acc_timeout_s="${ACC_TIMEOUT:-$timeout_s}"
python="${PYTHON:-python3}"

quick=0
selected=()
for a in "$@"; do
    case "$a" in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) selected+=("$a") ;;
    esac
done
want() { [ ${#selected[@]} -eq 0 ] || [[ " ${selected[*]} " == *" $1 "* ]]; }

# Sizes: saxpy n, dot n, Jacobi n and iterations, SpMV nx, launches; repetitions (best of), Jacobi
# solves (best of), launch rounds (best of), D2D copy bytes.
if [ $quick -eq 1 ]; then
    saxpy_n=1000003 dot_n=1000001 jac_n=256 jac_it=100 spmv_nx=20 launches=1000
    reps=3 jac_reps=1 rounds=2 d2d_bytes=$((64 << 20))
else
    saxpy_n=$((1 << 28)) dot_n=$((1 << 27)) jac_n=4096 jac_it=1000 spmv_nx=100 launches=10000
    reps=10 jac_reps=3 rounds=3 d2d_bytes=$((1 << 30))
fi
# multi: saxpy n and repetitions; the two Jacobi sizes with their iterations (about 1.5 s per
# solve on one H100 each: 32 bytes per point per iteration at about 2.3 TB/s) and solves.
if [ $quick -eq 1 ]; then
    msaxpy_n=1000003 msaxpy_reps=3 mjac="256:100 130:100" mjac_reps=1
else
    msaxpy_n=$((1 << 30)) msaxpy_reps=10 mjac="8192:1500 4096:6000" mjac_reps=2
fi
multi_gpus="${MULTI_GPUS:-1 2}"
first_n=$((1 << 20))

build="$(mktemp -d "${TMPDIR:-/tmp}/acc-bench-gpu.XXXXXX")"
trap 'rm -rf "$build"' EXIT
results="$build/results"
: >"$results"
multi_results="$build/multi"
: >"$multi_results"
into="$results" # where run() keeps result lines

# --- tools --------------------------------------------------------------------------------------

echo "== GPU benchmark ($([ $quick -eq 1 ] && echo quick || echo full) sizes), $(date -u '+%Y-%m-%d %H:%M UTC')"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

have_nvcc=0
if command -v nvcc >/dev/null; then
    echo "nvcc: $(nvcc --version | grep -o 'release [0-9.]*')"
    if nvcc -O3 -arch=sm_90 -o "$build/bench" "$here/cuda/bench.cu"; then
        have_nvcc=1
    else
        echo "note: building cuda/bench.cu failed; no nvcc column"
    fi
else
    echo "note: nvcc not found; no nvcc column"
fi

have_cupy=0
if cupy_version="$("$python" -c 'import cupy, cupyx.scipy.sparse; print(cupy.__version__)' 2>/dev/null)"; then
    have_cupy=1
    echo "cupy: $cupy_version"
else
    echo "note: CuPy not importable by $python; no cupy column"
fi

have_acc=0
if [ -x "$acc" ]; then
    printf 'print(40 + 2)\n' >"$build/probe.acc"
    if [ "$("$acc" "$build/probe.acc" --device "$acc_device" 2>/dev/null)" = "42" ]; then
        have_acc=1
        echo "acc: $acc --device $acc_device"
    else
        echo "note: $acc cannot run a script on --device $acc_device; no acc column"
    fi
else
    echo "note: $acc not found; no acc column"
fi

# --- running ------------------------------------------------------------------------------------

# run IMPL LABEL COMMAND...: runs one version under its time limit; its result lines are echoed
# and kept, a failure is reported with the start of its standard error.
run() {
    local impl="$1" label="$2"
    shift 2
    local limit="$timeout_s"
    [ "$impl" = acc ] && limit="$acc_timeout_s"
    timeout "$limit" "$@" >"$build/out" 2>"$build/err"
    local rc=$?
    grep '^name=' "$build/out" | tee -a "$into"
    if [ $rc -eq 124 ]; then
        echo "$label/$impl: cut off after ${limit}s"
    elif [ $rc -ne 0 ]; then
        echo "$label/$impl: exit status $rc"
        head -c 2000 "$build/err" | head -8 | sed 's/^/    /'
    fi
}

acc_run() { # BENCH --set ...: the acc version of BENCH
    local b="$1"
    shift
    run acc "$b" "$acc" "$here/acc/$b.acc" --device "$acc_device" "$@"
}

if want d2d || want multi; then
    [ $have_nvcc -eq 1 ] && run nvcc d2d "$build/bench" d2d "$d2d_bytes" "$reps"
    [ $have_cupy -eq 1 ] && run cupy d2d "$python" "$here/cupy_bench.py" d2d "$d2d_bytes" "$reps"
fi

if want saxpy; then
    [ $have_nvcc -eq 1 ] && run nvcc saxpy "$build/bench" saxpy "$saxpy_n" "$reps"
    [ $have_cupy -eq 1 ] && run cupy saxpy "$python" "$here/cupy_bench.py" saxpy "$saxpy_n" "$reps"
    [ $have_acc -eq 1 ] && acc_run saxpy --set n="$saxpy_n" --set reps="$reps"
fi

if want dot; then
    [ $have_nvcc -eq 1 ] && run nvcc dot "$build/bench" dot "$dot_n" "$reps"
    [ $have_cupy -eq 1 ] && run cupy dot "$python" "$here/cupy_bench.py" dot "$dot_n" "$reps"
    [ $have_acc -eq 1 ] && acc_run dot --set n="$dot_n" --set reps="$reps"
fi

if want jacobi; then
    [ $have_nvcc -eq 1 ] && run nvcc jacobi "$build/bench" jacobi "$jac_n" "$jac_it" "$jac_reps"
    [ $have_cupy -eq 1 ] && run cupy jacobi "$python" "$here/cupy_bench.py" jacobi "$jac_n" "$jac_it" "$jac_reps"
    [ $have_acc -eq 1 ] && acc_run jacobi --set n="$jac_n" --set iter_max="$jac_it" --set reps="$jac_reps"
    [ $have_acc -eq 1 ] && acc_run jacobi_kernels --set n="$jac_n" --set iter_max="$jac_it" --set reps="$jac_reps"
fi

if want spmv; then
    [ $have_nvcc -eq 1 ] && run nvcc spmv "$build/bench" spmv "$spmv_nx" "$reps"
    [ $have_cupy -eq 1 ] && run cupy spmv "$python" "$here/cupy_bench.py" spmv "$spmv_nx" "$reps"
    [ $have_acc -eq 1 ] && acc_run spmv --set nx="$spmv_nx" --set reps="$reps"
fi

if want launch; then
    [ $have_nvcc -eq 1 ] && run nvcc launch "$build/bench" launch "$launches" "$rounds"
    [ $have_cupy -eq 1 ] && run cupy launch "$python" "$here/cupy_bench.py" launch "$launches" "$rounds"
    [ $have_acc -eq 1 ] && acc_run launch --set launches="$launches" --set rounds="$rounds"
fi

# multi: each devices(all) script on the first k GPUs for each k of $multi_gpus (the GPUs already
# visible, else every GPU nvidia-smi lists); k = 1 is the baseline of the speed-ups.
# The CUDA Jacobi (`bench jacobi_multi`, impl=cuda-<k>gpu) runs on the same GPUs beside acc's,
# twice: in order, and with each GPU's boundary rows copied and sent first (JACOBI_OVERLAP=edges,
# what acc does where it pays); the table takes the faster of the two.
if want multi && { [ $have_acc -eq 1 ] || [ $have_nvcc -eq 1 ]; }; then
    into="$multi_results"
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        gpus="$CUDA_VISIBLE_DEVICES"
    elif command -v nvidia-smi >/dev/null; then
        gpus="$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)"
    else
        gpus=""
    fi
    IFS=, read -r -a gpu_list <<<"$gpus"
    for k in $multi_gpus; do
        if [ "$acc_device" = nvidia ] && [ "${#gpu_list[@]}" -lt "$k" ]; then
            echo "multi: $k GPUs wanted, ${#gpu_list[@]} visible; skipped"
            continue
        fi
        visible="$(IFS=,; echo "${gpu_list[*]:0:$k}")"
        on_k=(env CUDA_VISIBLE_DEVICES="$visible" ACC_EMULATED_DEVICES="$k")
        [ $have_acc -eq 1 ] && run acc "saxpy_multi/${k}gpu" "${on_k[@]}" "$acc" "$here/acc/saxpy_multi.acc" \
            --device "$acc_device" --set n="$msaxpy_n" --set reps="$msaxpy_reps"
        for size_it in $mjac; do
            [ $have_acc -eq 1 ] && run acc "jacobi_multi/${k}gpu" "${on_k[@]}" "$acc" "$here/acc/jacobi_multi.acc" \
                --device "$acc_device" --set n="${size_it%%:*}" --set iter_max="${size_it##*:}" --set reps="$mjac_reps"
            for overlap in none edges; do
                [ $have_nvcc -eq 1 ] && [ "$acc_device" = nvidia ] && [ "${#gpu_list[@]}" -ge "$k" ] &&
                    run nvcc "jacobi_multi/${k}gpu/$overlap" env CUDA_VISIBLE_DEVICES="$visible" \
                        JACOBI_OVERLAP="$overlap" "$build/bench" jacobi_multi \
                        "${size_it%%:*}" "${size_it##*:}" "$mjac_reps"
            done
        done
    done
    into="$results"
fi

# Time to first result: wall time of a whole process that runs a 2^20-element saxpy and prints
# it, three times in a row; the first run is the cold one.
declare -A first
now_ms() { date +%s%3N; }
time_first() { # IMPL COMMAND...
    local impl="$1" t0 t1 times=()
    shift
    for _ in 1 2 3; do
        t0=$(now_ms)
        if ! timeout 60 "$@" >/dev/null 2>"$build/err"; then
            echo "first/$impl: failed"
            head -5 "$build/err" | sed 's/^/    /'
            return
        fi
        t1=$(now_ms)
        times+=($((t1 - t0)))
    done
    first[$impl]="${times[0]} ${times[1]} ${times[2]}"
    echo "name=first impl=$impl wall_ms=${times[0]},${times[1]},${times[2]}"
}
if want first; then
    [ $have_nvcc -eq 1 ] && time_first nvcc "$build/bench" first "$first_n"
    [ $have_cupy -eq 1 ] && time_first cupy "$python" "$here/cupy_bench.py" first "$first_n"
    [ $have_acc -eq 1 ] && time_first acc "$acc" "$root/examples/saxpy.acc" --device "$acc_device" --set n="$first_n"
fi

# --- table --------------------------------------------------------------------------------------

echo
awk -v impls="nvcc cupy acc" '
function field(line, key,    i, n, parts, kv) {
    n = split(line, parts, " ")
    for (i = 1; i <= n; i++) {
        if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
    }
    return ""
}
function group(name) { return name ~ /^spmv_/ ? "spmv" : (name ~ /^jacobi/ ? "jacobi" : name) }
{
    name = field($0, "name"); impl = field($0, "impl")
    key = name SUBSEP impl
    t[key] = field($0, "time_ms"); g[key] = field($0, "gbps"); c[key] = field($0, "check")
    us[key] = field($0, "us_per_launch")
    if (!(name in seen)) { seen[name] = 1; order[++nnames] = name }
    # every implementation of a benchmark (all SpMV schedules together) must give one checksum
    gr = group(name)
    if (c[key] != "-" && c[key] != "") {
        if (!(gr in ref)) ref[gr] = c[key]
        else if (ref[gr] != c[key]) bad[gr] = 1
    }
}
function fmt_ms(v) { return v == "" ? "-" : sprintf("%.3f", v) }
function num(v) { return v != "" && v != "-" }
END {
    ni = split(impls, im, " ")
    bw = num(g["d2d" SUBSEP "nvcc"]) ? g["d2d" SUBSEP "nvcc"] : g["d2d" SUBSEP "cupy"]
    printf "%-14s %10s %10s %10s %9s %9s %9s %9s %7s %7s %7s  %s\n", "benchmark", "nvcc ms", "cupy ms", \
        "acc ms", "acc/nvcc", "nvcc GB/s", "cupy GB/s", "acc GB/s", "nvcc %", "cupy %", "acc %", "checksums"
    for (k = 1; k <= nnames; k++) {
        name = order[k]
        if (name == "d2d" || name == "launch") continue
        line = sprintf("%-14s", name)
        for (i = 1; i <= ni; i++) line = line sprintf(" %10s", fmt_ms(t[name SUBSEP im[i]]))
        tn = t[name SUBSEP "nvcc"]; ta = t[name SUBSEP "acc"]
        line = line sprintf(" %9s", (num(tn) && num(ta) && ta + 0 > 0) ? sprintf("%.2fx", tn / ta) : "-")
        for (i = 1; i <= ni; i++) {
            v = g[name SUBSEP im[i]]
            line = line sprintf(" %9s", num(v) ? v : "-")
        }
        for (i = 1; i <= ni; i++) {
            v = g[name SUBSEP im[i]]
            line = line sprintf(" %7s", (num(v) && num(bw)) ? sprintf("%.1f%%", 100 * v / bw) : "-")
        }
        gr = group(name)
        line = line "  " ((gr in bad) ? "DIFFER" : ((gr in ref) ? "agree" : "-"))
        print line
    }
    print ""
    printf "acc/nvcc is the speed ratio (nvcc time / acc time); %% is of the measured D2D copy bandwidth.\n"
    printf "device-to-device copy (cudaMemcpy, bytes read + written): nvcc %s GB/s, cupy %s GB/s\n", \
        num(g["d2d" SUBSEP "nvcc"]) ? g["d2d" SUBSEP "nvcc"] : "-", num(g["d2d" SUBSEP "cupy"]) ? g["d2d" SUBSEP "cupy"] : "-"
    line = "launch + stream synchronize, tiny kernel over present data (us per launch):"
    for (i = 1; i <= ni; i++) {
        v = us["launch" SUBSEP im[i]]
        line = line sprintf(" %s %s", im[i], v == "" ? "-" : v)
    }
    un = us["launch" SUBSEP "nvcc"]; ua = us["launch" SUBSEP "acc"]
    if (un != "" && ua != "" && un + 0 > 0) line = line sprintf("; acc/nvcc %.2fx (goal <= 2x)", ua / un)
    print line
    jp = t["jacobi" SUBSEP "acc"]; jk = t["jacobi_kernels" SUBSEP "acc"]
    if (num(jp) && num(jk) && jp + 0 > 0)
        printf "acc Jacobi, kernels (no loop clauses) / parallel loop time: %.3fx (goal <= 1.05x)\n", jk / jp
    if ("launch" in bad) print "launch checksums DIFFER"
    for (gr in bad) {
        if (gr == "launch") continue
        printf "checksums of %s differ:\n", gr
        for (k = 1; k <= nnames; k++)
            if (group(order[k]) == gr)
                for (i = 1; i <= ni; i++)
                    if ((order[k] SUBSEP im[i]) in c) printf "    %s %s: %s\n", order[k], im[i], c[order[k] SUBSEP im[i]]
    }
}' "$results"

# The multi table: per benchmark and size, each GPU count's time against one GPU's (acc's and the
# CUDA baseline's), acc's time against CUDA's at that count, and the limit: the bytes acc moves
# (gbps x time) at k times the measured D2D bandwidth of one GPU.
if want multi; then
    echo
    # the D2D copy bandwidth of one GPU: nvcc's, else CuPy's
    bw="$(awk '/^name=d2d / {
        impl = ""; v = ""
        for (i = 1; i <= NF; i++) if ($i ~ /^impl=/) impl = substr($i, 6); else if ($i ~ /^gbps=/) v = substr($i, 6)
        if (v != "" && v != "-" && (impl == "nvcc" || bw == "")) bw = v
    } END { print bw }' "$results")"
    awk -v bw="$bw" -v quick=$quick '
function field(line, key,    i, n, parts) {
    n = split(line, parts, " ")
    for (i = 1; i <= n; i++) {
        if (index(parts[i], key "=") == 1) return substr(parts[i], length(key) + 2)
    }
    return ""
}
function num(v) { return v != "" && v != "-" }
function goal(name, size, k) {
    if (k != 2 || quick) return ""
    if (name == "saxpy_multi" && size == 1073741824) return 1.9
    if (name == "jacobi_multi" && size == 8192) return 1.9
    if (name == "jacobi_multi" && size == 4096) return 1.7
    return ""
}
function ratio(a, b) { return (num(a) && num(b) && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-" }
function ms(v) { return num(v) ? sprintf("%.3f", v) : "-" }
# impl=acc-<k>gpu or impl=cuda-<k>gpu: which (acc or cuda) by the part before the dash
{
    name = field($0, "name"); size = field($0, "size"); k = field($0, "gpus")
    who = field($0, "impl"); sub(/-.*/, "", who)
    if (who != "acc" && who != "cuda") next
    key = name " " size
    if (!(key in seen)) { seen[key] = 1; order[++nkeys] = key }
    if (!((key SUBSEP k) in gpus_seen)) { gpus_seen[key SUBSEP k] = 1; ks[key] = ks[key] " " k }
    # (the faster of two versions: the CUDA Jacobi in order and with edges first)
    tk = who SUBSEP key SUBSEP k
    if ((tk in t) && num(t[tk]) && field($0, "time_ms") + 0 >= t[tk] + 0) next
    t[tk] = field($0, "time_ms"); g[tk] = field($0, "gbps"); c[tk] = field($0, "check")
}
END {
    printf "%-24s %4s %10s %9s %8s %10s %8s %8s %10s %8s %-14s %s\n", "benchmark (size)", "GPUs", "acc ms", \
        "acc GB/s", "acc up", "cuda ms", "cuda up", "acc/cuda", "limit ms", "of limit", "goal (acc up)", "checksum"
    for (o = 1; o <= nkeys; o++) {
        key = order[o]; split(key, nk, " ")
        a1 = t["acc" SUBSEP key SUBSEP 1]; u1 = t["cuda" SUBSEP key SUBSEP 1]
        # the reference checksum: acc on one GPU, else CUDA on one GPU
        ref = c["acc" SUBSEP key SUBSEP 1]
        if (!num(ref)) ref = c["cuda" SUBSEP key SUBSEP 1]
        nks = split(substr(ks[key], 2), kl, " ")
        for (i = 1; i <= nks; i++) {
            k = kl[i]
            ta = t["acc" SUBSEP key SUBSEP k]; ga = g["acc" SUBSEP key SUBSEP k]; ca = c["acc" SUBSEP key SUBSEP k]
            tc = t["cuda" SUBSEP key SUBSEP k]; gc = g["cuda" SUBSEP key SUBSEP k]; cc = c["cuda" SUBSEP key SUBSEP k]
            up = ratio(a1, ta)
            # the limit: the bytes moved (acc counts them as the CUDA version does) at k x one GPU D2D
            lim = ""
            if (num(bw) && num(ga) && num(ta)) lim = ga * ta / (k * bw)
            else if (num(bw) && num(gc) && num(tc)) lim = gc * tc / (k * bw)
            gl = goal(nk[1], nk[2], k)
            ok = ""
            if (gl != "" && up != "-") ok = (a1 / ta >= gl) ? " met" : " NOT met"
            bad = (num(ca) && num(ref) && ca != ref) || (num(cc) && num(ref) && cc != ref)
            if (bad) chk = "DIFFER: acc " (num(ca) ? ca : "-") ", cuda " (num(cc) ? cc : "-") ", 1 GPU " ref
            else if (k != 1 && num(ref)) chk = "agrees with 1 GPU" (num(ca) && num(cc) ? " (acc and cuda)" : "")
            else chk = (num(ref) ? ref : "-") (num(ca) && num(cc) ? " (acc and cuda agree)" : "")
            printf "%-24s %4s %10s %9s %8s %10s %8s %8s %10s %8s %-14s %s\n", nk[1] " (" nk[2] ")", k, ms(ta), \
                num(ga) ? ga : "-", up, ms(tc), ratio(u1, tc), ratio(tc, ta), \
                lim == "" ? "-" : sprintf("%.3f", lim), (lim == "" || !num(ta)) ? "-" : sprintf("%.1f%%", 100 * lim / ta), \
                gl == "" ? "-" : (">=" gl "x" ok), chk
        }
    }
    print ""
    printf "acc up and cuda up are each one'"'"'s 1-GPU time over its k-GPU time (limit k); acc/cuda is the speed\n"
    printf "ratio at the same GPU count (CUDA time / acc time; cuda is bench jacobi_multi, hand-written, the\n"
    printf "faster of its in-order and edges-first versions).\n"
    printf "limit ms is the bytes moved at k x the measured D2D copy bandwidth of one GPU (%s GB/s; the halo\n", num(bw) ? bw : "-"
    printf "rows between GPUs are not counted); of limit is acc'"'"'s time against it.\n"
}' "$multi_results"
fi

if want first; then
    line="time to first result, saxpy 2^20 from process start (ms: cold, then two more runs):"
    for impl in nvcc cupy acc; do
        line+=" $impl ${first[$impl]:--}"
        [ "$impl" != acc ] && line+=";"
    done
    echo "$line (goal for acc: cold < 150 ms)"
fi
[ $quick -eq 1 ] && echo "(--quick: small sizes; the times mean little, the checksums must agree)"
exit 0
