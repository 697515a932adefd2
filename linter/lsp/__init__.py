"""The language server (``mlops-lint server``)."""
