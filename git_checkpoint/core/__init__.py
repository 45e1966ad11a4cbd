"""The bottom layer, standard library only: the error hierarchy, Ctrl-C handling, file
locks, small records (clock, atomic writes, JSON lines) and how text is shown."""
