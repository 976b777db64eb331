"""The benchmark suite behind ``attnkit bench SUITE`` and ``python -m benchmarks SUITE``.

Suites: ``kernels`` (attention kernels vs PyTorch), ``train`` (training tokens/s vs JoeyNMT),
``decode`` (sentences/s vs JoeyNMT), ``cost`` (self-attention vs LSTM over length and width),
``tuning`` (malloc thresholds and OpenMP wait policy). Each writes one JSON report
(:mod:`.report`) and prints a table. See docs/benchmarks.md.
"""

from attnkit.benchmarking.report import Comparison, Report, Result, check_schema, print_table
from attnkit.benchmarking.runner import SUITES, run_suite

__all__ = ["SUITES", "Comparison", "Report", "Result", "check_schema", "print_table", "run_suite"]
