"""Meta-tests over the rule catalogue (kube-linter's checks-list diff, ruff's docs checks).

Every registered rule has fixtures, complete docs in the documented order, options that match its
declared options, and a code, slug and module path that follow the naming scheme; the registry
rejects clashing codes and slugs; and a rule that raises becomes one LNT002 finding while the other
rules of the run still report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import run_rules
from mlops_lint.index import REFERENCE_KINDS
from mlops_lint.model.document import K8S
from mlops_lint.registry import CODE_RE, SLUG_RE, RegistryError, load_registry, validate
from mlops_lint.result import ObjectRef
from mlops_lint.rule import CONTAINER, RuleMeta, rule

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
ENGINE_ONLY = {"LNT002"}  # produced when a rule crashes: no manifest can trigger it on purpose

# Slugs fixed by SPEC section 6 that read as the problem though they start like a fix ("no pool
# matches the selector" is the violation, not an instruction).
SPEC_SLUGS = {"no-pool-matches-selector"}

REGISTRY = load_registry()
RULES = [meta for meta in REGISTRY.rules if meta.status != "removed"]
CODES = [meta.code for meta in RULES]

# Doc sections in the order STYLE.md gives them; the first five are required.
SECTION_ORDER = ["What it does", "Why is this bad?", "Example", "Use instead", "Options", "Fix safety",
                 "Known problems", "References"]
REQUIRED = ["What it does", "Why is this bad?", "Example", "Use instead", "References"]


def sections(doc: str) -> list[tuple[str, list[str]]]:
    """(title, body lines) of each ``## Title`` section; a ``Use instead:`` paragraph (ruff's form)
    opens a section of its own."""
    found: list[tuple[str, list[str]]] = []
    in_code = False
    for line in doc.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("## "):
            found.append((line[3:].strip(), []))
        elif not in_code and line.startswith("Use instead"):
            found.append(("Use instead", [line]))
        elif found:
            found[-1][1].append(line)
    return found


def meta_of(code: str) -> RuleMeta:
    meta = REGISTRY.get(code)
    assert meta is not None
    return meta


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.mark.parametrize("code", [c for c in CODES if c not in ENGINE_ONLY])
def test_every_rule_has_fixtures(code: str) -> None:
    folder = FIXTURES / code
    assert folder.is_dir(), f"{code} has no fixtures/rules/{code}/ folder"
    names = [p.name for p in folder.iterdir() if p.is_file()]
    assert any(n.startswith("fail") for n in names), f"fixtures/rules/{code}/ has no fail.* file"
    assert any(n.startswith("pass") for n in names), f"fixtures/rules/{code}/ has no pass.* file"
    assert "expected.txt" in names, f"fixtures/rules/{code}/ has no expected.txt"


def test_every_fixture_folder_names_a_rule() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders, "no fixture folders"
    assert folders - set(CODES) == set(), "fixture folders for rules that are not registered"
    assert folders & ENGINE_ONLY == set()


# ---------------------------------------------------------------------------------------------
# Docs


@pytest.mark.parametrize("code", CODES)
def test_doc_sections_present_and_ordered(code: str) -> None:
    meta = meta_of(code)
    assert meta.summary and not meta.doc.startswith("#"), f"{code}: the doc must open with a one-line summary"
    titles = [title for title, _ in sections(meta.doc)]
    unknown = [t for t in titles if t not in SECTION_ORDER]
    assert not unknown, f"{code}: unknown doc sections {unknown}"
    assert len(titles) == len(set(titles)), f"{code}: a doc section appears twice: {titles}"
    missing = [t for t in REQUIRED if t not in titles]
    assert not missing, f"{code}: doc lacks {missing}"
    ranks = [SECTION_ORDER.index(t) for t in titles]
    assert ranks == sorted(ranks), f"{code}: doc sections out of order: {titles} (expected order {SECTION_ORDER})"
    for title, body in sections(meta.doc):
        assert "".join(body).strip(), f"{code}: section {title!r} is empty"


OPTION_ITEM = re.compile(r"^- `([^`]+)`")


@pytest.mark.parametrize("code", CODES)
def test_options_section_matches_declared_options(code: str) -> None:
    meta = meta_of(code)
    by_title = dict(sections(meta.doc))
    if not meta.options:
        assert "Options" not in by_title, f"{code}: documents options but declares none"
        return
    assert "Options" in by_title, f"{code}: declares options {sorted(meta.options)} but has no ## Options section"
    documented = {m.group(1) for line in by_title["Options"] if (m := OPTION_ITEM.match(line.strip()))}
    assert documented - set(meta.options) == set(), f"{code}: documents undeclared options"
    assert set(meta.options) - documented == set(), f"{code}: declared options missing from ## Options"
    assert set(meta.defaults) <= set(meta.options)


# ---------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize("code", CODES)
def test_code_slug_and_module_path(code: str) -> None:
    meta = meta_of(code)
    assert CODE_RE.match(meta.code)
    assert SLUG_RE.match(meta.name), f"{code}: slug {meta.name!r} is not kebab-case"
    if meta.name not in SPEC_SLUGS:
        assert not meta.name.startswith(("no-", "ensure-")), f"{code}: slug {meta.name!r} names the fix, not the problem"
    domain = meta.code[:3].lower()
    stem = f"{meta.code.lower()}_{meta.name.replace('-', '_')}"
    assert meta.module == f"mlops_lint.rules.{domain}.{stem}", f"{code}: defined in {meta.module}, expected mlops_lint.rules.{domain}.{stem}"
    assert (REPO / "rules" / domain / f"{stem}.py").is_file()


def _fake(code: str, slug: str) -> RuleMeta:
    def check(container, ctx):
        yield from ()

    return rule(code=code, name=slug, severity="warning", scope=CONTAINER)(check).__mlops_rule__


def test_registry_rejects_duplicate_codes_and_slugs() -> None:
    validate([_fake("TST001", "first-fake"), _fake("TST002", "second-fake")])  # the control: distinct is fine
    with pytest.raises(RegistryError, match="duplicate rule code TST001"):
        validate([_fake("TST001", "first-fake"), _fake("TST001", "second-fake")])
    with pytest.raises(RegistryError, match="duplicate rule slug first-fake"):
        validate([_fake("TST001", "first-fake"), _fake("TST002", "first-fake")])
    with pytest.raises(RegistryError, match="duplicate rule code GPU001"):
        validate([*REGISTRY.rules, _fake("GPU001", "another-gpu-rule")])
    with pytest.raises(RegistryError, match="duplicate rule slug gpu-limit-missing"):
        validate([*REGISTRY.rules, _fake("TST003", "gpu-limit-missing")])


# ---------------------------------------------------------------------------------------------
# LNT002: a crashing rule is a finding, and the run goes on

CRASH_DOC = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: should-crash
  namespace: ml-training
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      # crash: here
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        resources:
          requests:
            # expect: GPU001
            nvidia.com/gpu: 1
      - name: evaluator
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
---
apiVersion: batch/v1
kind: Job
metadata:
  name: other-job
  namespace: ml-training
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: evaluator
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        resources:
          requests:
            # expect: GPU001
            nvidia.com/gpu: 2
"""


