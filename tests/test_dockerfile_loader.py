"""The Dockerfile loader: structure as BuildKit reads it, exact spans, and SCH001 parse errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlops_lint.model.document import DOCKERFILE
from mlops_lint.model.position import Span
from mlops_lint.sources.dockerfile import load, load_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sources" / "dockerfile"


def fixture(name: str):
    return load((FIXTURES / name).read_bytes(), f"fixtures/sources/dockerfile/{name}")


def errors(doc) -> list[tuple[int, int, str]]:
    return [(e.span.line, e.span.col, e.message) for e in doc.errors]


# ---------------------------------------------------------------------------------------------
# Realistic files


def test_article_training_image():
    doc = fixture("train.Dockerfile")
    assert doc.kind == DOCKERFILE and doc.errors == [] and doc.comments == []
    df = doc.dockerfile
    assert [i.keyword for i in df.instructions] == ["FROM", "WORKDIR", "COPY", "RUN", "COPY", "ENTRYPOINT"]
    from_ = df.instructions[0]
    assert from_.span == Span(1, 1, 1, 51)
    assert from_.keyword_span == Span(1, 1, 1, 5)
    assert from_.args_span == Span(1, 6, 1, 51)
    stage = df.final_stage
    assert stage is df.stages[0] and stage.index == 0 and stage.name is None
    assert stage.base == stage.base_resolved == "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime"
    assert stage.base_span == Span(1, 6, 1, 51)
    assert stage.image == ("pytorch/pytorch", "2.4.1-cuda12.4-cudnn9-runtime", None)
    assert stage.is_image and not stage.is_scratch
    assert [i.keyword for i in stage.instructions] == ["WORKDIR", "COPY", "RUN", "COPY", "ENTRYPOINT"]
    run = df.instructions[3]
    assert run.span == Span(6, 1, 6, 61) and not run.exec_form
    assert run.args == "python -m pip install --no-cache-dir -r requirements.txt"
    assert [w.text for w in run.words][3:5] == ["install", "--no-cache-dir"]
    assert run.words[4].span == Span(6, 27, 6, 41)
    entry = df.instructions[5]
    assert entry.exec_form and entry.exec_args == ["python", "/workspace/train.py"]
    assert entry.args_span == Span(10, 12, 10, 45)
    copy = df.instructions[2]
    assert [(w.text, w.span) for w in copy.words] == [
        ("requirements.txt", Span(5, 6, 5, 22)), (".", Span(5, 23, 5, 24))]
    assert all(i.stage_index == 0 for i in df.instructions)


def test_multistage_with_meta_args_and_commented_continuation():
    doc = fixture("multistage.Dockerfile")
    assert doc.errors == []
    df = doc.dockerfile
    assert df.syntax == "docker/dockerfile:1.7"
    assert [(d.name, d.value, d.span) for d in df.directives] == [
        ("syntax", "docker/dockerfile:1.7", Span(1, 1, 1, 31))]
    assert [(a.name, a.default, a.value, a.span) for a in df.args] == [
        ("CUDA", "12.4", "12.4", Span(3, 5, 3, 14)),
        ("UBUNTU", "22.04", "22.04", Span(4, 5, 4, 17)),
        ("REGISTRY", None, None, Span(5, 5, 5, 13)),
    ]
    assert [i.stage_index for i in df.instructions[:4]] == [None, None, None, 0]

    build, runtime, derived, external = df.stages
    assert build.base == "nvidia/cuda:${CUDA}-devel-ubuntu${UBUNTU}"
    assert build.base_resolved == "nvidia/cuda:12.4-devel-ubuntu22.04"
    assert build.base_span == Span(6, 6, 6, 47)
    assert (build.name, build.name_span) == ("build", Span(6, 51, 6, 56))
    assert build.image == ("nvidia/cuda", "12.4-devel-ubuntu22.04", None)

    # ${CUDA:-12.1} takes the ARG default; the stage name is compared in lower case, as BuildKit does.
    assert runtime.base_resolved == "nvidia/cuda:12.4-runtime-ubuntu22.04"
    assert runtime.name == "runtime" and runtime.name_span == Span(14, 85, 14, 92)
    assert runtime.platform == "$BUILDPLATFORM"
    platform = runtime.from_instruction.flag("--platform")
    assert platform.span == Span(14, 6, 14, 31) and platform.value_span == Span(14, 17, 14, 31)
    assert runtime.base_span == Span(14, 32, 14, 81)

    assert derived.base == "runtime" and derived.parent_stage == 1 and not derived.is_image and derived.image is None
    assert df.is_stage_reference("Runtime") and df.is_stage_reference("runtime", before=2)
    assert not df.is_stage_reference("runtime", before=1)
    assert df.stage_by_name("BUILD") is build
    assert external.base_resolved is None and external.parent_stage is None  # $REGISTRY has no default
    assert df.final_stage is external and [i.keyword for i in external.instructions] == ["USER", "CMD"]

    run = df.instructions[5]
    assert run.keyword == "RUN" and run.span == Span(8, 1, 13, 19)
    mount = run.flag("mount")
    assert mount.value == "type=cache,target=/root/.cache/pip"
    assert mount.span == Span(8, 5, 8, 47) and mount.value_span == Span(8, 13, 8, 47)
    # the comment line and the blank line inside the continuation are skipped, as BuildKit does
    assert run.args_span == Span(10, 5, 13, 19)
    assert run.args.startswith("pip wheel --wheel-dir /wheels ") and run.args.endswith("accelerate")
    assert [w.span for w in run.words if w.text == "torch==${TORCH}"] == [Span(12, 9, 12, 24)]

    copy = df.instructions[7]
    assert copy.flag("from").value == "build" and copy.flag("from").span == Span(15, 6, 15, 18)
    assert copy.flag("chown").value_span == Span(15, 27, 15, 36)
    assert [(c.line, c.col, c.own_line, c.next_line) for c in doc.comments] == [(2, 1, True, 3), (9, 5, True, 10)]
    assert doc.comments[1].text == "wheels only, no cache in the layer"


def test_heredocs_quoted_dash_and_several_on_one_line():
    doc = fixture("heredoc.Dockerfile")
    assert doc.errors == []
    df = doc.dockerfile
    assert [i.keyword for i in df.instructions] == ["FROM", "RUN", "COPY", "RUN", "RUN"]
    stage = df.stages[0]
    assert stage.image[2] == "sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea"

    run = df.instructions[1]
    assert run.span == Span(2, 1, 5, 4)
    (doc1,) = run.heredocs
    assert (doc1.name, doc1.chomp, doc1.expand, doc1.fd) == ("EOF", False, True, 0)
    assert doc1.content == "set -eux\npip install --no-cache-dir torch\n"
    assert doc1.marker_span == Span(2, 5, 2, 10) and doc1.span == Span(3, 1, 5, 4)

    copy = df.instructions[2]
    (conf,) = copy.heredocs
    assert (conf.name, conf.chomp, conf.expand) == ("CONF", True, False)
    assert conf.content == "\tbatch_size=${BATCH}\n"
    assert [w.text for w in copy.words] == ['<<-"CONF"', "/etc/app/app.conf"]

    two = df.instructions[3]
    assert [(h.name, h.expand, h.marker_span) for h in two.heredocs] == [
        ("BUILD", True, Span(9, 5, 9, 12)), ("PY", False, Span(9, 30, 9, 36))]
    assert [h.content for h in two.heredocs] == ["echo building\n", 'print("hello")\n']
    assert two.span == Span(9, 1, 13, 3)
    assert df.instructions[4].span == Span(14, 1, 14, 14)


def test_escape_directive_backtick():
    doc = fixture("windows.Dockerfile")
    assert doc.errors == [] and doc.comments == []  # the directive is not a comment
    df = doc.dockerfile
    assert df.escape == "`"
    run = df.instructions[2]
    assert run.span == Span(4, 1, 5, 11)
    assert run.args == "New-Item -ItemType Directory C:\\data     -Force"
    shell = df.instructions[1]
    assert shell.exec_form and shell.exec_args == ["powershell", "-Command"]
    copy = df.instructions[3]  # a trailing backslash is no continuation under escape=`
    assert copy.span == Span(6, 1, 6, 23) and [w.text for w in copy.words] == ["train.ps1", "C:\\app\\"]


def test_crlf_and_tabs():
    doc = fixture("crlf.Dockerfile")
    assert doc.errors == []
    run = doc.dockerfile.instructions[1]
    assert run.span == Span(2, 1, 4, 10)
    assert run.args == "apk add --no-cache \tpython3 \t\tpy3-pip"
    assert [(w.text, w.span) for w in run.words][-2:] == [("python3", Span(3, 2, 3, 9)), ("py3-pip", Span(4, 3, 4, 10))]
    assert doc.dockerfile.instructions[2].exec_args == ["python3"]


def test_errors_are_reported_and_the_rest_is_read():
    doc = fixture("broken.Dockerfile")
    assert errors(doc) == [
        (2, 1, "unknown instruction: RUNN (did you mean RUN?)"),
        (3, 5, "when using JSON array syntax, arrays must be comprised of strings only"),
        (4, 5, "ENV must have two arguments"),
        (6, 5, "unterminated heredoc: no line `EOF` closes the here-document opened here"),
    ]
    df = doc.dockerfile
    assert [i.keyword for i in df.instructions] == ["FROM", "RUNN", "CMD", "ENV", "RUN", "RUN"]
    assert df.instructions[4].span == Span(5, 1, 5, 12)
    last = df.instructions[5]
    assert not last.heredocs[0].terminated and last.heredocs[0].content == "echo this heredoc is never closed\n"
    assert doc.errors[0].span == Span(2, 1, 2, 5)


# ---------------------------------------------------------------------------------------------
# BuildKit's rules, one by one


def test_keywords_are_case_insensitive_and_may_be_indented():
    doc = load_text("  from alpine:3.20 as Base\n\tonbuild run echo hi\nRun ['not', 'json']\n", "Dockerfile")
    assert doc.errors == []
    from_, onbuild, run = doc.dockerfile.instructions
    assert from_.keyword_span == Span(1, 3, 1, 7) and doc.dockerfile.stages[0].name == "base"
    assert onbuild.keyword == "ONBUILD" and onbuild.sub.keyword == "RUN"
    assert onbuild.sub.keyword_span == Span(2, 10, 2, 13) and onbuild.sub.args == "echo hi"
    assert onbuild.effective is onbuild.sub
    assert run.keyword == "RUN" and not run.exec_form  # single quotes are not JSON: shell form


@pytest.mark.parametrize("text, exec_args", [
    ('CMD ["python", "train.py"]', ["python", "train.py"]),
    ('CMD [ "a" , "b" ]  ', ["a", "b"]),
    ("CMD []", []),
    ("CMD [python, train.py]", None),
    ('CMD ["unterminated]', None),
    ('CMD ["a"] trailing', None),  # BuildKit (json.Unmarshal) falls back to shell form; v0.12 read the array
])
def test_exec_form_is_a_json_array_of_strings(text, exec_args):
    doc = load_text("FROM a\n" + text + "\n", "Dockerfile")
    cmd = doc.dockerfile.instructions[1]
    assert doc.errors == []
    assert cmd.exec_form is (exec_args is not None) and cmd.exec_args == exec_args


def test_continuation_at_eof_leaves_an_empty_instruction_docker_accepts():
    doc = load_text("FROM a\nRUN \\\n", "Dockerfile")
    assert doc.errors == []
    run = doc.dockerfile.instructions[1]
    assert run.keyword == "RUN" and run.args == "" and run.args_span is None


def test_escaped_escape_is_no_continuation():
    doc = load_text("FROM a\nRUN echo c:\\\\\nRUN echo b\n", "Dockerfile")
    assert [i.span.line for i in doc.dockerfile.instructions] == [1, 2, 3]


def test_parser_directives_only_at_the_top():
    late = load_text("FROM a\n# escape=`\nRUN echo `\n", "Dockerfile")
    assert late.dockerfile.escape == "\\" and late.comments[0].text == "escape=`"
    after_blank = load_text("\n# escape=`\nFROM a\n", "Dockerfile")
    assert after_blank.dockerfile.directives == []
    after_comment = load_text("# hello\n# syntax=docker/dockerfile:1\nFROM a\n", "Dockerfile")
    assert after_comment.dockerfile.directives == [] and len(after_comment.comments) == 2
    check = load_text("# check=skip=JSONArgsRecommended\n#Syntax = docker/dockerfile:1\nFROM a\n", "Dockerfile")
    assert [d.name for d in check.dockerfile.directives] == ["check", "syntax"] and check.comments == []


def test_directive_errors():
    doc = load_text("# syntax=a\n# syntax=b\n# escape=x\nFROM a\n", "Dockerfile")
    assert errors(doc) == [(2, 1, "only one syntax parser directive can be used"),
                           (3, 1, "invalid escape token 'x' does not match ` or \\")]


def test_from_forms_and_their_errors():
    doc = load_text(
        "ARG BASE=ubuntu\nARG TAG\nARG REG=${BASE}x\n"
        "FROM $BASE\nFROM ${BASE}:${TAG}\nFROM ${TAG:-24.04}\nFROM ${TARGETARCH:-amd64}/img\nFROM scratch\n"
        "FROM ${REG}\nFROM a b\nFROM img AS 1st\nFROM \"quoted\"\n", "Dockerfile")
    stages = doc.dockerfile.stages
    assert [s.base_resolved for s in stages] == [
        "ubuntu", None, "24.04", None, "scratch", "ubuntux", "a", "img", "quoted"]
    assert stages[4].is_scratch and not stages[4].is_image
    assert errors(doc) == [
        (10, 6, "FROM requires either one or three arguments"),
        (11, 13, 'invalid name for build stage: "1st", name can\'t start with a number or contain symbols'),
    ]


def test_stage_reference_needs_an_earlier_stage():
    doc = load_text("FROM later\nFROM alpine AS later\nFROM later\n", "Dockerfile")
    first, second, third = doc.dockerfile.stages
    assert first.parent_stage is None and first.is_image  # names a stage only after it is defined
    assert third.parent_stage == 1 and not third.is_image


def test_no_build_stage():
    assert errors(load_text("RUN echo hi\nFROM a\n", "Dockerfile")) == [
        (1, 1, "no build stage in current context: RUN comes before the first FROM")]
    assert errors(load_text("ARG A=1\n", "Dockerfile")) == [
        (1, 1, "dockerfile contains no stages to build: there is no FROM instruction")]
    empty = load_text("# only a comment\n\n", "Dockerfile")
    assert errors(empty) == [(1, 1, "file with no instructions")] and empty.dockerfile is None
    assert len(empty.comments) == 1


def test_argument_count_errors():
    doc = load_text("FROM a\nCOPY onlyone\nWORKDIR\nEXPOSE\nENV A=1 B\nLABEL =x\nSHELL bash -c\n"
                    "HEALTHCHECK CMD\nHEALTHCHECK NONE x\nONBUILD ONBUILD RUN x\nONBUILD FROM b\n", "Dockerfile")
    assert errors(doc) == [
        (2, 6, "COPY requires at least two arguments, but only one was provided. Destination could not be determined"),
        (3, 1, "WORKDIR requires exactly one argument"),
        (4, 1, "EXPOSE requires at least one argument"),
        (5, 9, "Syntax error - can't find = in \"B\". Must be of the form: name=value"),
        (6, 7, "LABEL names can not be blank"),
        (7, 7, "SHELL requires the arguments to be in JSON form"),
        (8, 13, "Missing command after HEALTHCHECK CMD"),
        (9, 13, "HEALTHCHECK NONE takes no arguments"),
        (10, 9, "Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed"),
        (11, 9, "FROM isn't allowed as an ONBUILD trigger"),
    ]


def test_flags_follow_buildkit():
    doc = load_text("FROM a\nCOPY --chown='1 2' --link --from=x -- --weird /dst\nRUN --network none echo\n",
                    "Dockerfile")
    copy, run = doc.dockerfile.instructions[1:]
    assert copy.flag("chown").value == "1 2" and copy.flag("chown").span == Span(2, 6, 2, 19)
    assert copy.flag("link").value is None and copy.flag("link").value_span is None
    assert [w.text for w in copy.words] == ["--weird", "/dst"]  # `--` ends the flags
    assert list(run.flags) == ["network"] and run.args == "none echo"  # only --name=value form


def test_custom_frontend_defines_its_own_instructions():
    doc = load_text("# syntax=devthefuture/dockerfile-x\nFROM a\nINCLUDE ./base.dockerfile\n", "Dockerfile")
    assert doc.errors == [] and doc.dockerfile.instructions[1].keyword == "INCLUDE"
    assert not doc.dockerfile.instructions[1].is_known


def test_heredoc_needs_an_unquoted_marker_word():
    # `cat<<EOF` is one word that does not start with `<<`: BuildKit reads no heredoc, so the
    # next lines are instructions (here an unknown one).
    doc = load_text("FROM a\nRUN cat<<EOF\nhello\nEOF\n", "Dockerfile")
    assert [i.keyword for i in doc.dockerfile.instructions] == ["FROM", "RUN", "HELLO", "EOF"]
    exec_form = load_text('FROM a\nRUN ["<<EOF"]\n', "Dockerfile")
    assert exec_form.dockerfile.instructions[1].heredocs == ()


def test_decode_error_is_a_parse_issue():
    doc = load(b"FROM a\n\xff\xfe\xfa\n", "Dockerfile")
    assert doc.dockerfile is None and doc.errors[0].span.line == 2


# ---------------------------------------------------------------------------------------------
# Properties

_PIECES = ["FROM", "from", "RUN", "COPY", "ADD", "ARG", "ENV", "LABEL", "CMD", "ENTRYPOINT", "ONBUILD", "FOO",
           "HEALTHCHECK", "SHELL", "a", "b=c", "--from=x", "--mount=type=cache,target=/r", "--link", "'s t'",
           '"q w"', "<<EOF", "<<-EOF", "<<'EOT'", "3<<EOF", "EOF", "EOT", "${A:-b}", "$A", "AS", "#", "\\", "`",
           "# escape=`", "# syntax=x", '["a", "b"]', '["a", 1]', "[a]", "\t", " ", "\n", "\r\n", "\n\n", "é", "\u2028"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=40).map(" ".join))
def test_arbitrary_text_never_raises_and_spans_stay_inside(text):
    load(text.encode("utf-8", "surrogatepass"), "Dockerfile")  # bytes in: never raises
    doc = load_text(text, "Dockerfile")
    lines = text.split("\n")

    def inside(span: Span) -> bool:
        if tuple(span) == (1, 1, 1, 2):
            return True
        if not (1 <= span.line <= span.end_line <= len(lines)):
            return False
        return 1 <= span.col <= len(lines[span.line - 1]) + 1 and span.end_col <= len(lines[span.end_line - 1]) + 1

    for issue in doc.errors:
        assert inside(issue.span)
    if doc.dockerfile is None:
        return
    for ins in doc.dockerfile.instructions:
        spans = [ins.span, ins.keyword_span, *(w.span for w in ins.words),
                 *(f.span for fs in ins.flags.values() for f in fs),
                 *(h.span for h in ins.heredocs), *(h.marker_span for h in ins.heredocs)]
        if ins.args_span is not None:
            spans.append(ins.args_span)
        assert all(inside(span) for span in spans), ins


def _buildkit_view(commands):
    """What the BuildKit wrapper reports, reduced to what both parsers define the same way."""
    out = []
    for c in commands:
        if not c.cmd:
            continue
        out.append((c.cmd.lower(), c.sub_cmd.lower() if c.sub_cmd else None, tuple(c.flags), c.json,
                    tuple((h.name, h.file_descriptor, h.content) for h in c.heredocs)))
    return out


def _our_view(doc):
    out = []
    for ins in doc.dockerfile.instructions if doc.dockerfile else ():
        flags = tuple(f"--{f.name}" + (f"={f.value}" if f.value is not None else "")
                      for _, f in sorted((f.span, f) for fs in ins.flags.values() for f in fs))
        heredocs = () if ins.sub else tuple((h.name, h.fd, h.content) for h in ins.heredocs)
        out.append((ins.keyword.lower(), ins.sub.keyword.lower() if ins.sub else None, flags,
                    ins.effective.exec_form, heredocs))
    return out


_PARSER_ERRORS = ("unterminated heredoc", "when using JSON array", "must have two arguments",
                  "Syntax error - can't find", "parser directive can be used", "invalid escape token",
                  "file with no instructions")
_LINE = st.tuples(
    st.sampled_from(["", " ", "\t"]),
    st.sampled_from(["FROM", "run", "RUN", "COPY", "ADD", "ARG", "ENV", "LABEL", "CMD", "ENTRYPOINT", "ONBUILD RUN",
                     "ONBUILD COPY", "HEALTHCHECK", "USER", "FOO", "VOLUME", "EXPOSE"]),
    st.lists(st.sampled_from(["a", "b=c", "--from=x", "--link", "--chown='1 2'", "--", '"q w"', "'s t'", "<<EOF",
                              "<<-EOF", "<<'EOT'", "3<<EOF", "<<EOF>f", "x\\ y", "${A:-b}", "it's", "#", "é", "`"]),
             max_size=4).map(" ".join),
    st.lists(st.tuples(st.sampled_from([" \\", "\\", " \\  ", " `"]),
                       st.sampled_from(["", "# comment", "  # c \\", "   "]),
                       st.sampled_from(["  x", "y", "  && z", "\\", "--p=q"])), max_size=2),
    st.sampled_from([[], ["body", "EOF"], ["\tb", "\tEOF"], ["EOT"], ["x", "EOF", "EOT"]]),
)


def _render(parts) -> list[str]:
    lead, keyword, args, continuations, body = parts
    lines = [lead + keyword + " " + args]
    for tail, between, more in continuations:
        lines[-1] += tail
        if between:
            lines.append(between)
        lines.append(more)
    return lines + list(body)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([[], ["# escape=`"], ["# syntax=docker/dockerfile:1"], ["# escape=x"]]),
       st.lists(_LINE, max_size=8), st.sampled_from(["\n", "\r\n"]))
def test_same_structure_as_buildkit(directives, lines, newline):
    """Differential test against BuildKit's own parser (v0.12.5, through the `dockerfile` package)."""
    dockerfile = pytest.importorskip("dockerfile")
    text = newline.join(directives + [line for parts in lines for line in _render(parts)]) + newline
    ours = load_text(text, "Dockerfile")
    parser_errors = [e for e in ours.errors if any(p in e.message for p in _PARSER_ERRORS)]
    try:
        theirs = _buildkit_view(dockerfile.parse_string(text))
    except dockerfile.GoParseError:
        assert parser_errors, text
        return
    mine = _our_view(ours)
    if any(t[3] and not m[3] for t, m in zip(theirs, mine, strict=False)):
        return  # a JSON array followed by more text: v0.12 read it as JSON, current BuildKit does not
    assert not parser_errors, text
    assert mine == theirs, text


