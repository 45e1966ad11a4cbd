"""Checkpoints as git stores them, and our local state beside them: refs and names,
commits and trees, manifests, notes, the operation log, the lock, the restore journal,
task records and retention."""