def test_rule_that_raises_becomes_one_lnt002_and_other_rules_still_report() -> None:
    from mlops_lint.engine import load_bytes

    def check(container, ctx):
        if container.name == "trainer" and container.obj.name == "should-crash":
            raise KeyError("resources")
        yield from ()

    crashing = rule(code="TST900", name="crashes-on-trainer", severity="warning", scope=CONTAINER)(check).__mlops_rule__
    document = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    assert not document.errors and len(document.objects) == 2
    rules = [crashing, meta_of("GPU001"), meta_of("LNT002")]
    results = [result for result, _ in run_rules([document], {"jobs.yaml"}, rules, Config())]

    lines = CRASH_DOC.splitlines()
    errors = [r for r in results if r.rule == "LNT002"]
    assert len(errors) == 1, errors
    error = errors[0]
    assert error.slug == "rule-error" and error.severity == "error" and error.path == "jobs.yaml"
    assert "TST900" in error.message and "crashes-on-trainer" in error.message and "KeyError" in error.message
    assert "Job ml-training/should-crash" in error.message
    assert error.obj == ObjectRef("Job", "ml-training", "should-crash")
    assert error.line == lines.index("      # crash: here") + 2  # the crashing container's name

    gpu = {(r.line, r.obj) for r in results if r.rule == "GPU001"}
    expected_lines = [i + 2 for i, line in enumerate(lines) if line.strip() == "# expect: GPU001"]
    assert gpu == {(expected_lines[0], ObjectRef("Job", "ml-training", "should-crash")),
                   (expected_lines[1], ObjectRef("Job", "ml-training", "other-job"))}
    assert {r.rule for r in results} == {"GPU001", "LNT002"}


