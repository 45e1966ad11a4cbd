"""One module per subcommand: each takes a Context and plain arguments and returns a
result dataclass whose `lines()` is the human output and whose fields are the JSON.
"""
