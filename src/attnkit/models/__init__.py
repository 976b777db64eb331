"""Complete models (Embed -> Encode -> Attend -> Predict) assembled from attnkit's modules.

- :mod:`attnkit.models.bert`: :class:`BertEncoder`, loadable from a Hugging Face BERT directory
  (``config.json`` + ``model.safetensors``) with :meth:`BertEncoder.from_pretrained_dir`.
"""

from .bert import BertConfig, BertEncoder, BertOutput, load_hf_bert_weights

__all__ = ["BertConfig", "BertEncoder", "BertOutput", "load_hf_bert_weights"]
