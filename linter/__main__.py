"""``python -m linter``: the same as the ``mlops-lint`` command."""

from linter.cli import run

run()