# ---------------------------------------------------------------------------------------------
# The realistic ML Dockerfiles (ml/): the same structure as BuildKit's parser, FROM resolved


ML = sorted(p for p in (FIXTURES / "ml").rglob("*") if p.is_file())


@pytest.mark.parametrize("path", ML, ids=lambda p: p.relative_to(FIXTURES / "ml").as_posix())
def test_realistic_ml_dockerfiles_parse_as_buildkit_does(path):
    dockerfile = pytest.importorskip("dockerfile")
    text = path.read_text()
    doc = load_text(text, path.name)
    assert doc.errors == [] and doc.dockerfile.path == path.name
    theirs = [(c.cmd.upper(), c.start_line, c.end_line, tuple(h.content for h in c.heredocs))
              for c in dockerfile.parse_string(text)]
    ours = [(i.keyword, i.span.line, i.span.end_line, tuple(h.content for h in i.heredocs))
            for i in doc.dockerfile.instructions]
    assert ours == theirs


def test_realistic_from_forms_resolve():
    bases = {p.relative_to(FIXTURES / "ml").as_posix(): [s.base_resolved for s in load_text(p.read_text(), p.name).dockerfile.stages]
             for p in ML}
    assert bases["horovod/Dockerfile-mpi"] == ["nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04"]  # ARG before FROM
    assert bases["notebook/Dockerfile"] == ["quay.io/jupyter/pytorch-notebook"]  # FROM ${BASE_IMAGE}
    assert bases["train.Dockerfile"][1].startswith("pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:")
    train = load_text((FIXTURES / "ml" / "train.Dockerfile").read_text(), "train.Dockerfile").dockerfile
    assert train.stages[0].platform == "$BUILDPLATFORM" and train.stages[0].name == "wheels"
    deepspeed = load_text((FIXTURES / "ml" / "deepspeed" / "Dockerfile").read_text(), "Dockerfile").dockerfile
    workdir = deepspeed.instructions[4]
    assert workdir.keyword == "WORKDIR" and workdir.args == "/workspace" and workdir.args_span == Span(14, 9, 14, 19)  # a tab


