"""attnkit's benchmarks, kept in the repository (the installed package holds none of them).

``python -m benchmarks SUITE`` runs a suite of :mod:`benchmarks.suites` (kernels, train and
decode against JoeyNMT, cost, tuning); results go to ``benchmarks/results/``.
``prepared_keys.py``, ``omp_wait_policy.sh``, ``rwth_aer.py``, ``shift_att.py``,
``eflomal_aer.py``, ``hard_attention.py`` and the others here are stand-alone scripts, run from
the repository root as ``python benchmarks/NAME.py``.
"""
