#!/usr/bin/env bash
# The GPU check of issue 34: on one CUDA device, in under 8 minutes, from the repository root.
#   1. the tests marked gpu (every task trains, resumes bit for bit after a SIGKILL and
#      predicts on cuda; fp16 and bf16; load_run(device="cuda"); GPU greedy = CPU greedy);
#   2. training throughput of each task, CPU against GPU (benchmarks/device_throughput.py);
#   3. torchrun --nproc_per_node=1 trains on the GPU of its rank;
#   4. the Multi30k Transformer (configs/multi30k-transformer.yaml) trained on the GPU for the
#      minutes left, with the time to 35 validation BLEU, then test BLEU with beam 5.
# Everything is printed and kept in $OUT (default /tmp/gpu-check). Missing Python packages
# travel as wheels in .whl/ (see docs/benchmarks.md, "The GPU check"); Multi30k is read from
# $ATTNKIT_DATA_DIR (default .gpu-data, else ../shared/data). Without CUDA it says so and stops.
set -u
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
PY=${PY:-python3}
START=$(date +%s)
LIMIT=${GPU_CHECK_SECONDS:-500}
left() { echo $((LIMIT - ($(date +%s) - START))); }
say() { echo "== $* ($(($(date +%s) - START)) s)"; }
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/gpu-check-site .whl/*.whl && export PYTHONPATH=/tmp/gpu-check-site
fi
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -z "${ATTNKIT_DATA_DIR:-}" ]; then
  if [ -d .gpu-data ]; then export ATTNKIT_DATA_DIR=$PWD/.gpu-data; else export ATTNKIT_DATA_DIR=../shared/data; fi
fi
say "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -2
$PY -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available()); sys.exit(0 if torch.cuda.is_available() else 3)" || { echo "no CUDA device: nothing to check"; exit 3; }

say "1. tests marked gpu"
timeout 170 $PY -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs -n 4 2>&1 | tee "$OUT/gpu-tests.log" | tail -40

say "2. training throughput, CPU against GPU"
timeout 80 $PY benchmarks/device_throughput.py --columns cpu:fp32 cuda:fp32 cuda:auto cuda:fp16 \
  --steps 12 --warmup 3 --repeats 2 --json "$OUT/throughput.json" 2>"$OUT/throughput.err" \
  || tail -5 "$OUT/throughput.err"

say "3. torchrun --nproc_per_node=1"
cat > "$OUT/tiny.yaml" <<'YAML'
name: tiny-torchrun
data: {generated_sizes: [300, 20, 20], vocab_size: 200, max_len: 60}
model: {embed_dim: 16, hidden_dim: 32}
train: {epochs: 1, max_tokens: 1500, valid_bleu: false}
YAML
timeout 40 torchrun --nproc_per_node=1 -m attnkit train "$OUT/tiny.yaml" -o "$OUT/torchrun-run" \
  --device cuda 2>&1 | grep -E "device|processes|error" | head -5
$PY -c "import json; print('torchrun run trained on', json.load(open('$OUT/torchrun-run/metrics.json'))['device'])"

MINUTES=$(awk -v s="$(left)" 'BEGIN { printf "%.1f", (s - 50) / 60 }')
say "4. Multi30k Transformer on the GPU for ${MINUTES} min"
if awk -v m="$MINUTES" 'BEGIN { exit !(m >= 0.5) }'; then
  timeout $(( $(left) - 10 )) $PY -m attnkit train configs/multi30k-transformer.yaml -o "$OUT/m30k" \
    --device cuda --set train.max_minutes=$MINUTES 2>"$OUT/m30k.err" | tail -3
  grep -E "device|precision|epoch .* valid" "$OUT/m30k.err" | head -4
  $PY tools/time_to_bleu.py "$OUT/m30k/metrics.json" 35
  timeout $(( $(left) )) $PY -m attnkit evaluate "$OUT/m30k" --split test --beam 5 --device cuda 2>&1 | head -4
fi
say "done"
