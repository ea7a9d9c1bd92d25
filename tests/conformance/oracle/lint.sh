#!/usr/bin/env bash
# Static checks of the conformance suite that need no JIT: every script without
# `// expect-error:` passes `acc check` and has a `.out`; every `error_compile_*` script fails
# `acc check` with its expected text; every `error_runtime_*` script passes `acc check` and has
# no `.out`. Usage: tests/conformance/oracle/lint.sh [path/to/acc]
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
acc="${1:-${CARGO_TARGET_DIR:-target}/debug/acc}"
fail=0
n=0
for f in "$here"/*.acc; do
    n=$((n + 1))
    name="$(basename "$f" .acc)"
    first="$(head -n 1 "$f")"
    out="$("$acc" check "$f" 2>&1)"
    rc=$?
    case "$first" in
    "// expect-error: "*)
        text="${first#// expect-error: }"
        [ -e "$here/$name.out" ] && { echo "$name: error case with a .out"; fail=1; }
        case "$name" in
        error_compile_*)
            if [ $rc -ne 2 ] || ! grep -qF -- "$text" <<<"$out"; then
                echo "$name: expected compile error containing: $text (rc=$rc)"; fail=1
            fi ;;
        *)
            [ $rc -eq 0 ] || { echo "$name: run-time error case does not pass acc check"; echo "$out" | grep '×'; fail=1; } ;;
        esac ;;
    *)
        [ -e "$here/$name.out" ] || { echo "$name: no .out"; fail=1; }
        [ $rc -eq 0 ] || { echo "$name: does not pass acc check"; echo "$out" | grep '×'; fail=1; } ;;
    esac
done
echo "$n scripts checked"
exit $fail
