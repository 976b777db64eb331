"""Experiments that train several models and compare them: the bottleneck and the demo."""