def test_rule_errors_are_not_reported_unless_lnt002_runs() -> None:
    from mlops_lint.engine import load_bytes

    def check(container, ctx):
        raise RuntimeError("boom")
        yield  # pragma: no cover - makes this a generator

    crashing = rule(code="TST901", name="always-crashes", severity="warning", scope=CONTAINER)(check).__mlops_rule__
    document = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    results = [r for r, _ in run_rules([document], {"jobs.yaml"}, [crashing, meta_of("GPU001")], Config())]
    assert {r.rule for r in results} == {"GPU001"} and len(results) == 2


# ---------------------------------------------------------------------------------------------
# Graded findings and PROJECT rules that need a kind


def test_a_finding_may_lower_its_grade_and_config_overrides_still_win() -> None:
    import msgspec

    from mlops_lint.engine import load_bytes
    from mlops_lint.rule import Finding

    def check(container, ctx):
        yield Finding(container.span, "graded", severity="warning" if container.name == "evaluator" else None)

    graded = rule(code="TST902", name="graded-finding", severity="error", scope=CONTAINER)(check).__mlops_rule__
    document = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    results = [r for r, _ in run_rules([document], {"jobs.yaml"}, [graded], Config())]
    assert sorted(r.severity for r in results) == ["error", "warning", "warning"]
    override = msgspec.structs.replace(Config(), severity={"TST902": "info"})
    results = [r for r, _ in run_rules([document], {"jobs.yaml"}, [graded], override)]
    assert {r.severity for r in results} == {"info"}


def test_a_project_rule_with_requires_runs_only_when_the_kind_is_present() -> None:
    from mlops_lint.engine import load_bytes
    from mlops_lint.rule import PROJECT, Finding

    calls = []

    def check(index, ctx):
        calls.append(index)
        for obj in index.of_kind("PriorityClass"):
            yield Finding(obj.span, "seen", obj=obj)

    meta = rule(code="TST903", name="needs-priority-classes", severity="info", scope=PROJECT,
                requires=("PriorityClass",))(check).__mlops_rule__
    jobs = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    assert run_rules([jobs], {"jobs.yaml"}, [meta], Config()) == [] and calls == []
    classes = load_bytes(b"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: batch\nvalue: 1\n",
                         "classes.yaml", K8S)
    results = [r for r, _ in run_rules([jobs, classes], {"jobs.yaml", "classes.yaml"}, [meta], Config())]
    assert [(r.path, r.line, r.obj.name) for r in results] == [("classes.yaml", 2, "batch")] and len(calls) == 1


