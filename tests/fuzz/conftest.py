"""The fuzz suite (issue 15; explorer request bodies are fuzzed in
``tests/explorer/test_explorer_limits.py``): bounded in ``make test`` by the ``ci`` profile;
``HYPOTHESIS_PROFILE=fuzz`` runs the long mode. The counts of inputs tried (and of the faults
``tests/train/test_checkpoint_durability.py`` injects) are printed at the end of the session
by ``tests/conftest.py`` and, with ``ATTNKIT_FUZZ_REPORT=PATH``, written there as JSON."""
