#!/usr/bin/env bash
# Issue #36's measurements on a host with a CUDA GPU and many cores, as one prepared run (docs/performance.md):
#   1. the GPU precision tests (tests/lp/test_precision.py: kgeval's and PyKEEN's GPU ranks against float64);
#   2. the ranking engine on the CPU by thread count and block size (benchmarks/ranking_scaling.py), and where its
#      workers spend and lose their time by thread count (benchmarks/ranking_timeline.py; again with OpenMP's idle
#      threads sleeping instead of spinning, OMP_WAIT_POLICY=PASSIVE);
#   3. the ranking engine against its floor on all CPU cores and on the GPU (benchmarks/ranking.py), on the GPU also
#      with batches of a 4 GiB memory budget;
#   4. where the engine's time goes on the GPU, phase by phase (benchmarks/ranking_profile.py);
#   5. the GPU path end to end (tests/test_gpu_workflow.py: config/test.yaml's cut trained and ranked on CUDA).
# Run from the repository root: `bash benchmarks/gpu_host.sh [OUT]` (default benchmarks/out/gpu_host). Each step has
# its own time limit and a failed step does not stop the others; the exit status is that of the worst step.
# $STEPS, if set, names the steps to run (e.g. STEPS="ranking_scaling gpu_workflow"); $SCALING_ARGS adds arguments to
# ranking_scaling.py (e.g. SCALING_ARGS="--threads 16 --variants one_piece"); $BASELINE, if set, names a git revision
# or a folder holding its src/ whose engine ranking.py runs side by side with this tree's (--baseline).
# For a host without the packages or the data: wheels in .whl/ are installed into /tmp/site first, FB15k-237 is read
# from $KGEVAL_SHARED_DATA or from gzipped copies in .bench/data/fb15k237/, and $KGEVAL_TEST_WORKFLOW may name a finished
# CPU run of config/test.yaml to compare the GPU run with (else the test runs it first).
set -u
OUT=${1:-${OUT:-benchmarks/out/gpu_host}}
mkdir -p "$OUT"
status=0
LOG=$OUT/log.txt
step() {  # step NAME SECONDS COMMAND...: run with a time limit, its output appended to $OUT/log.txt, its end shown
    local name=$1 limit=$2
    shift 2
    [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $name "* ]] || return 0  # $STEPS: only the steps it names
    echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" | tee -a "$LOG"
    local start=$SECONDS
    timeout "$limit" "$@" >"$OUT/step.txt" 2>&1
    local rc=$?
    cat "$OUT/step.txt" >>"$LOG"
    tail -n 25 "$OUT/step.txt"
    rm -f "$OUT/step.txt"
    echo "=== $name: exit $rc after $((SECONDS - start))s" | tee -a "$LOG"
    [ "$rc" -gt "$status" ] && status=$rc
    return 0
}

if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ -z "${KGEVAL_SHARED_DATA:-}" ] && [ -d .bench/data/fb15k237 ]; then
    mkdir -p /tmp/kgeval-data/fb15k237
    for f in .bench/data/fb15k237/*.gz; do gunzip -c "$f" >"/tmp/kgeval-data/fb15k237/$(basename "$f" .gz)"; done
    export KGEVAL_SHARED_DATA=/tmp/kgeval-data
fi
export KGEVAL_SHARED_DATA=${KGEVAL_SHARED_DATA:-$PWD/../shared/data}
{
    nvidia-smi -L
    lscpu | grep -E "^Model name|^CPU\(s\)|L2 cache|L3 cache"
    python3 -c "import sys, torch, numpy, pandas, pykeen, snakemake; print(sys.version.split()[0], 'torch', torch.__version__,
'numpy', numpy.__version__, 'pandas', pandas.__version__, 'pykeen', pykeen.get_version(), 'snakemake',
snakemake.__version__, 'threads', torch.get_num_threads())"
} 2>&1 | tee "$LOG"

DATA=(--data-dir "$KGEVAL_SHARED_DATA")
BASE=(${BASELINE:+--baseline "$BASELINE"})
step precision 150 python3 -m pytest -q -p no:cacheprovider -s tests/lp/test_precision.py tests/lp/test_ranking.py -k gpu
# shellcheck disable=SC2086  # $SCALING_ARGS: more arguments of ranking_scaling.py, split on spaces
step ranking_scaling 200 python3 benchmarks/ranking_scaling.py "${DATA[@]}" --out "$OUT/ranking_scaling.tsv" ${SCALING_ARGS:-}
step ranking_timeline 150 python3 benchmarks/ranking_timeline.py "${DATA[@]}" --threads ${TIMELINE_THREADS:-1 4 8 16} \
    --out "$OUT/ranking_timeline.tsv"
step ranking_timeline_passive 90 env OMP_WAIT_POLICY=PASSIVE python3 benchmarks/ranking_timeline.py "${DATA[@]}" \
    --threads 16 --out "$OUT/ranking_timeline_passive.tsv"
step ranking_cpu 150 python3 benchmarks/ranking.py "${DATA[@]}" --subset 200 --repeats 3 "${BASE[@]}" \
    --out "$OUT/ranking_cpu.tsv"
step ranking_cuda 120 python3 benchmarks/ranking.py "${DATA[@]}" --device cuda --subset 1000 --repeats 5 "${BASE[@]}" \
    --out "$OUT/ranking_cuda.tsv"
step ranking_cuda_budget 120 python3 benchmarks/ranking.py "${DATA[@]}" --device cuda --subset 200 --repeats 5 \
    --memory-budget-mb 4096 "${BASE[@]}" --out "$OUT/ranking_cuda_budget.tsv"
step profile_cuda 150 python3 benchmarks/ranking_profile.py "${DATA[@]}" --device cuda --out "$OUT/ranking_profile_cuda.tsv"
step gpu_workflow 300 python3 -m pytest -q -p no:cacheprovider -s tests/test_gpu_workflow.py
exit $status
