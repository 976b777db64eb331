"""Translation: the App (app), its commands (cli), config, training task, data preparation,
report and demo at the root; data/, models/, decode/, align/, experiments/ and explorer/ below."""
