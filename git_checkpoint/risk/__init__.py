"""Is a shell command line risky: could it delete or overwrite work a checkpoint should
keep? The shell classifier the hooks and the guard ask; standard library only."""
