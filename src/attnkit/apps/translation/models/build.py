"""One factory from :class:`~attnkit.apps.translation.config.ModelConfig` to a model."""

from __future__ import annotations

from attnkit.apps.translation.config import ModelConfig
from attnkit.modules.seq2seq import Seq2SeqModel


def build_model(cfg: ModelConfig, src_vocab: int, tgt_vocab: int, pad_id: int = 0) -> Seq2SeqModel:
    """Build the translation model ``cfg`` describes for the given vocabulary sizes."""
    if cfg.arch == "rnn":
        from attnkit.apps.translation.models.recurrent import RNNSeq2Seq

        return RNNSeq2Seq(
            src_vocab,
            tgt_vocab,
            embed_dim=cfg.embed_dim,
            hidden_dim=cfg.hidden_dim,
            encoder_layers=cfg.encoder_layers,
            decoder_layers=cfg.decoder_layers,
            cell=cfg.cell,
            bidirectional=cfg.bidirectional,
            attention=cfg.attention,
            input_feeding=cfg.input_feeding,
            bridge=cfg.bridge,
            dropout=cfg.dropout,
            local_window=cfg.local_window,
            max_source_len=cfg.max_source_len,
            tie_embeddings=cfg.tie_embeddings,
            pad_id=pad_id,
        )
    from attnkit.apps.translation.models.transformer import TransformerSeq2Seq

    return TransformerSeq2Seq(
        src_vocab,
        tgt_vocab,
        d_model=cfg.d_model,
        num_heads=cfg.num_heads,
        d_ff=cfg.d_ff,
        encoder_layers=cfg.encoder_layers,
        decoder_layers=cfg.decoder_layers,
        dropout=cfg.dropout,
        norm_first=cfg.norm_first,
        positions=cfg.positions,
        position_options=_position_options(cfg),
        tie_embeddings=cfg.tie_embeddings,
        pad_id=pad_id,
    )


def _position_options(cfg: ModelConfig) -> dict:
    """The relative scheme's keywords (:func:`attnkit.attention.positions.build_positions`)."""
    if cfg.positions == "shaw":
        return {"max_distance": cfg.max_relative_distance, "relative_values": cfg.relative_values}
    if cfg.positions == "t5":
        return {"num_buckets": cfg.relative_buckets, "bucket_max_distance": cfg.bucket_max_distance}
    return {}
