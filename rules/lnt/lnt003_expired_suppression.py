"""A suppression whose `until=` date has passed, or whose `until=` is no date.

## What it does
A suppression comment or `ignore-check.mlops-lint.io/<rule>` annotation may give an expiry
before its reason: `# mlops-lint: disable=GPU001 until=2027-03-01 the webhook sets the limit`.
Up to and including that day (UTC) it suppresses as usual; after it, it no longer applies, so
the finding it hid is reported again, and this rule reports the suppression itself, at the
comment or annotation, with the date. An `until=` that is not a date (`YYYY-MM-DD`, a real day)
never applies and is reported the same way.

## Why is this bad?
A suppression is a promise to come back: "the limit comes from a webhook until the platform
team ships GPU quotas". Without a date nobody comes back and the exception outlives its reason,
hiding the next real problem on that line. An expiry makes the exception visible again when it
is due, and this finding names the comment to remove or renew.

## Example
```yaml
      containers:
      - name: trainer
        resources:
          requests:
            nvidia.com/gpu: 1  # mlops-lint: disable=GPU001 until=2024-01-31 quota webhook
```

Use instead:
```yaml
      containers:
      - name: trainer
        resources:
          requests:
            nvidia.com/gpu: 1
          limits:
            nvidia.com/gpu: 1
```

## References
- The README's "Suppressions" section: expiry, `require-reason`, `--no-inline-suppressions`.
- LNT001 (unused-suppression), the other check of the suppressions themselves.
"""

from mlops_lint.rule import engine_rule


@engine_rule("LNT003", "expired-suppression", "warning")
def expired_suppression() -> None:
    """Produced by the suppression stage (linter.suppress.govern); see the module docs."""