def test_requires_must_name_reference_kinds_of_project_rules() -> None:
    from mlops_lint.rule import PROJECT

    def check(index, ctx):
        yield from ()

    bad_kind = rule(code="TST904", name="needs-services", severity="info", scope=PROJECT,
                    requires=("Service",))(check).__mlops_rule__
    with pytest.raises(RegistryError, match="REFERENCE_KINDS"):
        validate([*REGISTRY.rules, bad_kind])
    not_project = rule(code="TST905", name="container-needs", severity="info", scope=CONTAINER,
                       requires=("PriorityClass",))(check).__mlops_rule__
    with pytest.raises(RegistryError, match="PROJECT"):
        validate([*REGISTRY.rules, not_project])
    collecting = rule(code="TST906", name="container-collects", severity="info", scope=CONTAINER,
                      collect=lambda obj, ctx: ())(check).__mlops_rule__
    with pytest.raises(RegistryError, match="`collect` is for PROJECT rules"):
        validate([*REGISTRY.rules, collecting])


def _collecting_rule():
    """A PROJECT rule that collects (kind, name, namespace) of every Job and reports the count on
    each; its collector raises on a Job named should-crash."""
    from mlops_lint.rule import PROJECT, Finding

    def collect(obj, ctx):
        if obj.name == "should-crash":
            raise ValueError("no facts today")
        if obj.kind == "Job":
            yield obj.stub()

    def check(found, ctx):
        for job in found:
            yield Finding(job.span, f"one of {len(found)} jobs", obj=job)

    return rule(code="TST907", name="counts-jobs", severity="info", scope=PROJECT, collect=collect)(check).__mlops_rule__


def test_a_project_rule_reduces_facts_and_a_collector_that_raises_is_lnt002() -> None:
    from mlops_lint.engine import load_bytes

    jobs = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    results = [r for r, _ in run_rules([jobs], {"jobs.yaml"}, [_collecting_rule(), meta_of("LNT002")], Config())]
    counted = [r for r in results if r.rule == "TST907"]
    assert [(r.obj.name, r.message) for r in counted] == [("other-job", "one of 1 jobs")]
    [error] = [r for r in results if r.rule == "LNT002"]
    assert "TST907" in error.message and "ValueError: no facts today" in error.message
    assert error.obj == ObjectRef("Job", "ml-training", "should-crash")


def test_a_worker_that_dies_loses_no_file(tmp_path, monkeypatch) -> None:
    """A forked worker that exits mid-run breaks the pool: the run lints in-process instead and
    gives the output a healthy run gives."""
    import os

    from mlops_lint.engine import LintRequest, lint
    from mlops_lint.registry import validate

    parent = os.getpid()

    def check(container, ctx):
        if os.getpid() != parent:
            os._exit(3)  # only in a worker
        yield from ()

    dying = rule(code="TST908", name="dies-in-workers", severity="info", scope=CONTAINER)(check).__mlops_rule__
    registry = validate([*REGISTRY.rules, dying])
    for index in range(60):
        (tmp_path / f"job{index:02}.yaml").write_text(CRASH_DOC)
    runs = {}
    for jobs in (1, 2):
        request = LintRequest(paths=[tmp_path], config=Config(), registry=registry, jobs=jobs, cwd=tmp_path)
        runs[jobs] = [(r.path, r.line, r.rule, r.message) for r in lint(request).results]
    assert runs[1] == runs[2] and len(runs[1]) >= 60 * 3


