"""Property tests: whatever a pull request contains, no exception escapes, no rule raises (no
LNT002), and every report stays valid (JSON against its schema, SARIF against the official
schema), sorted, deterministic, with every position inside its file. Every rule runs, opt-in
ones included, so a rule added later is fuzzed too.

Examples per property: ``strategies.EXAMPLES`` (``CI_EXAMPLES`` under ``CI=true``, as ``.ci/run``
runs; ``FUZZ_EXAMPLES=N`` to go further by hand).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from invariants import check_bytes, check_report, config_from, config_from_file, identities, lint_paths
from strategies import (CONFIGS, DOCKERFILE_NAMES, DOCKERFILES, FUZZ, ODD, az_scripts, manifests, mutated_documents,
                        mutated_lines)

from mlops_lint.report import render

REPO = Path(__file__).resolve().parents[1]

# -- raw bytes -------------------------------------------------------------------------------

YAML_PIECES = st.sampled_from([
    b"apiVersion: v1\n", b"kind: Pod\n", b"kind: List\n", b"items:\n", b"metadata:\n", b"  name: x\n", b"spec:\n",
    b"  containers:\n", b"  - name: c\n", b"    image: x:1\n", b"    resources: {limits: {nvidia.com/gpu: 1}}\n",
    b"---\n", b"...\n", b"&a ", b"*a", b"<<: *a\n", b"!!python/object/apply:os.system ['true']\n", b"!custom ",
    b"? ", b": ", b"- ", b"[", b"]", b"{", b"}", b",", b"'", b'"', b"|\n", b">-\n", b"#", b"# mlops-lint: disable=ALL\n",
    b"\t", b"\r\n", b"\n", b"  ", b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\xc3", b"\xe2\x80\xae", b"%YAML 1.1\n",
    b"{{ .Values.x }}", b"1e3", b"0777", b"yes", b"~", b"\xf0\x9f\x9a\x80",
])
structured_bytes = st.lists(YAML_PIECES, max_size=40).map(b"".join)


@FUZZ
@given(st.one_of(st.binary(max_size=2000), structured_bytes),
       st.sampled_from(["fuzz.yaml", "fuzz.json", "Dockerfile", "run.sh", "values.yml"]))
def test_arbitrary_bytes_never_crash(data: bytes, name: str) -> None:
    check_bytes(data, name)


# -- Kubernetes-shaped objects ---------------------------------------------------------------


@FUZZ
@given(manifests())
def test_kubernetes_shaped_objects(text: str) -> None:
    check_bytes(text.encode("utf-8"), "manifests.yaml")


@FUZZ
@given(manifests(), CONFIGS, st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32"]),
       st.sampled_from(["\n", "\r\n"]))
def test_kubernetes_shaped_objects_with_settings(text: str, raw_config: dict, encoding: str, newline: str) -> None:
    """Every setting that turns rules on (node pools, trusted registries, required labels, the
    profile), and every encoding and line end Kubernetes accepts."""
    with tempfile.TemporaryDirectory() as folder:
        config = config_from(raw_config, Path(folder))
        check_bytes(text.replace("\n", newline).encode(encoding), "manifests.yaml", config, Path(folder))


@FUZZ
@given(st.lists(st.recursive(st.one_of(ODD, st.text(max_size=10)),
                             lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                             max_leaves=20), max_size=3))
def test_arbitrary_yaml_documents(documents) -> None:
    check_bytes(yaml.safe_dump_all(documents, allow_unicode=True).encode("utf-8"))


# -- scripts and Dockerfiles -----------------------------------------------------------------


@FUZZ
@given(az_scripts(), CONFIGS)
def test_az_scripts(script: str, raw_config: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        check_bytes(script.encode("utf-8"), "cluster.sh", config_from(raw_config, Path(folder)), Path(folder))


@FUZZ
@given(DOCKERFILES, DOCKERFILE_NAMES)
def test_dockerfiles(text: str, name: str) -> None:
    check_bytes(text.encode("utf-8"), name)


# -- a whole project -------------------------------------------------------------------------


@FUZZ
@given(st.lists(manifests(max_objects=3), min_size=1, max_size=3), st.lists(az_scripts(), max_size=2),
       st.lists(DOCKERFILES, max_size=1), CONFIGS)
def test_projects_across_files(manifest_texts, scripts, dockerfiles, raw_config) -> None:
    """Cross-file rules (node pools from scripts, queues, claims, monitors, LimitRanges) over a
    project of several files, linted from disk as a CI run would."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        config = config_from(raw_config, root)
        files: dict[str, bytes] = {}
        for index, text in enumerate(manifest_texts):
            files[f"deploy/m{index}.yaml"] = text.encode("utf-8")
        for index, text in enumerate(scripts):
            files[f"infra/pool{index}.sh"] = text.encode("utf-8")
        for index, text in enumerate(dockerfiles):
            files[f"images/train{index}/Dockerfile"] = text.encode("utf-8")
        for name, data in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        report = lint_paths([root], root, config)
        files[".mlops-lint.yaml"] = (root / ".mlops-lint.yaml").read_bytes()
        first = check_report(report, files, config)
        again = lint_paths([root], root, config)
        assert render(again, "json") == first["json"] and identities(again) == identities(report)


# -- real files, mutated ---------------------------------------------------------------------

FIXTURE_FILES = sorted(p for p in (REPO / "fixtures").rglob("*") if p.is_file() and not p.name.startswith("expected")
                       and (p.suffix in (".yaml", ".yml", ".json", ".sh") or "ockerfile" in p.name))


