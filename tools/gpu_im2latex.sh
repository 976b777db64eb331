#!/usr/bin/env bash
# Issue 38's GPU run, from the repository root on one CUDA device beside 16 CPU cores:
# configs/im2latex-paper-gpu.yaml (the paper's widths, fresh formulas rendered in 12 DataLoader
# workers, bf16) for IM2LATEX_MINUTES of training (default 5, what one 10-minute device call
# allows), then a greedy read of the unchanged generated test split (500 formulas, scale
# quartiles in the JSON). Prints the images per second the workers and the GPU reached, so the
# full 1.2M-image run can be sized; keeps the run's log, metrics and evaluation in $OUT.
# Data: $ATTNKIT_DATA_DIR/im2latex-sample (default .gpu-data, which the device call carries:
# mkdir -p .gpu-data && cp -r ../shared/data/im2latex-sample .gpu-data/). A dry run on the CPU:
# IM2LATEX_DEVICE=cpu IM2LATEX_MINUTES=1 IM2LATEX_EXTRA="--set data.generated=[64,8,8]
# --set train.workers=1" bash tools/gpu_im2latex.sh
set -u
OUT=${OUT:-/tmp/gpu-im2latex}
mkdir -p "$OUT"
PY=${PY:-python3}
export ATTNKIT_DATA_DIR=${ATTNKIT_DATA_DIR:-$PWD/.gpu-data}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
DEVICE=${IM2LATEX_DEVICE:-cuda}
MINUTES=${IM2LATEX_MINUTES:-5}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1
$PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
rm -rf "$OUT/run"
start=$(date +%s)
timeout $(( ${MINUTES%.*} * 60 + 150 )) $PY -m attnkit train configs/im2latex-paper-gpu.yaml \
  -o "$OUT/run" --device "$DEVICE" --set train.max_minutes=$MINUTES --set train.tensorboard=false \
  ${IM2LATEX_EXTRA:-} 2>&1 | tee "$OUT/train.log" | grep -v "^ *$" | tail -15
end=$(date +%s)
echo "train wall: $((end - start)) s"
$PY - "$OUT/run/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
steps = sum(h["steps"] for h in m["history"])
secs = sum(h["train_seconds"] for h in m["history"])
print(f"{steps} updates of 64 in {secs:.0f} s: {64 * steps / secs:.0f} images/s")
PY
timeout 120 $PY -m attnkit evaluate "$OUT/run" --split test --beam 1 --device "$DEVICE" 2>&1 | tail -3
cp "$OUT/run/metrics.json" "$OUT/metrics.json" 2>/dev/null
cp "$OUT/run/evaluation-test.json" "$OUT/evaluation-test.json" 2>/dev/null
