"""The shell loader: az aks commands with exact spans, resolved variables, tolerant reading."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlops_lint.model.azcli import UNKNOWN, canonical, is_known, is_switch
from mlops_lint.model.document import SHELL
from mlops_lint.model.position import Span
from mlops_lint.sources.shell import is_shell_shebang, load, load_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sources" / "shell"


def fixture(name: str):
    return load((FIXTURES / name).read_bytes(), f"fixtures/sources/shell/{name}")


def options(az) -> list[tuple[str, Span, list[tuple[str, object, Span]]]]:
    return [(o.name, o.span, [(v.raw, v.value, v.span) for v in o.values]) for o in az.options]


def only_az(text: str):
    doc = load_text(text, "script.sh")
    assert len(doc.shell.az_commands) == 1, doc.shell.az_commands
    return doc.shell.az_commands[0]


# ---------------------------------------------------------------------------------------------
# The article's scripts


def test_article_gpu_node_pool():
    doc = fixture("gpu-nodepool.sh")
    assert doc.kind == SHELL and doc.errors == []
    script = doc.shell
    assert [(a.name, a.value, a.span) for a in script.assignments] == [
        ("RESOURCE_GROUP", "myResourceGroup", Span(5, 1, 5, 31)),
        ("AKS_CLUSTER", "myAKSCluster", Span(6, 1, 6, 25)),
    ]
    (az,) = script.az_commands
    assert (az.group, az.verb, az.span) == ("aks nodepool", "add", Span(8, 1, 19, 35))
    assert options(az) == [
        ("--resource-group", Span(9, 3, 9, 19), [('"$RESOURCE_GROUP"', "myResourceGroup", Span(9, 20, 9, 37))]),
        ("--cluster-name", Span(10, 3, 10, 17), [('"$AKS_CLUSTER"', "myAKSCluster", Span(10, 18, 10, 32))]),
        ("--name", Span(11, 3, 11, 9), [("gpunp", "gpunp", Span(11, 10, 11, 15))]),
        ("--mode", Span(12, 3, 12, 9), [("User", "User", Span(12, 10, 12, 14))]),
        ("--node-vm-size", Span(13, 3, 13, 17),
         [("Standard_NC4as_T4_v3", "Standard_NC4as_T4_v3", Span(13, 18, 13, 38))]),
        ("--node-count", Span(14, 3, 14, 15), [("0", "0", Span(14, 16, 14, 17))]),
        ("--enable-cluster-autoscaler", Span(15, 3, 15, 30), []),
        ("--min-count", Span(16, 3, 16, 14), [("0", "0", Span(16, 15, 16, 16))]),
        ("--max-count", Span(17, 3, 17, 14), [("4", "4", Span(17, 15, 17, 16))]),
        ("--labels", Span(18, 3, 18, 11), [("accelerator=nvidia", "accelerator=nvidia", Span(18, 12, 18, 30)),
                                           ("workload=training", "workload=training", Span(18, 31, 18, 48))]),
        ("--node-taints", Span(19, 3, 19, 16), [("sku=gpu:NoSchedule", "sku=gpu:NoSchedule", Span(19, 17, 19, 35))]),
    ]
    assert az.flags["--enable-cluster-autoscaler"] == []
    assert [v.value for v in az.flags["--labels"]] == ["accelerator=nvidia", "workload=training"]
    assert az.value("-s").value == "Standard_NC4as_T4_v3"  # aliases match
    assert az.has("--enable-cluster-autoscaler", "-e") and not az.has_unknown_words and az.positional == ()
    assert [c.name for c in script.commands] == ["set", "az"]
    assert [(c.line, c.own_line, c.next_line) for c in doc.comments] == [(1, True, 3), (2, True, 3)]


def test_article_autoscaler_scripts():
    doc = fixture("autoscaler.sh")
    assert doc.errors == []
    update_pool, profile, blob = doc.shell.az_commands
    assert update_pool.is_("aks nodepool", "update") and update_pool.span == Span(6, 1, 12, 16)
    assert update_pool.value("--name").raw == '"$GPU_NODE_POOL"' and update_pool.value("--name").value == "gpunp"
    assert profile.is_("aks", "update") and profile.span == Span(15, 1, 22, 37)
    option = profile.flag("--ca-profile")
    assert option.name == "--cluster-autoscaler-profile" and option.span == Span(18, 3, 18, 31)
    assert [(v.value, v.span) for v in option.values] == [
        ("scan-interval=20s", Span(19, 5, 19, 22)),
        ("scale-down-unneeded-time=10m", Span(20, 5, 20, 33)),
        ("scale-down-delay-after-add=15m", Span(21, 5, 21, 35)),
        ("max-graceful-termination-sec=120", Span(22, 5, 22, 37)),
    ]
    assert blob.is_("aks", "update") and options(blob)[-1] == ("--enable-blob-driver", Span(27, 3, 27, 23), [])
    assert doc.comments[1].text == "Cluster-wide autoscaler profile" and doc.comments[1].next_line == 15


def test_pasted_docs_script():
    doc = fixture("pasted-docs.sh")
    assert doc.errors == []
    script = doc.shell
    values = {a.name: a.value for a in script.assignments}
    assert values == {"RESOURCE_GROUP": "ml-rg", "CLUSTER": "ml-aks", "LOCATION": "eastus",
                      "VM_SIZE": "Standard_NC24ads_A100_v4", "SUBNET_ID": UNKNOWN, "pool": UNKNOWN}
    assert [(a.name, a.keyword) for a in script.assignments[:2]] == [
        ("RESOURCE_GROUP", "export"), ("CLUSTER", "readonly")]
    assert script.assignments[0].span == Span(3, 8, 3, 30)
    create, loop_update, show, mig, spot = script.az_commands

    # `$ ` prompt, a comment line and a blank line inside the continuation, --no-wait after a switch
    assert create.is_("aks", "create") and create.span == Span(9, 3, 17, 34)
    assert [o.name for o in create.options] == ["--resource-group", "--name", "--node-count", "--vnet-subnet-id",
                                                "--enable-managed-identity", "--generate-ssh-keys", "--no-wait"]
    assert create.value("-g").raw == "$RESOURCE_GROUP" and create.value("-g").value == "ml-rg"
    assert create.value("--vnet-subnet-id").value is UNKNOWN  # from $(az network ...)
    assert create.value("--node-count").span == Span(13, 18, 13, 19)
    assert (12, 5, "the system pool") in [(c.line, c.col, c.text) for c in doc.comments]

    # for ... do ... done: the loop variable is unknown
    assert loop_update.is_("aks nodepool", "update") and loop_update.span == Span(23, 3, 24, 60)
    assert loop_update.value("--name").value is UNKNOWN and loop_update.value("--name").span == Span(23, 94, 23, 101)
    assert loop_update.has("-u") and loop_update.value("--max-count").value == "3"

    # if ...; then sudo az ...: --flag=value, short aliases kept as written, zones, quoted taints
    assert show.is_("aks", "show") and show.span == Span(26, 4, 26, 50)
    assert mig.is_("aks nodepool", "add") and mig.span == Span(27, 8, 29, 67)
    assert options(mig)[1] == ("--cluster-name", Span(27, 49, 27, 63), [('"$CLUSTER"', "ml-aks", Span(27, 64, 27, 74))])
    assert "-s" in mig.flags and mig.flag("--node-vm-size").name == "-s"
    assert mig.value("--node-vm-size").value == "Standard_NC24ads_A100_v4"
    assert mig.value("--gpu-instance-profile").span == Span(28, 42, 28, 47)
    assert [v.value for v in mig.values("-z")] == ["1", "2", "3"]
    assert mig.flag("-e").values == () and mig.value("--min-count").value == "0"
    assert mig.value("--node-taints").value == "sku=gpu:NoSchedule"
    assert options(mig)[-1] == (
        "--labels", Span(29, 40, 29, 48), [("accelerator=nvidia", "accelerator=nvidia", Span(29, 49, 29, 67))])

    # placeholders stay text, a negative number is a value, an unset variable is unknown
    assert spot.value("--resource-group").value == "<resource-group>"
    assert spot.value("--resource-group").span == Span(32, 38, 32, 54)
    assert spot.value("--spot-max-price").value == "-1"
    assert spot.value("--node-vm-size").value is UNKNOWN
    assert spot.span == Span(32, 1, 33, 95)
    assert (33, 98, "spot pool", False) in [(c.line, c.col, c.text, c.own_line) for c in doc.comments]


def test_markdown_snippet_with_prompts_fences_and_output():
    doc = fixture("readme-snippet.sh")
    assert doc.errors == []
    (az,) = doc.shell.az_commands
    assert az.span == Span(4, 3, 7, 37)
    assert options(az) == [
        ("--resource-group", Span(5, 5, 5, 21), [("$RG", "ml-rg", Span(5, 22, 5, 25))]),
        ("--cluster-name", Span(5, 26, 5, 40), [("$CLUSTER", "ml-aks", Span(5, 41, 5, 49))]),
        ("--name", Span(6, 5, 6, 11), [("a100", "a100", Span(6, 12, 6, 16))]),
        ("--node-vm-size", Span(6, 17, 6, 31),
         [("Standard_NC24ads_A100_v4", "Standard_NC24ads_A100_v4", Span(6, 32, 6, 56))]),
        ("--node-taints", Span(7, 5, 7, 18), [("sku=gpu:NoSchedule", "sku=gpu:NoSchedule", Span(7, 19, 7, 37))]),
    ]
    names = [c.name for c in doc.shell.commands]
    assert names[0] == "export" and names[-1] == "kubectl" and "Output:" in names  # output lines are harmless


def test_unterminated_quote_is_reported_once_and_the_rest_is_read():
    doc = fixture("broken-quote.sh")
    assert [(e.span, e.message) for e in doc.errors] == [(
        Span(4, 6, 4, 7),
        "unterminated single quote: no closing ' before the end of the file; "
        "this command was skipped and reading resumed on the next line")]
    before, after = doc.shell.az_commands
    assert before.is_("aks", "update") and before.span == Span(3, 1, 3, 52)
    assert after.is_("aks nodepool", "add") and after.span == Span(5, 1, 5, 94)
    assert after.value("-g").value == "rg1" and after.value("--node-vm-size").span == Span(5, 78, 5, 94)


# ---------------------------------------------------------------------------------------------
# Reading rules


def test_operators_split_commands():
    doc = load_text("az aks get-credentials -g rg -n c && az aks nodepool add -n p1 || echo no; "
                    "az aks nodepool update -n p2 | tee log &\n", "s.sh")
    assert [(a.group, a.verb, a.span) for a in doc.shell.az_commands] == [
        ("aks", "get-credentials", Span(1, 1, 1, 34)),
        ("aks nodepool", "add", Span(1, 38, 1, 63)),
        ("aks nodepool", "update", Span(1, 76, 1, 104)),
    ]
    assert [c.name for c in doc.shell.commands] == ["az", "az", "echo", "az", "tee"]


def test_prefixes_are_removed():
    for prefix in ("sudo -E ", "time ", "AZURE_CORE_ONLY_SHOW_ERRORS=1 ", "env -i A=1 ", "then ", "do ", "! ", "{ "):
        az = only_az(prefix + "az aks update -n c\n")
        assert az.span.col == len(prefix) + 1, prefix
    doc = load_text("AZURE_CORE_OUTPUT=json az aks update -n c\n", "s.sh")
    assert [(a.name, a.scope) for a in doc.shell.assignments] == [("AZURE_CORE_OUTPUT", "command")]


def test_flag_equals_value_and_switches():
    az = only_az('az aks nodepool add --name=gpu --labels=a=b --enable-fips-image --max-pods 30 '
                 '--enable-msi-auth-for-monitoring true -y --cluster-autoscaler-profile ""\n')
    assert options(az) == [
        ("--name", Span(1, 21, 1, 27), [("gpu", "gpu", Span(1, 28, 1, 31))]),
        ("--labels", Span(1, 32, 1, 40), [("a=b", "a=b", Span(1, 41, 1, 44))]),
        ("--enable-fips-image", Span(1, 45, 1, 64), []),
        ("--max-pods", Span(1, 65, 1, 75), [("30", "30", Span(1, 76, 1, 78))]),
        ("--enable-msi-auth-for-monitoring", Span(1, 79, 1, 111), [("true", "true", Span(1, 112, 1, 116))]),
        ("-y", Span(1, 117, 1, 119), []),
        ("--cluster-autoscaler-profile", Span(1, 120, 1, 148), [('""', "", Span(1, 149, 1, 151))]),
    ]
    assert is_switch("--enable-cluster-autoscaler") and is_switch("-e") and not is_switch("--enable-addons")
    assert canonical("--ca-profile") == "--cluster-autoscaler-profile"


def test_variables_resolve_in_order():
    doc = load_text(
        'A=one\nB="$A two"\nC=${A:-x}\nD=${NOPE:-x}\nE=\nF=${E:-dflt}\nG=${E-unset-only}\nA=three\n'
        "H='$A'\nI=$(date)\nJ=`hostname`\nK=~/x\nL=$A\nunset A\nM=${A:-gone}\nN=$'a\\tb'\nO=x\nO+=y\n"
        "declare -i P=3\nexport Q\nread -r R S\n", "s.sh")
    values = {a.name: a.value for a in doc.shell.assignments}
    assert values == {"A": "three", "B": "one two", "C": "one", "D": "x", "E": "", "F": "dflt", "G": "",
                      "H": "$A", "I": UNKNOWN, "J": UNKNOWN, "K": UNKNOWN, "L": "three", "M": "gone",
                      "N": "a\tb", "O": "xy", "P": UNKNOWN, "R": UNKNOWN, "S": UNKNOWN}
    assert [a.keyword for a in doc.shell.assignments if a.name in ("P", "R")] == ["declare", "read", ]


def test_a_default_is_the_value_of_a_variable_the_script_never_sets():
    # `${NAME:-default}` / `${NAME-default}`: the value the script runs with (real AKS scripts set
    # their GPU VM size so); `${NAME:+x}`, a bare `$NAME` and an empty default (`set -u`'s guard of
    # a value given from outside, `${EXTRA_ARGS:-}`) stay unknown; after `source` or `.`
    # the sourced file may set any variable: defaults are unknown from there on
    doc = load_text('SIZE=${GPU_VM_SIZE:-Standard_NC24ads_A100_v4}\nB=${NOPE-b}\nC=${NOPE:+c}\nD=$NOPE\nG=${NOPE:-}\n'
                    'az aks nodepool add -n gpu --node-vm-size "${VM:-Standard_NC6s_v3}"\n'
                    '. ./env.sh\nE=${NOPE:-e}\nF=${SIZE:-f}\n', "s.sh")
    values = {a.name: a.value for a in doc.shell.assignments}
    assert values == {"SIZE": "Standard_NC24ads_A100_v4", "B": "b", "C": UNKNOWN, "D": UNKNOWN, "G": UNKNOWN,
                      "E": UNKNOWN,
                      "F": "Standard_NC24ads_A100_v4"}
    assert doc.shell.az_commands[0].value("--node-vm-size").value == "Standard_NC6s_v3"
    doc = load_text('if [ -f env.sh ]; then source env.sh; fi\nA=${NOPE:-a}\n', "s.sh")
    assert [a.value for a in doc.shell.assignments] == [UNKNOWN]


def test_a_gpu_pool_sized_by_a_default_is_checked(tmp_path: Path):
    # an untainted pool whose GPU VM size is a `${VAR:-default}` gets AKS001 as if written out
    from mlops_lint.config import Config
    from mlops_lint.engine import LintRequest, lint
    from mlops_lint.registry import load_registry

    (tmp_path / "pool.sh").write_text(
        '#!/usr/bin/env bash\nGPU_VM_SIZE=${GPU_VM_SIZE:-Standard_NC24ads_A100_v4}\n'
        'az aks nodepool add -g rg --cluster-name c -n gpu --node-vm-size "$GPU_VM_SIZE"\n', encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["AKS001"],
                              cwd=tmp_path, jobs=1))
    assert [(r.rule, r.path, r.span.line) for r in report.active] == [("AKS001", "pool.sh", 3)]


def test_unquoted_expansion_splits_into_fields():
    az = only_az('LABELS="a=b c=d"\naz aks nodepool add --labels $LABELS --tags "$LABELS" --name "$NOPE" $EXTRA\n')
    assert [(v.value, v.span) for v in az.values("--labels")] == [
        ("a=b", Span(2, 30, 2, 37)), ("c=d", Span(2, 30, 2, 37))]
    assert [v.value for v in az.values("--tags")] == ["a=b c=d"]
    assert az.value("--name").value is UNKNOWN
    assert az.has_unknown_words and [t.raw for t in az.positional] == ["$EXTRA"]


def test_heredocs_are_skipped():
    doc = load_text("kubectl apply -f - <<EOF\napiVersion: v1\nkind: 'Pod\n# not a comment\nEOF\n"
                    "cat <<-'END' > x.txt\n\taz aks create -n fake\n\tEND\naz aks update -n real\n", "s.sh")
    assert doc.errors == [] and doc.comments == []
    (az,) = doc.shell.az_commands
    assert az.value("-n").value == "real" and az.span == Span(9, 1, 9, 22)


def test_unterminated_heredoc():
    doc = load_text("cat <<EOF\nbody\naz aks update -n after\n", "s.sh")
    assert [(e.span, e.message) for e in doc.errors] == [
        (Span(1, 5, 1, 10), "unterminated here-document: no line `EOF` closes `<<EOF`")]
    assert doc.shell.az_commands[0].value("-n").value == "after"


@pytest.mark.parametrize("text, span, what", [
    ('X=$(az aks show -g rg\naz aks update -n after\n', Span(1, 3, 1, 5), "$("),
    ('echo ${A\naz aks update -n after\n', Span(1, 6, 1, 8), "${"),
    ('echo `date\naz aks update -n after\n', Span(1, 6, 1, 7), "backtick"),
    ('echo "open\naz aks update -n after\n', Span(1, 6, 1, 7), "double quote"),
])
def test_unclosed_constructs(text, span, what):
    doc = load_text(text, "s.sh")
    assert [(e.span, e.message.split(":")[0]) for e in doc.errors] == [(span, f"unterminated {what}")]
    assert doc.shell.az_commands[0].value("-n").value == "after"


def test_multi_line_quotes_are_one_word():
    az = only_az("az aks update -n c --tags 'a=1\nb=2'\naz\n")
    assert az.values("--tags")[0].value == "a=1\nb=2" and az.values("--tags")[0].span == Span(1, 27, 2, 5)


def test_tolerant_continuations():
    az = only_az("az aks nodepool add \\   \n  --name gpu \\  # the pool\n\t--mode User\n")
    assert [(o.name, o.value.span) for o in az.options] == [
        ("--name", Span(2, 10, 2, 13)), ("--mode", Span(3, 9, 3, 13))]
    ended = load_text("az aks update -n c \\\n# done\n\necho hi\n", "s.sh")
    assert [c.name for c in ended.shell.commands] == ["az", "echo"]
    redirect = load_text("az aks show -g rg -n c \\\n  > cluster.json\n", "s.sh")
    assert [o.name for o in redirect.shell.az_commands[0].options] == ["-g", "-n"]  # no prompt: a redirection


def test_indented_lines_after_comment_lines_continue_the_command():
    az = only_az("az aks update -n c \\\n  --cluster-autoscaler-profile \\\n    # faster scans\n"
                 "    scan-interval=20s \\\n\n    max-graceful-termination-sec=120\n")
    assert [v.value for v in az.values("--cluster-autoscaler-profile")] == [
        "scan-interval=20s", "max-graceful-termination-sec=120"]
    shallower = load_text("if x; then\n  az aks update -n c \\\n    --yes \\\n  # done\n  echo next\nfi\n", "s.sh")
    assert [c.name for c in shallower.shell.commands] == ["x", "az", "echo"]


@pytest.mark.parametrize("text, value", [
    # straight-line: the last assignment holds
    ("S=a\nS=b\n", "b"),
    # a branch may or may not run: the value after it is known only if every way agrees
    ("S=a\nif c; then S=b; fi\n", UNKNOWN),
    ("if c; then S=b; else S=b; fi\n", "b"),
    ("S=a\nif c; then\n  S=b\nelif d; then\n  S=c\nelse\n  S=a\nfi\n", UNKNOWN),
    ('S=a\ncase "$E" in\n  dev) S=b ;;\n  prod) S=c ;;\nesac\n', UNKNOWN),
    ('case "$E" in\n  dev) S=b ;;\n  *) S=b ;;\nesac\n', "b"),
    ("S=a\ncase $E in\n  dev) T=1 ;;\nesac\n", "a"),
    # && / || run the assignment on a condition
    ('S=a\n[ -n "$BIG" ] && S=b\n', UNKNOWN),
    ("S=a\ntrue || S=a\n", "a"),
    # loop and function bodies may run any number of times
    ("S=a\nfor i in 1 2; do S=b; done\n", UNKNOWN),
    ("S=a\nwhile read -r l; do\n  S=b\ndone < f\n", UNKNOWN),
    ("setup() {\n  S=b\n}\nS=a\n", "a"),
    ("function setup {\n  S=b\n}\n", UNKNOWN),
])
def test_assignments_in_branches_loops_and_functions(text, value):
    az = only_az(text + 'az aks nodepool add -s "$S"\n')
    assert az.value("-s").value == value


def test_values_inside_a_block_are_the_ones_assigned_there():
    doc = load_text('for r in east west; do\n  RG=rg-ml\n  az aks nodepool add -g "$RG" -n "$r"\ndone\n', "s.sh")
    (az,) = doc.shell.az_commands
    assert az.value("-g").value == "rg-ml" and az.value("-n").value is UNKNOWN


def test_placeholders_and_the_script_path():
    doc = load_text("az aks nodepool add -g <resource-group> -n gpu\n", "deploy/pools.sh")
    (az,) = doc.shell.az_commands
    value = az.value("-g")
    assert value.value == "<resource-group>" and value.is_placeholder and value.resolved is UNKNOWN
    assert not az.value("-n").is_placeholder and az.value("-n").resolved == "gpu"
    assert doc.shell.path == "deploy/pools.sh"


def test_crlf_and_tabs():
    az = only_az("RG=rg\r\naz aks nodepool add \\\r\n\t--resource-group $RG \\\r\n\t--name gpu\r\n")
    assert az.value("--resource-group").value == "rg" and az.value("--resource-group").span == Span(3, 19, 3, 22)
    assert az.span == Span(2, 1, 4, 12)


def test_arrays_and_special_parameters_are_unknown():
    az = only_az("ZONES=(1 2 3)\naz aks nodepool add --zones ${ZONES[@]} -n \"$1\" --tags \"${#ZONES}\"\n")
    assert az.value("--zones").value is UNKNOWN and az.value("-n").value is UNKNOWN
    assert az.value("--tags").value is UNKNOWN


def test_shebang_detection():
    assert is_shell_shebang("#!/bin/bash")
    assert is_shell_shebang("#!/usr/bin/env bash")
    assert is_shell_shebang("#!/usr/bin/env -S bash -e")
    assert is_shell_shebang("#! /bin/sh")
    assert is_shell_shebang("#!/usr/bin/dash")
    assert not is_shell_shebang("#!/usr/bin/env python3")
    assert not is_shell_shebang("#!/bin/zsh")
    assert not is_shell_shebang("# not a shebang")


def test_unknown_is_a_singleton():
    assert pickle.loads(pickle.dumps(UNKNOWN)) is UNKNOWN and repr(UNKNOWN) == "UNKNOWN"
    assert not is_known(UNKNOWN) and is_known("")


def test_decode_error_is_a_parse_issue():
    doc = load(b"echo \xff\n", "s.sh")
    assert doc.shell is None and doc.errors[0].span.line == 1


# ---------------------------------------------------------------------------------------------
# Properties

_PIECES = ["az", "aks", "nodepool", "add", "update", "create", "--name", "-n", "--labels", "a=b", "=", "\\", "\n",
           "\r\n", "\t", " ", "'", '"', "`", "$(", ")", "${", "}", "$A", "A=1", "#", "<<EOF", "EOF", "<<-E", "&&", ";",
           "|", "$ ", "> ", "```", "<rg>", "for", "do", "done", "if", "then", "fi", "é", "\u2028", "~", "$'x'"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=50).map("".join))
def test_arbitrary_text_never_raises_and_spans_stay_inside(text):
    load(text.encode("utf-8", "surrogatepass"), "s.sh")  # bytes in: never raises
    doc = load_text(text, "s.sh")
    lines = text.split("\n")

    def inside(span: Span) -> bool:
        if not (1 <= span.line <= span.end_line <= len(lines)):
            return False
        return 1 <= span.col <= len(lines[span.line - 1]) + 1 and span.end_col <= len(lines[span.end_line - 1]) + 1

    spans = [e.span for e in doc.errors] + [Span(c.line, c.col, c.line, c.col + 1) for c in doc.comments]
    for command in doc.shell.commands:
        spans += [command.span, *(t.span for t in command.words)]
    for az in doc.shell.az_commands:
        spans += [az.span, *(o.span for o in az.options), *(v.span for o in az.options for v in o.values)]
    spans += [a.span for a in doc.shell.assignments]
    assert all(inside(span) for span in spans)
