"""A rule raised an exception on an object.

## What it does
When a rule fails on some input (a shape of manifest it did not expect), mlops-lint reports
this finding at the object, naming the rule, the exception and the object, and carries on with
every other rule and file. The run's exit status reflects it like any error. It runs whenever
any rule does, whatever `--select` or `select:` chose (`--select GPU001` alone still reports a
crash of GPU001); only `--ignore LNT002` or the config's `ignore:` turns it off.

## Why is this bad?
A crashing rule means one check did not run on that object, so the report may be missing a
real problem. It is always a defect of mlops-lint, never of your manifest: please report it
with the object that triggered it.

## Example
```text
deploy/job.yaml:12:9: ERROR LNT002 rule-error: rule RES003 (limit-below-request) raised
TypeError: … on Job ml/train; other rules still ran (please report this)
```

Use instead: upgrade mlops-lint, or suppress the named rule on that object with
`ignore-check.mlops-lint.io/RES003: "reason"` until it is fixed.

## References
- The linter's issue tracker.
"""

from mlops_lint.rule import engine_rule


@engine_rule("LNT002", "rule-error", "error")
def rule_error() -> None:
    """Produced by the engine; see the module docs."""
