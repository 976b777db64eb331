"""anomaly."""
