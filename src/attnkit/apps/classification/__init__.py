"""classification."""
