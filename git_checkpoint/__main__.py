"""`python -m git_checkpoint`: the command line, as `git checkpoint` runs it."""

from .entry.cli import main

main()
