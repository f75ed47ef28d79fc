#!/usr/bin/env bash
# One call on the lent GPU: every GPU test, then a short `kernelab run`, logs under $OUT,
# a summary table last.
#   bash scripts/gpu_check.sh                 # all GPU tests + kernelab run --quick
#   bash scripts/gpu_check.sh tests/gpu/x.py  # some tests only (no run)
#   SKIP_TESTS=1 bash scripts/gpu_check.sh    # the run only
#   FULL=1 ...                                # `kernelab run` over every bench shape instead of --quick
#   LAB=1 ...                                 # also `kernelab lab run --all --quick --json` (the claims table)
#   RUN_ARGS="--op gemm" ...                  # extra arguments for kernelab run
#   SWEEP=lean17 SWEEP_OPS=gelu_bias ...      # also a sweep set of scripts/sweep_membound_s14.py, after
#                                             # the tests and the run (one device call for all three):
#                                             # $OUT/sweep-<set>.json and .log
#   SHARD=2/3 ...                             # the 2nd of 3 parts of tests/gpu (file i goes to part
#                                             # i mod 3 + 1); the run only with the last part. The
#                                             # whole suite took 544 s on the H200 (session 13), near
#                                             # the device tool's 600 s a call: 3 parts of ~80-230 s.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/kernelab-out}"; mkdir -p "$OUT"
export KERNELAB_CACHE_DIR="${KERNELAB_CACHE_DIR:-/tmp/kernelab-cache}"
# The GPU machine's copy of the tree has no git history: pass the commit in, e.g.
#   KERNELAB_GIT_COMMIT=$(git rev-parse HEAD) in the device command line.
export KERNELAB_GIT_COMMIT="${KERNELAB_GIT_COMMIT:-}"
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader > "$OUT/gpu.txt" 2>&1

targets=("$@")
last_shard=1
if [ -n "${SHARD:-}" ]; then
  k=${SHARD%/*}; n=${SHARD#*/}
  if ! [[ "$k" =~ ^[0-9]+$ && "$n" =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
    echo "SHARD=$SHARD: give k/n with 1 <= k <= n, e.g. SHARD=1/3" >&2; exit 2
  fi
  mapfile -t all < <(ls tests/gpu/test_*.py | sort)
  targets=()
  for i in "${!all[@]}"; do [ $(( i % n )) -eq $(( k - 1 )) ] && targets+=("${all[$i]}"); done
  [ "$k" -eq "$n" ] || last_shard=0
fi

tests_rc=skipped
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout_opt=""
  python3 -c "import pytest_timeout" 2>/dev/null && timeout_opt="--timeout=${TEST_TIMEOUT:-300}"
  python3 -m pytest -m gpu -q -p no:cacheprovider $timeout_opt -rfE --junitxml="$OUT/gpu-tests.xml" \
    "${targets[@]:-tests}" 2>&1 | tee "$OUT/gpu-tests.log"
  tests_rc=${PIPESTATUS[0]}
fi

run_rc=skipped
run_kind=$([ -n "${FULL:-}" ] && echo full || echo quick)
if [ $# -eq 0 ] && [ -z "${SKIP_RUN:-}" ] && [ "$last_shard" = 1 ]; then
  # COLUMNS: the table goes to a log, not a terminal; keep it readable.
  COLUMNS=200 python3 -m kernelab run $([ -z "${FULL:-}" ] && echo --quick) ${RUN_ARGS:-} --results-dir "$OUT" \
    2>&1 | tee "$OUT/run-$run_kind.log"
  run_rc=${PIPESTATUS[0]}
fi

lab_rc=skipped
if [ -n "${LAB:-}" ]; then
  # one JSON of all experiments in $OUT (the per-experiment files go elsewhere: the device tool returns
  # a limited number of files, and 16 more crowded out the results JSON once)
  python3 -m kernelab lab run --all --quick --json --results-dir /tmp/kernelab-lab > "$OUT/lab.json" 2> "$OUT/lab.stderr"
  lab_rc=$?
fi

sweep_rc=skipped
if [ -n "${SWEEP:-}" ]; then
  SWEEP_SET="$SWEEP" python3 scripts/sweep_membound_s14.py ${SWEEP_OPS:+--ops "$SWEEP_OPS"} \
    --out "$OUT/sweep-$SWEEP.json" 2>&1 | tee "$OUT/sweep-$SWEEP.log"
  sweep_rc=${PIPESTATUS[0]}
fi

echo
echo "== summary: $(cat "$OUT/gpu.txt")"
printf "%-26s %s\n" "gpu tests (pytest -m gpu)" "$(grep -E '(passed|failed|error)' "$OUT/gpu-tests.log" 2>/dev/null | tail -1) rc=$tests_rc"
printf "%-26s %s\n" "kernelab run ($run_kind)" "rc=$run_rc $(grep -E '^results:' "$OUT/run-$run_kind.log" 2>/dev/null | tail -1)"
printf "%-26s %s\n" "" "$(grep -E '^where the time went' "$OUT/run-$run_kind.log" 2>/dev/null | tail -1)"
printf "%-26s %s\n" "kernelab lab --all --quick" "rc=$lab_rc $(python3 -c 'import json,sys,collections; d=json.load(open(sys.argv[1])); print(dict(collections.Counter(r["verdict"]["status"] for r in d)))' "$OUT/lab.json" 2>/dev/null)"
printf "%-26s %s\n" "sweep ${SWEEP:-}" "rc=$sweep_rc"
printf "%-26s %s\n" "wall" "$(( $(date +%s) - start )) s"
[ "$tests_rc" = 0 -o "$tests_rc" = skipped ] && [ "$run_rc" = 0 -o "$run_rc" = skipped ] && [ "$lab_rc" = 0 -o "$lab_rc" = skipped ] && [ "$sweep_rc" = 0 -o "$sweep_rc" = skipped ]
