"""LNT: the linter's own findings (suppressions, rule errors)."""