@FUZZ
@given(st.sampled_from(FIXTURE_FILES or [REPO / "pyproject.toml"]), st.data())
def test_mutated_fixtures(path: Path, data) -> None:
    text = path.read_bytes()
    operations = data.draw(st.lists(st.tuples(st.sampled_from(["delete", "insert", "duplicate-line", "swap", "cut"]),
                                              st.integers(0, max(len(text) - 1, 0)),
                                              st.sampled_from([b":", b"-", b" ", b"\n", b"[", b"&a ", b"*a", b"#", b"\t",
                                                               b"\xff", b"\\", b"'", b"{{", b"$(", b"0", b"\x00"])),
                                    max_size=4))
    for operation, position, piece in operations:
        if operation == "delete":
            text = text[:position] + text[position + 1:]
        elif operation == "insert":
            text = text[:position] + piece + text[position:]
        elif operation == "duplicate-line":
            lines = text.split(b"\n")
            index = position % max(len(lines), 1)
            lines.insert(index, lines[index] if lines else b"")
            text = b"\n".join(lines)
        elif operation == "cut":
            text = text[:position]
        else:
            text = text[position:] + text[:position]
    name = path.name if path.suffix in (".yaml", ".yml", ".json", ".sh") or "ockerfile" in path.name else "fuzz.yaml"
    check_bytes(text, name)


def _fixture_projects() -> list[tuple[str, Path, list[Path], Path | None]]:
    """Each rule fixture (fail files, pass files) and each reference project, as it is linted."""
    projects = []
    for folder in sorted((REPO / "fixtures" / "rules").iterdir()):
        config = folder / ".mlops-lint.yaml"
        for stem in ("fail", "pass"):
            files = sorted(p for p in folder.iterdir() if p.name.startswith(stem) and p.suffix != ".txt")
            if files:
                projects.append((f"{folder.name}/{stem}", folder, files, config if config.exists() else None))
    for kind in ("conforming", "violating"):
        root = REPO / "fixtures" / kind
        if root.is_dir():
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".md", ".txt")
                           and not p.name.startswith(("expected", ".mlops-lint")))
            config = root / ".mlops-lint.yaml"
            projects.append((kind, root, files, config if config.exists() else None))
    return projects


FIXTURE_PROJECTS = _fixture_projects()


@pytest.mark.parametrize("project", FIXTURE_PROJECTS, ids=[p[0] for p in FIXTURE_PROJECTS])
def test_fixture_projects_keep_the_invariants(project) -> None:
    """Each fixture project as it is, before any mutation: every rule its configuration and its
    profile (given, or inferred from the project's clusters, as NAP001's is) turn on ran, and the
    report keeps every invariant. The mutated runs below draw from these; this runs every one."""
    name, base, files, config_path = project
    written = {source.relative_to(base).as_posix(): source.read_bytes() for source in files}
    config = config_from_file(config_path) if config_path is not None else None
    if config_path is not None:
        written[".mlops-lint.yaml"] = config_path.read_bytes()
    report = lint_paths(files, base, config)
    check_report(report, written, config)


@FUZZ
@given(st.sampled_from(FIXTURE_PROJECTS or [("none", REPO, [], None)]), st.data())
def test_structurally_mutated_fixtures(project, data) -> None:
    """The fixtures make every rule fire; a few structural changes to them (a value replaced by an
    odd one, a key deleted or added, items duplicated, values shared through aliases) reach deep
    into each rule with input that is nearly, but not quite, what it expects."""
    name, base, files, config_path = project
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        written: dict[str, bytes] = {}
        for source in files:
            relative = source.relative_to(base)
            try:
                text = source.read_text("utf-8")
            except UnicodeDecodeError:  # the binary and UTF-16 fixtures stay as they are
                written[relative.as_posix()] = source.read_bytes()
                continue
            if source.suffix in (".yaml", ".yml", ".json") and source.name != ".mlops-lint.yaml":
                try:
                    documents = [d for d in yaml.safe_load_all(text) if d is not None]
                except yaml.YAMLError:
                    documents = None
                if documents:
                    text = yaml.safe_dump_all(data.draw(mutated_documents(documents)), allow_unicode=True)
            elif source.name != ".mlops-lint.yaml":
                text = data.draw(mutated_lines(text))
            written[relative.as_posix()] = text.encode("utf-8")
        for relative, content in written.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(content)
        config = None
        if config_path is not None:
            (root / ".mlops-lint.yaml").write_bytes(config_path.read_bytes())
            written[".mlops-lint.yaml"] = config_path.read_bytes()
            config = config_from_file(root / ".mlops-lint.yaml")
        report = lint_paths([root], root, config)
        check_report(report, written, config)


# -- the loader's cheap size bound -----------------------------------------------------------

YAML_TEXTS = st.one_of(
    manifests(),
    st.builds(lambda docs, flow, canonical: yaml.safe_dump_all(docs, default_flow_style=flow, canonical=canonical,
                                                              allow_unicode=True),
              st.lists(st.recursive(st.one_of(ODD, st.text(max_size=6)),
                                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                                    max_leaves=25), max_size=3),
              st.sampled_from([False, True, None]), st.booleans()),
    structured_bytes.map(lambda data: data.decode("utf-8", "replace")),
)


@FUZZ
@given(YAML_TEXTS)
def test_node_bound_is_an_upper_bound(text: str) -> None:
    """Files under the bound skip the event-stream count (``yaml_k8s.node_bound``): it must never
    be below the number of nodes libyaml reports."""
    from mlops_lint.sources import yaml_k8s

    nodes = 0
    try:
        for event in yaml.parse(text, Loader=yaml_k8s._Loader):
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                nodes += 1
    except yaml.YAMLError:
        pass  # the nodes before the error still count
    assert nodes <= yaml_k8s.node_bound(text)
