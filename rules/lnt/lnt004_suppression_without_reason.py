"""A suppression that gives no reason, where the config requires one.

## What it does
With `require-reason: true` in `.mlops-lint.yaml`, every suppression must say why: text after
the rule ids of a `# mlops-lint: disable=…` or `disable-file=…` comment (after its `until=`
date, if any), or the value of an `ignore-check.mlops-lint.io/<rule>` annotation. One that gives
none (and every `mlops-lint.io/ignore` list, which has no place for a reason) is reported at the
comment or annotation. The suppression still applies: this finding is what fails the gate.
Without `require-reason` the rule reports nothing.

## Why is this bad?
A bare `disable=GPU001` tells the next reviewer nothing: whether the GPU limit really comes
from a webhook, or someone silenced the linter to get a merge through. Teams that review
exceptions (a CI gate, an audit) need the reason beside the exception, where it is read.

## Example
```yaml
        resources:
          requests:
            nvidia.com/gpu: 1  # mlops-lint: disable=GPU001
```

Use instead:
```yaml
        resources:
          requests:
            nvidia.com/gpu: 1  # mlops-lint: disable=GPU001 the gpu-limits webhook sets the limit
```

## References
- The README's "Suppressions" section: expiry, `require-reason`, `--no-inline-suppressions`.
- LNT001 (unused-suppression), the other check of the suppressions themselves.
"""

from mlops_lint.rule import engine_rule


@engine_rule("LNT004", "suppression-without-reason", "warning")
def suppression_without_reason() -> None:
    """Produced by the suppression stage (linter.suppress.govern); see the module docs."""
