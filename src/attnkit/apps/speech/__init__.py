"""Speech recognition with attention (Chan et al. 2016, "Listen, Attend and Spell"; Chorowski et
al. 2015, location-aware attention): so far its data front end, wav reading and log-mel features
(``audio``), SpecAugment masks (``specaugment``), CMU AN4's Sphinx cepstra and transcripts
(``an4``) and spoken digit strings from FSDD recordings (``digits``); and its model, the
pyramidal BiLSTM listener (``listener``), the attention speller with location-aware or
content-only attention (``speller``) and LAS with a CTC head (``model``)."""
