"""The bottleneck experiment on the default corpus (about 12 minutes on 2 cores: `make slow`)."""

import pytest

from attnkit.apps.translation.experiments.compare import BOTTLENECK_MODELS, compare, packaged_config


@pytest.mark.slow
def test_attention_at_least_doubles_bleu_on_the_longest_sentences(tmp_path):
    configs = {name: packaged_config(f"bottleneck-{name}") for name in BOTTLENECK_MODELS}
    results = {r.name: r for r in compare(configs, tmp_path, progress=False)}
    longest = {name: r.evaluation.by_length[-1] for name, r in results.items()}
    assert longest["none"]["bucket"] == ">40"
    for model in ("bahdanau", "transformer"):
        assert longest[model]["bleu"] >= 2 * longest["none"]["bleu"], longest
