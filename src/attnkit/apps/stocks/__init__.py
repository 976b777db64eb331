"""Stock prices with attention-modulated recurrent modules (alpha_t-RIM; Koenigstein 2023)."""
