"""The process entries, and the only code that prints or exits: the launcher, the hook
entry, the command line (click, and the click-free parser of the common forms), the
error boundary (console), the MCP server, completion and the man page."""
