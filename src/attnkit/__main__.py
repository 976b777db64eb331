"""``python -m attnkit`` runs the command line, so ``torchrun -m attnkit train CONFIG`` works."""

from attnkit.cli import app

if __name__ == "__main__":
    app(prog_name="attnkit")
