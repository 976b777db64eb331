"""captioning."""
