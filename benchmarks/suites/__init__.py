"""The benchmark suites behind ``python -m benchmarks SUITE`` (run from the repository root).

Suites: ``kernels`` (attention kernels vs PyTorch), ``train`` (training tokens/s vs JoeyNMT),
``decode`` (sentences/s vs JoeyNMT), ``cost`` (self-attention vs LSTM over length and width),
``tuning`` (malloc thresholds and OpenMP wait policy). Each writes one JSON report
(:mod:`.report`) and prints a table. See docs/benchmarks.md. They live in the repository,
not in the installed package: they time attnkit against peers (JoeyNMT in its own venv) and
write into ``benchmarks/results/``.
"""

from benchmarks.suites.report import Comparison, Report, Result, check_schema, print_table
from benchmarks.suites.runner import SUITES, run_suite

__all__ = ["SUITES", "Comparison", "Report", "Result", "check_schema", "print_table", "run_suite"]
