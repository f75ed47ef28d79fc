#!/usr/bin/env bash
# One call on the lent GPU: every GPU test, then a short `kernelab run`, logs under $OUT,
# a summary table last. Usage (device tool): bash scripts/gpu_check.sh [pytest -k expr]
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/kernelab-out}"; mkdir -p "$OUT"
export KERNELAB_CACHE_DIR="${KERNELAB_CACHE_DIR:-/tmp/kernelab-cache}"
KEXPR="${1:-}"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$OUT/gpu.txt" 2>&1

python3 -m pytest -m gpu -q -p no:cacheprovider ${KEXPR:+-k "$KEXPR"} --junitxml="$OUT/gpu-tests.xml" tests 2>&1 | tee "$OUT/gpu-tests.log"
tests_rc=${PIPESTATUS[0]}

run_rc=skipped
if [ -z "$KEXPR" ] && python3 -c "import kernelab.cli" 2>/dev/null; then
  python3 -m kernelab run --quick --results-dir "$OUT" 2>&1 | tee "$OUT/run-quick.log"
  run_rc=${PIPESTATUS[0]}
fi

echo
echo "== summary ($(cat "$OUT/gpu.txt"))"
printf "%-28s %s\n" "gpu tests (pytest -m gpu)" "$(grep -E '^[0-9]+ (passed|failed)|passed|failed' "$OUT/gpu-tests.log" | tail -1) rc=$tests_rc"
printf "%-28s %s\n" "kernelab run --quick" "rc=$run_rc"
printf "%-28s %s\n" "wall" "$(( $(date +%s) - start )) s"
[ "$tests_rc" = 0 ] && { [ "$run_rc" = 0 ] || [ "$run_rc" = skipped ]; }
