"""The built-in rules of mlops-lint: one module per rule, one package per domain (SPEC section 6)."""

# mlops-lint loads this package from beside `linter` (linter.origin.rules_package) and checks this
# mark, so a third-party top-level `rules` package is never taken for it
__mlops_lint_builtin_rules__ = True
