"""One module per verb: each takes a Context and plain arguments and returns a result
dataclass whose `lines()` is the human output and whose fields are the JSON. What the
command line, the MCP server and the hooks call; no verb imports another."""
