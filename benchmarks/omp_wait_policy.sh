#!/usr/bin/env bash
# The RNN training step of prepared_keys.py under OpenMP's ACTIVE (spin) and PASSIVE wait policies.
# The policy is read when the process starts, so the two alternate as whole processes, twice.
#   bash benchmarks/omp_wait_policy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
for round in 1 2; do
  for policy in ACTIVE PASSIVE; do
    printf 'round %s, OMP_WAIT_POLICY=%s: ' "$round" "$policy"
    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=$policy "$PY" benchmarks/prepared_keys.py --repeats 5 \
      | grep "projected once"
  done
done
