"""Hostile YAML, end to end: each file gets a clear SCH001 at a real position, or is linted
correctly, by the real CLI in a subprocess whose time and peak memory are measured and bounded
(``RLIMIT_AS`` caps the address space, ``VmHWM`` gives the peak; see ``sandbox.py``).

Bounds have generous slack over what this 2-core machine measures (noted per case), so they
catch a regression to "parse it whole" or "expand it all", not noise.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from sandbox import run

from mlops_lint.sources.text import MAX_FILE_BYTES
from mlops_lint.sources.yaml_k8s import MAX_DEPTH, MAX_EXPANDED_NODES

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml-training
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests:
            nvidia.com/gpu: 1
"""


def lint_many(tmp_path: Path, files: dict[str, bytes], *extra: str, seconds: float = 20, mib: float = 150,
              **kwargs) -> tuple[dict[str, list[dict]], object]:
    """Lint files with every rule in one bounded run (JSON report); assert the time and memory
    bounds; return (findings by file, the outcome)."""
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    outcome = run([*files, "--select", "ALL,LNT001", "--format", "json", "--jobs", "1", *extra], tmp_path, **kwargs)
    assert outcome.returncode in (0, 1), outcome.err
    assert "Traceback" not in outcome.err, outcome.err
    assert outcome.seconds < seconds, f"took {outcome.seconds:.1f} s (bound {seconds} s)"
    assert outcome.peak_mib < mib, f"peak memory {outcome.peak_mib:.0f} MiB (bound {mib} MiB)"
    report = json.loads(outcome.stdout)
    assert not [f for f in report["findings"] if f["rule"] == "LNT002"]
    return {name: [f for f in report["findings"] if f["path"] == name] for name in files}, outcome


def lint(tmp_path: Path, name: str, data: bytes, *extra: str, **kwargs):
    """One file: (its findings, the outcome)."""
    by_file, outcome = lint_many(tmp_path, {name: data}, *extra, **kwargs)
    return by_file[name], outcome


def parse_errors(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "SCH001"]


def only_parse_error(findings: list[dict]) -> dict:
    (error,) = parse_errors(findings)
    assert [f["rule"] for f in findings] == ["SCH001"], findings
    return error


# -- expansion and nesting -------------------------------------------------------------------


def _billion_laughs() -> bytes:
    # 10 levels of 10 aliases: 5 x 10^10 nodes if expanded
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: lol}", 'a0: &a0 ["lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 11)]
    return ("\n".join(lines) + "\n").encode()


def _merge_laughs() -> bytes:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: lol}", "m0: &m0 {a: 1, b: 2, c: 3, d: 4}"]
    lines += [f"m{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(8)) + "}" for i in range(1, 9)]
    lines += ["data:", "  <<: [*m8, *m8, *m8]"]
    return ("\n".join(lines) + "\n").encode()


