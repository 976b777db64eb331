"""Speech recognition with attention (Chan et al. 2016, "Listen, Attend and Spell"; Chorowski et
al. 2015, location-aware attention; CTC, Graves et al. 2006, and joint CTC-attention, Watanabe
et al. 2017), registered as ``task: speech`` (``app``): its data front end, wav reading and
log-mel features (``audio``), SpecAugment masks (``specaugment``), CMU AN4's Sphinx cepstra and
transcripts (``an4``), spoken digit strings from FSDD recordings (``digits``), the splits and
vocabulary (``data``); the pyramidal BiLSTM listener (``listener``), the attention speller
(``speller``) and LAS with a CTC head (``model``); the engine task (``training``), decoding
(``recognise``), the run object (``run``), pictures (``views``) and the report (``report``)."""
