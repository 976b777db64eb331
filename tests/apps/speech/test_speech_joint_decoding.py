"""Joint CTC-attention decoding of a speech model (train.ctc_rescore): the speller's beam
re-ranked with the model's own CTC head, as attnkit.decoding.ctc.rescore_with_ctc defines."""

from __future__ import annotations

import numpy as np
import torch

from attnkit.apps.speech.data import BOS, EOS, Vocabulary
from attnkit.apps.speech.model import SpeechModel, SpeechModelConfig
from attnkit.apps.speech.recognise import collate_features, transcribe_features
from attnkit.decoding.beam import beam_search
from attnkit.decoding.ctc import ctc_log_likelihood

SMALL = dict(n_features=6, d_listener=5, pyramid=1, d_embed=4, d_decoder=7, d_attention=6,
             conv_channels=3, conv_width=5, dropout=0.0, ctc_weight=0.5)  # fmt: skip
VOCAB = Vocabulary(list("abc"), "chars")


def _setup(seed: int):
    torch.manual_seed(seed)
    model = SpeechModel(SpeechModelConfig(**SMALL), vocab=len(VOCAB)).eval()
    rng = np.random.default_rng(seed)
    return model, [rng.standard_normal((n, 6)).astype(np.float32) for n in (40, 30)]


def test_weight_one_picks_the_beams_likeliest_hypothesis_under_ctc():
    changed = 0  # utterances where CTC overrules the speller's first choice
    for seed in range(4):
        model, features = _setup(seed)
        found = transcribe_features(model, VOCAB, features, beam=4, max_len=4, ctc_rescore=1.0)
        src, mask = collate_features(features, model.config.pyramid)
        with torch.no_grad():
            nbest = beam_search(
                model, src, mask, beam_size=4, bos_id=BOS, eos_id=EOS, length_penalty=0.0,
                n_best=4, max_len=4, max_len_ratio=0.0, max_len_offset=4,
            )  # fmt: skip
            log_probs, lengths = model.ctc_log_probs(model.encode(src, mask))
        for b, hyps in enumerate(nbest):
            ctc = ctc_log_likelihood(
                log_probs[b : b + 1].expand(len(hyps), -1, -1),
                lengths[b : b + 1].expand(len(hyps)),
                [h.tokens for h in hyps],
                model.blank,
            )
            best = hyps[int(ctc.argmax())]
            assert found[b].tokens == VOCAB.decode(best.tokens)
            changed += best is not hyps[0]
    assert changed > 0


def test_weight_zero_is_the_spellers_beam():
    model, features = _setup(0)
    plain = transcribe_features(model, VOCAB, features, beam=4, max_len=4)
    zero = transcribe_features(model, VOCAB, features, beam=4, max_len=4, ctc_rescore=0.0)
    assert [t.tokens for t in plain] == [t.tokens for t in zero]
