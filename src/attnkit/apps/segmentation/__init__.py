"""Segmentation: Attention U-Net (Oktay et al. 2018) and U-Net on generated shapes and ISBI EM."""
