"""Workspace -> checkpoint: the capture (a snapshot's trees), the overlay, the graft,
the secret scan, what is kept for the quick check, and the one save sequence every
caller goes through (session.py)."""