# ---------------------------------------------------------------------------------------------
# Shell commands of RUN, CMD and ENTRYPOINT


def commands(text: str):
    doc = load_text(text, "Dockerfile")
    assert doc.errors == []
    return [(c.heredoc, [a.text for a in c.assignments], [(w.text, tuple(w.span)) for w in c.words])
            for i in doc.dockerfile.instructions for c in i.commands]


def test_commands_split_on_operators_with_word_positions():
    found = commands("FROM a\nRUN apt-get update && \\\n    # a comment line\n    HOROVOD_WITH_PYTORCH=1 pip install 'a b' \"c\\\"d\" $(echo x) 2>&1 >/dev/null; ls|wc -l\n")
    assert found == [
        (False, [], [("apt-get", (2, 5, 2, 12)), ("update", (2, 13, 2, 19))]),
        (False, ["HOROVOD_WITH_PYTORCH=1"], [("pip", (4, 28, 4, 31)), ("install", (4, 32, 4, 39)), ("a b", (4, 40, 4, 45)),
                                            ('c"d', (4, 46, 4, 52)), ("$(echo x)", (4, 53, 4, 62))]),
        (False, [], [("ls", (4, 80, 4, 82))]),
        (False, [], [("wc", (4, 83, 4, 85)), ("-l", (4, 86, 4, 88))]),
    ]


