"""The built-in rules of mlops-lint: one module per rule, one package per domain (SPEC section 6)."""
