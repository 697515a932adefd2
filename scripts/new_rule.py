"""Scaffold a new rule: ``python scripts/new_rule.py GPU014 nvidia-visible-devices-set --family gpu --scope container``.

Writes only the new rule's own files (issue 35: a new rule touches no other rule's files):

- ``rules/<family>/<code>_<slug>.py``: the module, its docstring holding every required doc section
  (What it does, Why is this bad?, Example, Use instead, References) and an ``@rule`` check that
  yields nothing until it is written;
- ``fixtures/rules/<CODE>/fail.<ext>`` and ``pass.<ext>``: a manifest (Dockerfile, script) that
  every rule of the catalogue passes, the fail file with a ``# expect: CODE`` line to move onto the
  line the finding will point at once the violation is written in; ``expected.txt`` is left to
  ``pytest --update-golden`` (the scaffold prints the commands);
- ``fixtures/rules/<CODE>/.mlops-lint.yaml``: the comment that makes the folder a project of its
  own (linted at default settings, apart from the other rules' fixtures);
- ``fixtures/violating/<code>-<slug>.<ext>``: the rule's document in the violating reference set
  (the clean document again, without the ``# expect:`` line: it must make the rule fire there too);
- ``tests/test_rule_<code>.py``: a test stub that fails until the check reports the fail fixture.

So the structural tests (tests/test_meta.py: docs sections, fixtures, names) pass at once, while
the behaviour tests (tests/test_rule_fixtures.py, the stub, tests/test_reference_fixtures.py's
"every rule fires") fail until the rule is written; and tests/test_new_rule.py fails while any
rule's docs still hold the scaffold's placeholder text (:data:`PLACEHOLDER`). Existing files are
never overwritten. A new id prefix needs an entry in ``linter/families.py`` (the scaffold says so).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLACEHOLDER = "(scaffold: replace this paragraph)"

# scope option -> (name in linter.rule, check signature, import of the view's type, fixture kind)
SCOPES = {
    "container": ("CONTAINER", "container: Container", "from mlops_lint.model.k8s import Container", "yaml"),
    "pod": ("POD", "pod: PodSpec", "from mlops_lint.model.k8s import PodSpec", "yaml"),
    "workload": ("WORKLOAD", "workload: Workload", "from mlops_lint.model.k8s import Workload", "yaml"),
    "object": ("OBJECT", "obj: K8sObject", "from mlops_lint.model.k8s import K8sObject", "yaml"),
    "dockerfile": ("DOCKERFILE", "dockerfile: Dockerfile", "from mlops_lint.model.docker import Dockerfile", "dockerfile"),
    "shell": ("SHELL", "script: ShellScript", "from mlops_lint.model.azcli import ShellScript", "shell"),
}
CODE_RE = re.compile(r"^[A-Z]{3}[0-9]{3}$")
SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")

# A document every rule of the catalogue passes, at default settings and with the violating set's
# config (trusted registries, required labels), in a namespace of its own: the scaffold's fixtures
# add no other rule's finding nor change one (tests/test_new_rule.py).
CLEAN = {
    "yaml": ("yaml", """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app.kubernetes.io/name: {name}
    team: ml-platform
spec:
  backoffLimit: 3
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {name}
        team: ml-platform
    spec:
      restartPolicy: Never
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
      containers:
{expect}      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
        command: ["python", "train.py"]
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
        resources:
          requests:
            cpu: "4"
            memory: 16Gi
            nvidia.com/gpu: 1
          limits:
            cpu: "4"
            memory: 16Gi
            nvidia.com/gpu: 1
        volumeMounts:
        - name: dshm
          mountPath: /dev/shm
      volumes:
      - name: dshm
        emptyDir:
          medium: Memory
          sizeLimit: 8Gi
"""),
    "dockerfile": ("Dockerfile", """\
FROM nvcr.io/nvidia/pytorch:24.05-py3@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
WORKDIR /app
COPY train.py .
USER 1000
{expect}ENTRYPOINT ["python", "train.py"]
"""),
    "shell": ("sh", """\
#!/usr/bin/env bash
set -euo pipefail
{expect}kubectl get nodes -L accelerator
"""),
}

MODULE = '''\
"""{summary}

## What it does
{placeholder} Say what `{slug}` ({code}) flags, precisely: the kinds, fields and values it reads,
and what it leaves alone (the near misses its pass fixture shows).

## Why is this bad?
{placeholder} Say what goes wrong on the cluster, with the article's reason quoted
(../shared/seed/mlops-aks-best-practices.txt).

## Example
```{fence}
{example}
```

Use instead:
```{fence}
{example}
```

## References
- {placeholder} a link to the upstream documentation of what the rule checks
"""

{imports}
from mlops_lint.rule import {scope}, Finding, rule  # noqa: F401 - Finding: what the check yields


@rule(code="{code}", name="{slug}", severity="{severity}", scope={scope})
def check({signature}, ctx):
    # the check: yield Finding(span, message, node=...) at the bad value for each violation
    yield from ()
'''

TEST = '''\
"""{code} {slug}: cases beyond the fixtures (fixtures/rules/{code}/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]


def findings(path: Path) -> list[tuple[int, str]]:
    report = lint(LintRequest(paths=[path], config=Config(), registry=load_registry(), select=["{code}"], cwd=REPO))
    return [(r.line, r.rule) for r in report.active]


def test_the_fail_fixture_is_reported_at_its_expect_line() -> None:
    path = REPO / "fixtures" / "rules" / "{code}" / "fail.{ext}"
    lines = path.read_text("utf-8").splitlines()
    expected = [(i + 2, "{code}") for i, line in enumerate(lines) if line.strip() == "# expect: {code}"]
    assert expected and findings(path) == expected
