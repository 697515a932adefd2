"""``python -m linter``: the same as the ``mlops-lint`` command."""

from linter.origin import isolate

isolate()  # before anything else is imported: nothing from the current folder (linter.origin)

from linter.cli import run  # noqa: E402

run()