def test_the_first_pass_parses_only_the_documents_other_files_look_up(tmp_path) -> None:
    """The index is built from the documents that mention a reference kind; the rest of a file is
    parsed when it is linted, into the same objects (the index's PVC is the file's own), and a
    syntax error in one document hides neither the PVC from the index nor the Job from the rules."""
    from mlops_lint.engine import LintRequest, lint
    from mlops_lint.engine.passes import first_pass, second_pass, skeleton

    pvc = ("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n  namespace: ml-training\n"
           "spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n")
    text = CRASH_DOC + "---\napiVersion: v1\nkind: Service\nmetadata: [\n---\n" + pvc  # Service: no reference kind
    stream = first_pass(text.encode(), "mixed.yaml", K8S)
    assert sorted(stream.parsed) == [3]  # only the PVC's document (after two Jobs and a broken one)
    [claim] = skeleton(stream).objects
    document = second_pass(stream, "mixed.yaml")
    assert [o.kind for o in document.objects] == ["Job", "Job", "PersistentVolumeClaim"]
    assert document.objects[2] is claim and len(document.errors) == 1
    (tmp_path / "mixed.yaml").write_text(text)
    for index in range(60):  # enough files for --jobs 2 to fork (PARALLEL_MIN_FILES)
        (tmp_path / f"job{index:02}.yaml").write_text(CRASH_DOC.replace("-job", f"-job-{index}")
                                                      .replace("should-crash", f"crash-{index}"))
    runs = {}
    for jobs in (1, 2):
        request = LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, jobs=jobs, cwd=tmp_path)
        runs[jobs] = [(r.path, r.span, r.rule, r.message) for r in lint(request).results]
    assert runs[1] == runs[2]
    assert {r[2] for r in runs[1] if r[0] == "mixed.yaml"} >= {"SCH001"}
    assert {r[2] for r in runs[1] if r[0] == "mixed.yaml" and r[1].line < 37} >= {"GPU001"}  # the Jobs are linted


@pytest.mark.parametrize("text, mentions", [
    ("kind: ClusterQueue\n", True),
    ("kind: Job  # the NetworkPolicy beside it\n", False),
    ("# a PodMonitor scrapes it\nkind: Job\n", False),
    ("  # indented comment: ClusterQueue\nkind: Job\n", False),
    ("a: \"x\" # the ClusterQueue\n", True),  # a quote before the mention: decided by parsing
    ("a: b#ClusterQueue\n", True),  # a '#' after a non-blank is text, not a comment
    ("s: |\n  # ClusterQueue\n", False),  # the mention is inside a block scalar holding '#'
    ("{a: \"x #y\", kind: ClusterQueue}\n", True),
    ("a: \"multi\n  line #x\", kind: ClusterQueue\n", True),  # a quote between the '#' and the mention
    ("kind: \"\\u0043lusterQueue\"\n", True),  # an escape may spell a kind
    ("kind: \"\\x43lusterQueue\"\n", True),
    ("kind: \"Cluster\\\n  Queue\"\n", True),  # an escaped line break joins the halves
    ("kind: Job\n", False),
])
def test_a_reference_kind_named_only_in_comments_is_no_mention(text: str, mentions: bool) -> None:
    from mlops_lint.engine.survey import mentions_in

    assert mentions_in(text) is mentions
    assert mentions_in(text.encode()) is mentions


_KIND_STYLES = (
    "kind: {k}", "kind: '{k}'", 'kind: "{k}"', "kind: !!str {k}", 'kind: "{e}"', 'kind: "{h}\\\n    {t}"',
    "kind: |-\n  {k}", "kind: >-\n  {k}", "x: &kind {k}\nkind: *kind", "kind:\n  {k}",
)
_NOISE = ("# the {k} beside it", "note: 'a #{k}'", 'note: "#{k}"', "script: |\n  # {k}\n  echo", "n: 1  # {k}",
          "url: http://x/#{k}")


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(REFERENCE_KINDS) + ["Job", "ConfigMap", "Service"]),
       style=st.sampled_from(_KIND_STYLES), split=st.integers(1, 8),
       noise=st.lists(st.tuples(st.sampled_from(_NOISE), st.sampled_from(sorted(REFERENCE_KINDS))), max_size=4),
       letter=st.integers(0, 30))