def _alias_chain() -> bytes:
    """Each alias puts its anchor's tree one level down: a chain of them nests deeper than any
    document text does, which a rule walking the tree would pay for (RecursionError)."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: chain}", "data:", "  l0: &l0 [x]"]
    lines += [f"  l{i}: &l{i} [*l{i - 1}]" for i in range(1, 400)]
    return ("\n".join(lines) + "\n").encode()


def test_alias_expansion_is_bounded(tmp_path: Path) -> None:
    """Billion laughs (in sequences and through merge keys), alias chains and recursive aliases:
    each refused without expanding anything (measured: 0.7 s for the run, ~40 MiB)."""
    files = {"lol.yaml": _billion_laughs(), "merge-lol.yaml": _merge_laughs(), "chain.yaml": _alias_chain(),
             "loop.yaml": b"apiVersion: v1\nkind: ConfigMap\ndata: &d {self: *d}\n"}
    found, _ = lint_many(tmp_path, files, seconds=10, mib=120)
    lol = only_parse_error(found["lol.yaml"])
    assert "alias bomb" in lol["message"] and f"{MAX_EXPANDED_NODES:,}" in lol["message"] and lol["line"] >= 5
    assert "alias bomb" in only_parse_error(found["merge-lol.yaml"])["message"]
    assert f"deeper than {MAX_DEPTH} levels" in only_parse_error(found["chain.yaml"])["message"]
    loop = only_parse_error(found["loop.yaml"])
    assert "recursive alias" in loop["message"] and loop["line"] == 3


def test_many_aliases_of_a_small_anchor_are_linted(tmp_path: Path) -> None:
    """Ordinary anchor use stays well inside the bound and is linted."""
    text = JOB.replace("      - name: trainer", "      - &c\n        name: trainer") + "".join(
        f"      - <<: *c\n        name: t{i}\n" for i in range(200))
    findings, _ = lint(tmp_path, "aliases.yaml", text.encode())
    assert not parse_errors(findings) and sum(f["rule"] == "GPU001" for f in findings) == 201


def test_ten_thousand_levels_of_nesting(tmp_path: Path) -> None:
    """Flow and block nesting 10,000 deep (libyaml's composer recursion would crash the process
    somewhere past that): refused from the event stream (measured: 1 s for the run, ~40 MiB)."""
    depth = 10_000
    files = {
        "flow-sequence.yaml": "[" * depth + "]" * depth,
        "flow-mapping.yaml": "{a: " * depth + "x" + "}" * depth,
        "block-sequence.yaml": "- " * depth + "x\n",
        # block mappings need one more space per level: 1,500 levels is already ~1 MiB
        "block-mapping.yaml": "".join(" " * i + f"k{i}:\n" for i in range(1_500)) + " " * 1_500 + "v\n",
        "mixed.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: " + "[{a: " * (depth // 2) + "1"
                      + "}]" * (depth // 2) + "\n",
    }
    found, _ = lint_many(tmp_path, {k: v.encode() for k, v in files.items()}, seconds=20)
    for name in files:
        message = only_parse_error(found[name])["message"]
        assert f"nesting deeper than {MAX_DEPTH} levels" in message or "maximum nesting depth" in message, name


def test_depth_just_inside_the_bound_is_linted(tmp_path: Path) -> None:
    nested = "[" * (MAX_DEPTH - 10) + "1" + "]" * (MAX_DEPTH - 10)
    findings, _ = lint(tmp_path, "ok.yaml", (JOB + f"  extra: {nested}\n").encode())
    assert not parse_errors(findings) and {f["rule"] for f in findings} >= {"GPU001"}


# -- size ------------------------------------------------------------------------------------


def test_fifty_megabyte_file_is_not_read(tmp_path: Path) -> None:
    """Refused by its size before a byte is read (measured: 0.3 s, ~35 MiB, the same as one
    small file)."""
    data = JOB.encode() + b"# padding\n" * (50 * 1024 * 1024 // 10)
    error = only_parse_error(lint(tmp_path, "huge.yaml", data, seconds=10, mib=80)[0])
    assert "50.0 MiB" in error["message"] and f"{MAX_FILE_BYTES // 1048576} MiB" in error["message"]
    assert (error["line"], error["column"]) == (1, 1)


def test_fifty_megabytes_on_stdin_are_read_only_up_to_the_limit(tmp_path: Path) -> None:
    data = JOB.encode() + b"# padding\n" * (50 * 1024 * 1024 // 10)
    outcome = run(["-", "--stdin-filename", "huge.yaml", "--format", "json", "--jobs", "1"], tmp_path, stdin=data)
    assert outcome.returncode == 1 and outcome.seconds < 10 and outcome.peak_mib < 120, (outcome.seconds, outcome.peak_mib)
    (error,) = json.loads(outcome.stdout)["findings"]
    assert error["rule"] == "SCH001" and "larger than the 16 MiB" in error["message"]


def test_just_under_the_size_limit_but_too_many_nodes(tmp_path: Path) -> None:
    """15 MiB of one-line keys: ~2M nodes. Counted from the event stream and refused at the
    bound, never composed whole (measured: 0.4 s, ~60 MiB; composing it took 9 s and 760 MiB)."""
    body = b"".join(b"  k%07d: v\n" % i for i in range((15 * 1024 * 1024) // 14))
    data = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + body
    assert len(data) < MAX_FILE_BYTES
    error = only_parse_error(lint(tmp_path, "big.yaml", data, seconds=15, mib=250)[0])
    assert f"more than {MAX_EXPANDED_NODES:,} nodes" in error["message"] and "alias" not in error["message"]


def test_many_documents_under_the_size_limit(tmp_path: Path) -> None:
    """Documents each under the per-document bound, together over the per-file one."""
    document = b"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: [" + b"a," * 150_000 + b"]\n"
    error = only_parse_error(lint(tmp_path, "many.yaml", document * 12, seconds=15, mib=250)[0])
    assert "file has more than" in error["message"]


def test_a_large_real_manifest_is_linted(tmp_path: Path) -> None:
    """2,000 Jobs (~1 MiB) are linted, not refused."""
    data = "---\n".join(JOB.replace("name: train", f"name: train-{i}") for i in range(2_000)).encode()
    findings, _ = lint(tmp_path, "jobs.yaml", data, seconds=60, mib=600)
    assert not parse_errors(findings)
    assert sum(1 for f in findings if f["rule"] == "GPU001") == 2_000


# -- bytes that are not UTF-8 YAML -----------------------------------------------------------


def test_nul_byte_is_a_parse_error_at_its_position(tmp_path: Path) -> None:
    data = JOB.replace("name: trainer", "name: tra\x00iner").encode()
    error = only_parse_error(lint(tmp_path, "nul.yaml", data)[0])
    assert "NUL byte" in error["message"] and (error["line"], error["column"]) == (11, 18)


BINARIES = {
    "png.yaml": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
    "bytes-ff-to-00.yaml": bytes(range(255, -1, -1)) * 16,  # starts like a UTF-16 byte-order mark
    "gzip.yaml": b"\x1f\x8b\x08\x00" + b"\x00\xff" * 500,  # every other byte NUL, but not UTF-16 text
    "zip.yaml": b"PK\x03\x04" + b"\x14\x00" * 300,
    "safetensors.yaml": (64).to_bytes(8, "little") + b'{"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}'
    + bytes(8),
}


def test_binary_named_yaml_is_a_parse_error(tmp_path: Path) -> None:
    found, _ = lint_many(tmp_path, BINARIES)
    for name in BINARIES:
        error = only_parse_error(found[name])
        assert any(words in error["message"] for words in ("NUL byte", "invalid UTF-8", "invalid UTF-16")), error
        assert error["line"] >= 1 and error["column"] >= 1


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    data = JOB.encode().replace(b"image: nvcr.io", b"image: nvcr\xe9.io")  # Latin-1 "é"
    error = only_parse_error(lint(tmp_path, "latin1.yaml", data)[0])
    assert "invalid UTF-8" in error["message"] and "byte 0xe9" in error["message"] and "save the file as UTF-8" in error["message"]
    assert (error["line"], error["column"]) == (12, 20)


def test_utf16_and_utf32_with_and_without_bom_are_linted_like_utf8(tmp_path: Path) -> None:
    text = JOB.replace("name: trainer", "name: trainer-模型")
    encodings = ["utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"]
    for encoding in encodings:
        (tmp_path / f"{encoding}.yaml").write_bytes(text.encode(encoding))
    outcome = run([f"{e}.yaml" for e in encodings] + ["--format", "json", "--jobs", "1"], tmp_path)
    findings = json.loads(outcome.stdout)["findings"]
    def placeless(finding: dict) -> dict:  # the finding without its file's name (also in its fix's edits)
        fix = finding["autofix"] and {**finding["autofix"],
                                      "edits": [{**e, "path": ""} for e in finding["autofix"]["edits"]]}
        return {**{k: v for k, v in finding.items() if k != "path"}, "autofix": fix}

    by_file = {e: [placeless(f) for f in findings if f["path"] == f"{e}.yaml"] for e in encodings}
    assert any(f["rule"] == "GPU001" for f in by_file["utf-8"])
    assert any(f["autofix"] for f in by_file["utf-8"])  # fixes too are placed alike in every encoding
    for encoding in encodings:
        assert by_file[encoding] == by_file["utf-8"], encoding


def test_utf32_without_bom_is_named_as_an_encoding_problem(tmp_path: Path) -> None:
    error = only_parse_error(lint(tmp_path, "utf32.yaml", JOB.encode("utf-32-le"))[0])
    assert "encoding other than UTF-8/UTF-16" in error["message"]


def test_unusual_line_breaks_do_not_shift_positions(tmp_path: Path) -> None:
    """libyaml also breaks lines at NEL, U+2028 and U+2029 (and a lone CR); findings are placed on
    the lines that git and GitHub show."""
    text = JOB.replace("  namespace: ml-training\n", '  namespace: ml-training\n  annotations: {a: "x\u2028y\u2029z\x85w"}\n')
    findings, _ = lint(tmp_path, "breaks.yaml", text.encode())
    (gpu,) = [f for f in findings if f["rule"] == "GPU001"]
    lines = text.split("\n")
    assert lines[gpu["line"] - 1][gpu["column"] - 1:].startswith("nvidia.com/gpu"), gpu


def test_json_that_only_json_allows(tmp_path: Path) -> None:
    """Surrogate-pair escapes (Python's json.dumps of an emoji) and raw DEL/C1 characters are JSON
    that kubectl applies; YAML refuses them. Linted, with exact positions."""
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"note": "🚀\x7f\x9c"}},
                "spec": {"containers": [{"name": "c", "image": "x:latest"}]}}
    for ensure_ascii in (True, False):
        text = json.dumps(manifest, indent=2, ensure_ascii=ensure_ascii)
        findings, _ = lint(tmp_path, "pod.json", text.encode())
        assert not parse_errors(findings), findings
        (tag,) = [f for f in findings if f["rule"] == "IMG001"]
        assert text.split("\n")[tag["line"] - 1][tag["column"] - 1:].startswith('"x:latest"')


# -- YAML features ---------------------------------------------------------------------------


def test_duplicate_keys_are_reported_and_the_last_value_is_linted(tmp_path: Path) -> None:
    text = JOB + "          limits:\n            nvidia.com/gpu: 1\n        resources: {}\n"
    findings, _ = lint(tmp_path, "dup.yaml", text.encode())
    (error,) = parse_errors(findings)
    assert error["message"] == 'duplicate key "resources" (first at line 13); the last value wins'
    assert (error["line"], error["column"]) == (18, 9)
    assert "GPU001" not in {f["rule"] for f in findings}  # the empty resources won


def test_tab_indentation_is_a_parse_error_in_plain_words(tmp_path: Path) -> None:
    error = only_parse_error(lint(tmp_path, "tabs.yaml", JOB.replace("        image:", "\timage:").encode())[0])
    assert error["message"] == "invalid YAML: a tab character here: YAML is indented with spaces only"
    assert (error["line"], error["column"]) == (12, 1)


def test_tabs_inside_values_are_fine(tmp_path: Path) -> None:
    findings, _ = lint(tmp_path, "tab-value.yaml", (JOB + '        args: ["a\tb", "c\td"]\n').encode())
    assert not parse_errors(findings) and "GPU001" in {f["rule"] for f in findings}


SENTINEL_MODULE = '''\
import pathlib
pathlib.Path(__file__).with_name("IMPORTED").write_text("the linter imported a module named in a YAML tag")


def touch(*args, **kwargs):
    pathlib.Path(__file__).with_name("CALLED").write_text(repr(args))
    return {}


class Widget:
    def __init__(self, *args, **kwargs):
        touch(*args)

    def __setstate__(self, state):
        touch(state)
'''


TAGGED = [
    "!!python/object/apply:sentinel_tags.touch [boom]",
    "!!python/object/new:sentinel_tags.Widget [boom]",
    "!!python/object:sentinel_tags.Widget {a: 1}",
    "!!python/name:sentinel_tags.touch ''",
    "!!python/module:sentinel_tags ''",
    "!!python/object/apply:os.system ['touch CALLED']",
    "!!python/object/apply:subprocess.check_output [[touch, CALLED]]",
    "!<tag:yaml.org,2002:python/object/apply:sentinel_tags.touch> [x]",
    "!Ref sentinel_tags.touch",
    "!include /etc/passwd",
    "!!binary aGk=",
]


def test_tags_are_never_constructed(tmp_path: Path) -> None:
    """Each tag names a Python callable that writes a file when imported or called (the module is
    importable: it sits on PYTHONPATH). After linting manifests and a config file that use them,
    neither file exists, nothing was refused by the sandbox, and the values were linted as data."""
    (tmp_path / "sentinel_tags.py").write_text(SENTINEL_MODULE)
    env = {"PYTHONPATH": str(tmp_path)}
    names = []
    for index, tagged in enumerate(TAGGED):
        names.append(f"tagged-{index}.yaml")
        (tmp_path / names[-1]).write_text(JOB + f"        env:\n        - name: X\n          value: {tagged}\n")
    # in the config file: read as the data under the tag, or refused as a bad value (with its line)
    (tmp_path / ".mlops-lint.yaml").write_text("required-labels:\n" + "".join(f"- {t}\n" for t in TAGGED))
    config_run = run([*names, "--format", "json", "--jobs", "1"], tmp_path, guard=True, tree=tmp_path, env=env)
    assert config_run.returncode in (0, 1, 2) and "Traceback" not in config_run.err, config_run.err
    assert config_run.returncode != 2 or ".mlops-lint.yaml:" in config_run.err, config_run.err
    assert config_run.refused == []
    (tmp_path / ".mlops-lint.yaml").unlink()
    outcome = run([*names, "--select", "ALL,LNT001", "--format", "json", "--jobs", "1"], tmp_path, guard=True,
                  tree=tmp_path, env=env)
    assert outcome.returncode == 1 and "Traceback" not in outcome.err and outcome.refused == []
    assert not (tmp_path / "IMPORTED").exists() and not (tmp_path / "CALLED").exists()
    findings = json.loads(outcome.stdout)["findings"]
    for name in names:
        rules = {f["rule"] for f in findings if f["path"] == name}
        assert "GPU001" in rules and "SCH001" not in rules and "LNT002" not in rules, (name, rules)


def test_merge_keys_are_linted_as_kubernetes_reads_them(tmp_path: Path) -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - &base
        name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {nvidia.com/gpu: 1}
      - <<: *base
        name: sidecar
        resources: {requests: {cpu: 1}, limits: {cpu: 1, memory: 1Gi}}
      - <<: [*base]
        name: evaluator
"""
    findings, _ = lint(tmp_path, "merge.yaml", text.encode())
    gpu = sorted((f["line"], f["message"].split("`")[1]) for f in findings if f["rule"] == "GPU001")
    # trainer and evaluator (merged) miss the limit; the sidecar's own resources win
    assert [name for _, name in gpu] == ["evaluator", "trainer"] or [name for _, name in gpu] == ["trainer", "evaluator"]
    assert all(line == 14 for line, _ in gpu)  # both point at the anchor's text, where the request is


def test_merge_key_on_a_scalar_is_a_parse_error_at_the_merge_key(tmp_path: Path) -> None:
    error = only_parse_error(lint(tmp_path, "bad-merge.yaml", b"apiVersion: v1\nkind: ConfigMap\nx: &x 1\ndata:\n  <<: *x\n")[0])
    assert "merge key" in error["message"] and (error["line"], error["column"]) == (5, 3)


def test_every_parse_error_names_the_place_and_what_was_expected(tmp_path: Path) -> None:
    """One file per common mistake, in one run: each SCH001 is at the culprit and in plain words
    (no parser-internal tokens like ``<block end>``)."""
    cases = {
        "indent.yaml": (JOB.replace("      containers:", "     containers:"), "does not line up"),
        "colon.yaml": (JOB.replace("name: trainer", "name: trainer: v2"), "unexpected `:`"),
        "quote.yaml": (JOB.replace("name: trainer", 'name: "trainer'), "never closed"),
        "flow.yaml": (JOB.replace("nvidia.com/gpu: 1", "{nvidia.com/gpu: 1"), "expected `,` or `}`"),
        "alias.yaml": (JOB.replace("name: trainer", "name: *trainer"), "refers to no anchor"),
        "elision.yaml": (JOB.replace("      containers:\n", "      containers:\n      ...\n"), "expected `key: value`"),
        "control.yaml": (JOB.replace("name: trainer", "name: tra\x07iner"), "control character U+0007"),
        "escape.yaml": (JOB.replace("name: trainer", 'name: "C:\\path"'), "unknown escape"),
    }
    for name, (text, _) in cases.items():
        (tmp_path / name).write_text(text)
    outcome = run([*cases, "--format", "json", "--jobs", "1"], tmp_path)
    findings = json.loads(outcome.stdout)["findings"]
    for name, (text, words) in cases.items():
        errors = [f for f in findings if f["path"] == name and f["rule"] == "SCH001"]
        assert len(errors) == 1, (name, errors)
        (error,) = errors
        assert words in error["message"], (name, error["message"])
        assert "<" not in error["message"].replace("<image>", ""), (name, error["message"])
        lines = text.split("\n")
        assert 1 <= error["line"] <= len(lines) and 1 <= error["column"] <= len(lines[error["line"] - 1]) + 1


def test_text_report_names_file_line_and_column_of_each_parse_error(tmp_path: Path) -> None:
    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "bad 模型.yaml").write_text(JOB.replace("        image:", "\timage:"))
    outcome = run([".", "--no-color"], tmp_path)
    assert "a b/bad 模型.yaml:12:1: ERROR SCH001 parse-error: invalid YAML: a tab character here" in outcome.text


def test_utf16_tokens_do_not_confuse_the_utf16_sniffer(tmp_path: Path) -> None:
    """ASCII text with one NUL is binary, not UTF-16; UTF-16 of non-ASCII text still decodes."""
    error = only_parse_error(lint(tmp_path, "one-nul.yaml", JOB.encode() + b"\x00")[0])
    assert "NUL byte" in error["message"]
    findings, _ = lint(tmp_path, "cjk.yaml", codecs.BOM_UTF16_LE + JOB.replace("train", "训练").encode("utf-16-le"))
    assert not parse_errors(findings)
