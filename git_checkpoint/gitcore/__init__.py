"""The only code that starts git or reads and writes git's own files.

Light (the hook path and the launcher may load it: standard library only): formats
(argv, parsers, ids, modes), spawn (posix_spawn, scratch folders), locate (the
repository, HEAD and refs from files), pathrules, loose (objects as git writes them),
indexfile. Full: repo (Repo, run_git), catfile, scan, maintenance.
"""
