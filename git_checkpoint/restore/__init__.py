"""Checkpoint -> workspace: the plan, the checks before anything is written, the
staging, carrying it out under a journal with a safety checkpoint, undo, and the
report."""
