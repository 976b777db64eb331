"""Abstractive summarization with attention that copies and covers: the pointer-generator
network with coverage (See, Liu & Manning 2017, "Get To The Point: Summarization with
Pointer-Generator Networks", ACL), trained on SciTLDR-A (Cachola et al. 2020): a paper's
abstract -> a one-sentence TLDR. Declared once in :mod:`attnkit.apps.summarization.app`."""
