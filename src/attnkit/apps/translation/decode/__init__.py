"""A trained run put to use: loading it (run), decoding text (translate), each sentence's
attention as the core's record (records) and scoring a split (evaluate)."""
