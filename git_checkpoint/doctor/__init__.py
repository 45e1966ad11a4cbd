"""`git checkpoint doctor`: the checks of the setup, and a real round trip in a
temporary worktree."""
