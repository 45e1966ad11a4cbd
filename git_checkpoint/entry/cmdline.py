"""The command line, read once before anything else is loaded: the verb, and whether it
asks for JSON, for help or to continue a restore. The launcher (whether to scan early),
the click-free parser, the click path and the error boundary all read it from here.
Standard library only."""

from __future__ import annotations

EARLY_VERBS = ("save", "restore", "undo")  # the verbs whose scan the launcher starts


class CommandLine:
    """The words after the program's name, and what they say before any parsing."""

    __slots__ = ("as_json", "asks_help", "continues", "verb", "words")

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        self.verb = words[0] if words else ""
        # An agent's own `--json` after `--` (run, guard) is not ours.
        ours = words[: words.index("--")] if "--" in words else words
        self.as_json = "--json" in ours
        self.asks_help = any(w in ("-h", "--help") for w in words)
        self.continues = "--continue" in words  # a journal to finish before anything

    @property
    def scans_early(self) -> bool:
        """Whether the launcher starts the work-tree scan before loading the tool."""
        return self.verb in EARLY_VERBS and not self.asks_help and not self.continues
