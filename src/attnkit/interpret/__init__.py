"""Interpretation tools: step-by-step explanations of attention (``explain``)."""
