"""The hook path: what every agent tool call runs before it knows whether a checkpoint
is due (the payload, the plan, the quick check), and the launcher's early scan. It
imports only the standard library, core, risk and the light part of gitcore (a test
in tests/architecture holds it to that)."""
