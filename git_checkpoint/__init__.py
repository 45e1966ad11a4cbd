"""git-checkpoint: save, verify, restore and share workspace checkpoints in git."""

__version__ = "0.1.0"