'''


def files_for(code: str, slug: str, family: str, scope_name: str, severity: str, summary: str | None,
              root: Path) -> dict[Path, str]:
    """Every file the scaffold writes for the rule, with its text (``rules/<family>/__init__.py``
    only when the family is new)."""
    scope, signature, imports, kind = SCOPES[scope_name]
    ext, clean = CLEAN[kind]
    stem = f"{code.lower()}_{slug.replace('-', '_')}"
    summary = summary or f"{slug.replace('-', ' ').capitalize()} {PLACEHOLDER}"
    name = slug[:40].rstrip("-")
    namespace = code.lower()  # a namespace of its own: rules over a namespace's pods (OBS001's counts) see no new pod
    fail_text = clean.format(name=name, namespace=namespace, expect=f"{'      ' if kind == 'yaml' else ''}# expect: {code}\n")
    pass_text = clean.format(name=name, namespace=namespace, expect="")
    example = clean.format(name=name, namespace=namespace, expect="").strip()
    fence = {"yaml": "yaml", "dockerfile": "dockerfile", "shell": "sh"}[kind]
    header = {"yaml": "# ", "dockerfile": "# ", "shell": ""}[kind]
    files = {
        root / "rules" / family / "__init__.py": "",
        root / "rules" / family / f"{stem}.py": MODULE.format(
            summary=summary, placeholder=PLACEHOLDER, slug=slug, code=code, fence=fence, example=example,
            imports=imports, scope=scope, severity=severity, signature=signature),
        root / "fixtures" / "rules" / code / ".mlops-lint.yaml": (
            f"# fixtures/rules/{code} is a project of its own (a root, see README \"Context and targets\"): linted\n"
            "# at default settings, apart from every other fixture set.\n"),
        root / "fixtures" / "rules" / code / f"fail.{ext}": (
            f"{header}{code} {slug}: write the violation in and keep `# expect: {code}` directly above its line.\n"
            if header else "") + fail_text,
        root / "fixtures" / "rules" / code / f"pass.{ext}": (
            f"{header}{code} {slug}: the near misses, none of which may fire.\n" if header else "") + pass_text,
        root / "fixtures" / "violating" / f"{code.lower()}-{slug}.{ext}": (
            f"{header}{code} {slug}: the violating reference set's case (it must fire here).\n"
            if header else "") + pass_text,
        root / "tests" / f"test_rule_{code.lower()}.py": TEST.format(code=code, slug=slug, ext=ext),
    }
    if kind == "shell":  # the shebang stays first: the comment goes after it
        for path in list(files):
            if path.suffix == ".sh":
                first, rest = files[path].split("\n", 1)
                files[path] = f"{first}\n# {code} {slug}\n{rest}"
    return files


def fail(message: str) -> int:
    print(f"new_rule: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/new_rule.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="the new id, e.g. GPU014 (three capitals, three digits)")
    parser.add_argument("slug", help="kebab-case name of the problem, e.g. nvidia-visible-devices-set")
    parser.add_argument("--family", required=True, help="the rules/ package: the id's prefix in lower case (gpu)")
    parser.add_argument("--scope", choices=sorted(SCOPES), default="container", help="what the check is called with")
    parser.add_argument("--severity", choices=("error", "warning", "info"), default="warning")
    parser.add_argument("--summary", help="the one-line summary (the rules table's `checks`)")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository to write into")
    args = parser.parse_args(argv)
    code, slug, family = args.code, args.slug, args.family
    if not CODE_RE.match(code):
        return fail(f"{code!r} is not an id of three capitals and three digits (GPU014)")
    if not SLUG_RE.match(slug) or slug.startswith(("no-", "ensure-")):
        return fail(f"{slug!r}: a slug is kebab-case and names the problem, not the fix")
    if family != code[:3].lower():
        return fail(f"--family {family} does not match the id: {code}'s rules live in rules/{code[:3].lower()}/")
    root = args.root
    sys.path.insert(0, str(root))
    from mlops_lint.families import family_of  # noqa: E402 - the repository written into
    from mlops_lint.registry import load_registry  # noqa: E402

    taken = {meta.code: meta for meta in load_registry().rules}
    if code in taken:
        return fail(f"{code} is taken ({taken[code].name}); free ids of the family: next is "
                    f"{code[:3]}{max(int(c[3:]) for c in taken if c[:3] == code[:3]) + 1:03}")
    if any(meta.name == slug for meta in taken.values()):
        return fail(f"the slug {slug} is taken")
    files = files_for(code, slug, family, args.scope, args.severity, args.summary, root)
    stem, ext = f"{code.lower()}_{slug.replace('-', '_')}", CLEAN[SCOPES[args.scope][3]][0]
    existing = [p for p in files if p.exists() and not (p.name == "__init__.py")]
    if existing:
        return fail("would overwrite " + ", ".join(str(p.relative_to(root)) for p in existing))
    for path, text in files.items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "__init__.py":
            text = f'"""{code[:3]} rules."""\n'
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(root)}")
    if family_of(code) == "k8s" and code[:3] not in {meta.code[:3] for meta in taken.values()}:
        print(f"note: {code[:3]} is a new prefix: add it to _BY_PREFIX in linter/families.py (ml, aks or k8s)")
    print(f"""next:
  1. write the check in rules/{family}/{stem}.py and its docs (every `{PLACEHOLDER}`);
  2. write the violation into fixtures/rules/{code}/fail.{ext} (and the violating copy), near misses into pass.{ext};
  3. python -m mlops_lint.docs
  4. python -m pytest -q --update-golden tests/test_rule_fixtures.py tests/test_reference_fixtures.py -k {code}   (review its snapshots)
  5. python -m pytest -q tests/test_rule_fixtures.py tests/test_meta.py tests/test_rule_{code.lower()}.py -k {code}""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