def test_heredoc_scripts_are_commands_only_when_a_shell_runs_them():
    found = commands(
        "FROM a\nRUN <<EOF\nif true; then\n  cat > /etc/pip.conf <<-CONF\n\t[global]\n\tCONF\n  pip install x  # hi\nfi\nEOF\n"
        "RUN python3 <<PY\nimport os\nPY\nRUN <<EOF\n#!/usr/bin/env python3\nprint(1)\nEOF\nRUN bash -e <<SH\nls\nSH\n")
    assert found == [
        (True, [], [("true", (3, 4, 3, 8))]),
        (True, [], [("cat", (4, 3, 4, 6))]),  # the nested heredoc's body is skipped
        (True, [], [("pip", (7, 3, 7, 6)), ("install", (7, 7, 7, 14)), ("x", (7, 15, 7, 16))]),
        (True, [], [("fi", (8, 1, 8, 3))]),
        (False, [], [("python3", (10, 5, 10, 12))]),  # its body is Python
        (False, [], [("bash", (17, 5, 17, 9)), ("-e", (17, 10, 17, 12))]),
        (True, [], [("ls", (18, 1, 18, 3))]),
    ]


def test_exec_form_is_one_command_at_the_array():
    found = commands('FROM a\nRUN ["pip", "install", "x"]\nCMD exec python t.py\n')
    assert found == [(False, [], [("pip", (2, 5, 2, 28)), ("install", (2, 5, 2, 28)), ("x", (2, 5, 2, 28))]),
                     (False, [], [("exec", (3, 5, 3, 9)), ("python", (3, 10, 3, 16)), ("t.py", (3, 17, 3, 21))])]
