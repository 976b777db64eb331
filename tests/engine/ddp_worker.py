"""Run by ``torchrun`` in the distributed tests: train CONFIG into RUN_DIR, then write this
rank's parameters (``rankN.safetensors``) and per-update losses (``rankN.json``) into OUT."""

import json
import sys
from pathlib import Path

from attnkit.apps.translation.config import load_experiment
from attnkit.apps.translation.training import TranslationTask
from attnkit.engine.checkpoint import save_model
from attnkit.engine.trainer import Trainer

config, run_dir, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
trainer = Trainer(TranslationTask(load_experiment(config)), run_dir, progress=False)
result = trainer.fit()
rank = trainer.d.rank
save_model(trainer.model, out / f"rank{rank}.safetensors")
info = {"losses": result.step_losses, "world": trainer.d.world, "backend": trainer.d.backend}
(out / f"rank{rank}.json").write_text(json.dumps(info))
trainer.d.close()
