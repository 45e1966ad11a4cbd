"""Hooks put in place beside whatever is there: agents' settings files, git hooks, the
shell guard; and taken out again exactly. Also which installer put the tool in place."""
