"""The project's configuration: what can be set and its defaults (model), how
`.checkpoint.yaml` and `git config checkpoint.*` are read (parse), and the commented
file `init` writes (starter)."""
