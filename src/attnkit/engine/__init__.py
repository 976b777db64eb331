"""Training: losses, learning-rate schedules, checkpoints and the loop."""
