"""The built-in rules of mlops-lint: one module per rule, one package per domain (SPEC section 6)."""

# installed as mlops_lint.rules (pyproject.toml's package-dir); mlops_lint.origin.rules_package
# checks this mark
__mlops_lint_builtin_rules__ = True
