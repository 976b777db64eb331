"""Experiments that train several models on the same data and compare them: the shared loop and
the bottleneck (compare), train short and test long (positions), the position terms' pictures
(position_terms)."""
