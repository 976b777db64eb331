"""attnkit's benchmarks: ``python -m benchmarks SUITE`` (the same as ``attnkit bench SUITE``).

The suites live in :mod:`attnkit.benchmarking`; results go to ``benchmarks/results/``.
``prepared_keys.py``, ``omp_wait_policy.sh`` and ``rwth_aer.py`` are stand-alone scripts.
"""
