"""A file that is not valid YAML, JSON, Dockerfile or shell.

## What it does
Reports every file that mlops-lint cannot read as what its name says it is: YAML or JSON
syntax errors (at the parser's own line and column, with its message), duplicate mapping keys,
files that are binary or not UTF-8/UTF-16, Dockerfile instructions that BuildKit would reject,
shell scripts whose quoting never closes, unreadable files, and inputs built to hurt a parser
(alias bombs, absurd nesting, files over the size limit). Like a compiler's syntax errors, it
runs whenever any rule does, whatever `--select` or `select:` chose: a file no selected rule
could read is never part of "All checks passed". Only `--ignore SCH001` or the config's
`ignore:` (or `per-file-ignores`) turns it off.

## Why is this bad?
A manifest that does not parse is never applied, or is applied differently from what its
author reads: with a duplicate key, Kubernetes silently keeps the last value, so a second
`resources:` or `image:` overrides the first. Every other rule is blind to a file it cannot
parse, so the failure must be visible rather than a silent skip. The other files of the run
are still linted.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        image: nvcr.io/nvidia/pytorch:latest   # duplicate key: this one wins
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
```

## Known problems
Helm templates are not YAML until rendered: files under a chart's `templates/` folder are
skipped with a note, and an unparsable file containing `{{` gets a hint to render it first
(`helm template … | mlops-lint -`).

## References
- YAML 1.1 (the dialect Kubernetes' decoder follows): https://yaml.org/spec/1.1/
- Kubernetes, strict field validation of duplicate fields: https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
"""

from mlops_lint.rule import engine_rule


@engine_rule("SCH001", "parse-error", "error")
def parse_error() -> None:
    """Produced by the loaders; see the module docs."""
