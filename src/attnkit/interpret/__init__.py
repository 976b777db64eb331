"""Seeing attention: the step-by-step walk-through (explain), recorded attention and its
structure (record, structure), pictures (heatmap), rollout and flow (rollout), word
alignments (alignments) and the HTML report (report)."""
