"""``python -m mlops_lint``: the same as the ``mlops-lint`` command."""

from mlops_lint.origin import isolate

isolate()  # before anything else is imported: nothing from the current folder (linter.origin)

from mlops_lint.cli import run  # noqa: E402

run()
