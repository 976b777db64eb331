"""Sequential recommendation with self-attention (Kang & McAuley 2018, "Self-Attentive Sequential
Recommendation", SASRec): the interaction files, the authors' leave-last-two-out split and the
sampled evaluation candidates (``data``). The ranking scores (HR@k, NDCG@k, MRR) are core
metrics, :mod:`attnkit.metrics.ranking`."""
