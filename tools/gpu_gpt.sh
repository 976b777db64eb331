#!/usr/bin/env bash
# Issue 37's GPU target, from the repository root on one CUDA device: nanoGPT's default
# Shakespeare config (6 layers, 6 heads, 384 wide, context 256, batch 64, 5,000 updates,
# dropout 0.2) trained by attnkit (configs/shakespeare-gpt.yaml) and by nanoGPT itself
# (../shared/peers/nanogpt, unmodified, as a separate program), one after the other on the
# same GPU, each with torch.compile and bf16 (nanoGPT's defaults). Prints and keeps in $OUT:
# each one's log, wall time and validation loss.
# Data: $ATTNKIT_DATA_DIR/tinyshakespeare and $PEERS/nanogpt (default .gpu-data, which the
# device call carries: cp -r ../shared/data/tinyshakespeare ../shared/peers .gpu-data/).
# GPT_ITERS shortens both runs; ATTNKIT_EXTRA and NANOGPT_EXTRA add options (a dry run on the
# CPU: GPT_DEVICE=cpu GPT_ITERS=4 GPT_COMPILE=False ATTNKIT_EXTRA="--set train.eval_iters=1
# --set train.batch_size=2" NANOGPT_EXTRA="--eval_iters=1 --batch_size=2").
set -u
OUT=${OUT:-/tmp/gpu-gpt}
mkdir -p "$OUT"
PY=${PY:-python3}
DATA=${ATTNKIT_DATA_DIR:-$PWD/.gpu-data}
PEERS=${PEERS:-$PWD/.gpu-data/peers}
DEVICE=${GPT_DEVICE:-cuda}
ITERS=${GPT_ITERS:-5000}
COMPILE=${GPT_COMPILE:-True}
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/gpu-gpt-site .whl/*.whl && export PYTHONPATH=/tmp/gpu-gpt-site
fi
export PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export ATTNKIT_DATA_DIR=$DATA
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

epochs=$(( (ITERS + 249) / 250 ))
lower=$(echo "$COMPILE" | tr 'A-Z' 'a-z')
rm -rf "$OUT/attnkit-run"
echo "== attnkit: configs/shakespeare-gpt.yaml, $ITERS updates on $DEVICE, compile $lower"
start=$(date +%s)
timeout ${GPT_TIMEOUT:-270} $PY -m attnkit train configs/shakespeare-gpt.yaml -o "$OUT/attnkit-run" \
  --device "$DEVICE" --set train.epochs=$epochs --set train.compile=$lower \
  --set train.tensorboard=false ${ATTNKIT_EXTRA:-} 2>&1 | tee "$OUT/attnkit.log" | grep -v "^ *$" | tail -25
end=$(date +%s)
echo "attnkit wall: $((end - start)) s"
cp "$OUT/attnkit-run/metrics.json" "$OUT/attnkit-metrics.json" 2>/dev/null

echo "== nanoGPT: config/train_shakespeare_char.py, $ITERS updates on $DEVICE, compile $COMPILE"
start=$(date +%s)
SHARED_DATA=$DATA PYTHON=$PY timeout ${GPT_TIMEOUT:-270} bash "$PEERS/nanogpt/run_nanogpt.sh" \
  /tmp/nanogpt-work --device="$DEVICE" --compile="$COMPILE" --max_iters=$ITERS \
  --lr_decay_iters=$ITERS --log_interval=250 ${NANOGPT_EXTRA:-} 2>&1 | tee "$OUT/nanogpt.log" \
  | grep -E "step|iter .*: loss|parameters" | tail -30
end=$(date +%s)
echo "nanoGPT wall: $((end - start)) s"
