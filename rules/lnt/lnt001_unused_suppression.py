"""A suppression comment or annotation that suppressed nothing.

## What it does
Reports `# mlops-lint: disable=…` comments, `disable-file=` comments and the
`mlops-lint.io/ignore` / `ignore-check.mlops-lint.io/<rule>` annotations that did not suppress
any finding in this run, and those that name no rule at all. Only rules that ran count: a
suppression of a rule you ignored is not reported.

This rule is opt-in: `select: [ALL]` does not turn it on; select it by id, slug or `LNT`.

## Why is this bad?
A stale suppression hides the next real problem on that line: when someone later breaks
the GPU request it used to excuse, nothing is reported. Suppressions should stay as precise
as the findings they answer.

## Example
```yaml
      containers:
      - name: trainer  # mlops-lint: disable=GPU001 limits set by a mutating webhook
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
```

Use instead:
```yaml
      containers:
      - name: trainer
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
```

## References
- ruff's RUF100 (unused-noqa), the model for this rule: https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from mlops_lint.rule import engine_rule


@engine_rule("LNT001", "unused-suppression", "info", opt_in=True)
def unused_suppression() -> None:
    """Produced by the suppression stage; see the module docs."""
