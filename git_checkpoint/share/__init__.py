"""Sharing through git remotes: push and fetch of checkpoints and their notes, and the
timeline a reviewer reads."""
