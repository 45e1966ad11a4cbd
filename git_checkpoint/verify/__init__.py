"""Verifiers: running them in process groups of their own (procgroup), recording and
deciding on their evidence (verifiers), and checkpoints checked out in a temporary
worktree to verify them there (worktree)."""
