"""The command line, read once before anything else is loaded: the verb, and whether it
asks for JSON, for help or to continue a restore. The launcher (whether to scan early),
the click-free parser, the click path and the error boundary all read it from here.
Standard library only."""

from __future__ import annotations

EARLY_VERBS = ("save", "restore", "undo")  # the verbs whose scan the launcher starts
# The verbs handed to the command server (entry/relay.py): the short, frequent ones. Those
# that run a command of the user's, serve a session (mcp) or change the installation run
# in their own process.
RELAYED_VERBS = (*EARLY_VERBS, "list", "status", "resume")
GLOBAL_OPTIONS = ("-P", "--no-pager")  # taken before the verb, as git takes them
# The verbs that run a command of the user's (`-- CMD…`), and their options that take a
# value: only what comes before CMD is ours.
COMMAND_VERBS = {"run": ("--task", "--attempts"), "guard": ()}


def _ours(words: list[str]) -> list[str]:
    """The words that are ours: all but an agent's command (after `--`, or from the
    first word that is no option of run's or guard's)."""
    ours = words[: words.index("--")] if "--" in words else list(words)
    valued = COMMAND_VERBS.get(ours[0]) if ours else None
    if valued is None:
        return ours
    i = 1
    while i < len(ours) and ours[i].startswith("-") and ours[i] != "-":
        i += 2 if ours[i] in valued else 1
    return ours[: min(i, len(ours))]


class CommandLine:
    """The words after the program's name, and what they say before any parsing."""

    __slots__ = ("as_json", "asks_help", "continues", "verb", "words")

    def __init__(self, words: list[str]) -> None:
        self.words = list(words)
        start = 0
        while start < len(words) and words[start] in GLOBAL_OPTIONS:
            start += 1
        self.verb = words[start] if start < len(words) else ""
        # An agent's own `--json` in its command (run, guard) is not ours.
        self.as_json = "--json" in _ours(words[start:])
        self.asks_help = any(w in ("-h", "--help") for w in words)
        self.continues = "--continue" in words  # a journal to finish before anything

    @property
    def relayed(self) -> bool:
        """Whether the launcher hands the command to the command server."""
        return self.verb in RELAYED_VERBS

    @property
    def scans_early(self) -> bool:
        """Whether the launcher starts the work-tree scan before loading the tool."""
        return self.verb in EARLY_VERBS and not self.asks_help and not self.continues