def test_a_document_of_a_reference_kind_always_mentions_one(kind, style, split, noise, letter) -> None:
    """Whatever its scalar style, comments and neighbours, a document that loads as an object of a
    reference kind is one the first pass parses; names in comments alone are not."""
    from mlops_lint.engine.survey import mentions_in
    from mlops_lint.sources.yaml_k8s import load_text

    position = letter % len(kind)
    escaped = kind[:position] + f"\\x{ord(kind[position]):02x}" + kind[position + 1:]
    cut = min(split, len(kind) - 1)
    line = style.format(k=kind, e=escaped, h=kind[:cut], t=kind[cut:])
    extra = [template.format(k=named) for template, named in noise]
    text = "\n".join(["apiVersion: v1", *extra[:2], line, "metadata:", "  name: x", *extra[2:]]) + "\n"
    objects = load_text(text, "x.yaml").objects
    assert [o.kind for o in objects] == [kind], text
    if kind in REFERENCE_KINDS:
        assert mentions_in(text) and mentions_in(text.encode()), text
    elif all(template.startswith("#") or "  # " in template for template, _ in noise) and "\\" not in line:
        assert not mentions_in(text), text


def test_a_worker_whose_linting_raises_loses_no_file(tmp_path, monkeypatch) -> None:
    """An exception that escapes the engine in a worker (not a rule's, which is LNT002) ends that
    worker quietly; the parent lints its chunks and gives the output a healthy run gives."""
    import os

    from mlops_lint import engine
    from mlops_lint.engine import LintRequest, lint

    parent = os.getpid()
    original = engine.Runner.outcome

    def outcome(self, document, target):
        if os.getpid() != parent:
            raise RuntimeError("worker-only failure")
        return original(self, document, target)

    for index in range(60):
        (tmp_path / f"job{index:02}.yaml").write_text(CRASH_DOC.replace("should-crash", f"crash-{index}"))
    runs = {}
    for jobs in (1, 3):
        if jobs > 1:
            monkeypatch.setattr(engine.Runner, "outcome", outcome)
        request = LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, jobs=jobs, cwd=tmp_path)
        runs[jobs] = [(r.path, r.span, r.rule, r.message) for r in lint(request).results]
    assert runs[1] == runs[3] and len({r[0] for r in runs[1]}) == 60


def test_jobs_share_the_files_between_the_parent_and_the_workers(tmp_path) -> None:
    import os

    from mlops_lint.engine import LintRequest, lint
    from mlops_lint.registry import validate

    seen = tmp_path / "pids"

    def check(container, ctx):
        with open(seen, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        yield from ()

    recording = rule(code="TST909", name="records-its-process", severity="info", scope=CONTAINER)(check).__mlops_rule__
    registry = validate([*REGISTRY.rules, recording])
    project = tmp_path / "p"
    project.mkdir()
    for index in range(200):
        (project / f"job{index:03}.yaml").write_text(CRASH_DOC.replace("should-crash", f"crash-{index}"))
    lint(LintRequest(paths=[project], config=Config(), registry=registry, jobs=2, cwd=project))
    pids = seen.read_text().split()
    assert len(pids) == 200 * 3  # three containers a file, each linted once
    assert str(os.getpid()) in pids and len(set(pids)) == 2


def test_a_linted_files_trees_are_freed_without_the_cyclic_collector() -> None:
    """Views hold cycles (a pod and its workload, a container and its pod, memos); releasing a
    linted file breaks them, so its trees go by reference counting alone (a collector pass over
    every tree cost a tenth of a 10,000-file run)."""
    import gc
    import weakref

    from mlops_lint.engine import Runner, enabled_rules, load_bytes
    from mlops_lint.index import REFERENCE_KINDS, ProjectIndex

    config = Config()
    rules = enabled_rules(REGISTRY, config)
    runner = Runner(rules, ProjectIndex([], only_kinds=REFERENCE_KINDS), config)
    document = load_bytes(CRASH_DOC.encode(), "jobs.yaml", K8S)
    views = [runner.index.workload(obj) for obj in document.objects]
    assert views and all(view is not None and view.pods for view in views)
    objects = [weakref.ref(obj) for obj in document.objects]
    enabled = gc.isenabled()
    gc.disable()
    try:
        outcome = runner.outcome(document, True)
        assert {r.rule for r, _ in outcome.results} >= {"GPU001"}
        del document, views
        assert [obj() for obj in objects] == [None, None]
    finally:
        if enabled:
            gc.enable()
