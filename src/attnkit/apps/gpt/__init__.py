"""A GPT language model on attnkit's attention (issue 37): a decoder-only Transformer trained
on characters (Tiny Shakespeare, or any UTF-8 text), generation with a KV cache, and what its
heads learn. See ``docs/gpt.md``."""
