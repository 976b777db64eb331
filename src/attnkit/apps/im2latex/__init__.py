"""Image to LaTeX (im2markup; Deng, Kanervisto, Ling and Rush 2017): an attention decoder that
reads a formula image and writes its markup, on generated formulas and real arXiv ones."""
