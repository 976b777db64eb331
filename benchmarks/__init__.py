"""attnkit's benchmarks: ``python -m benchmarks SUITE`` (the same as ``attnkit bench SUITE``).

The suites live in :mod:`attnkit.benchmarking`; results go to ``benchmarks/results/``.
``prepared_keys.py``, ``omp_wait_policy.sh``, ``rwth_aer.py``, ``shift_att.py``,
``eflomal_aer.py`` and ``hard_attention.py`` are stand-alone scripts.
"""
