"""The repairs DKR and AKS rules propose (``Finding.autofix``): which findings get one, whether it is
safe, and the exact text after it is applied; plus properties over generated Dockerfiles and
``az aks`` scripts (a fixed file loads as well as before, only the edited spans change, no line
break is removed, and a second run finds nothing to fix).

The rules are called on the loaded model directly; their plans go through the real resolver
and applier (``linter.fix.resolve``, ``linter.fix.apply``) in passes as ``--fix`` runs them, and
every pass's result is compared with a splice of the same edits done here, test-side (which
copies every character outside the edits as it is).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.fix import Plan, Replace
from mlops_lint.fix.apply import apply_fixes
from mlops_lint.fix.resolve import resolve
from mlops_lint.index import ProjectIndex
from mlops_lint.registry import load_registry
from mlops_lint.rule import RuleContext
from mlops_lint.sources import dockerfile as dockerfile_source
from mlops_lint.sources import shell as shell_source
from tests.strategies import DOCKER_LINES, FUZZ, az_scripts

REGISTRY = load_registry()
PT = "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726"
DKR_FIXED = ("DKR004", "DKR006", "DKR007")
AKS_FIXED = ("AKS001", "AKS002", "AKS003", "AKS004", "AKS006")


# ---------------------------------------------------------------------------------------------
# Test-side helpers: run one rule on a text, splice its edits


def load(text: str, name: str):
    source = shell_source if name.endswith(".sh") else dockerfile_source
    return source.load_text(text, name)


def findings(code: str, text: str, name: str | None = None, config: Config | None = None):
    name = name or ("install.sh" if code.startswith("AKS") else "Dockerfile")
    document = load(text, name)
    meta = REGISTRY.by_code[code]
    view = document.shell if name.endswith(".sh") else document.dockerfile
    if view is None:
        return []
    context = RuleContext(dict(meta.defaults), ProjectIndex([document]), config or Config())
    return list(meta.func(view, context))


def offsets(text: str):
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return lambda line, col: starts[line - 1] + col - 1


def edits_of(plans: list[Plan]) -> list[Replace]:
    found = [intent for plan in plans for intent in plan.intents]
    assert all(isinstance(e, Replace) for e in found)
    return found


def splice(text: str, edits: list[Replace]) -> str:
    """Apply non-overlapping edits (1-based, end-exclusive spans; "\\n" -> the file's first line break)."""
    at = offsets(text)
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"  # the first line break's, as apply
    ordered = sorted(edits, key=lambda e: (at(e.span.line, e.span.col), at(e.span.end_line, e.span.end_col)))
    out, pos = [], 0
    for edit in ordered:
        start, end = at(edit.span.line, edit.span.col), at(edit.span.end_line, edit.span.end_col)
        assert pos <= start <= end <= len(text), f"overlapping or outside edit {edit}"
        out += [text[pos:start], edit.text.replace("\n", newline)]
        pos = end
    return "".join(out) + text[pos:]


def fix_passes(codes: tuple[str, ...], text: str, name: str, unsafe: bool = True, config: Config | None = None
               ) -> tuple[str, int]:
    """``text`` after the fixes of ``codes`` as ``--fix`` applies them: resolve, apply what fits in
    one pass, lint again (at most 10 passes). Returns the text and the number of passes that
    changed it; each pass must equal the test-side splice of its edits."""
    for number in range(10):
        plans = [f.autofix for code in codes for f in findings(code, text, name, config)
                 if f.autofix is not None and (f.autofix.safe or unsafe)]
        fixes = [found for found in (resolve(plan, text, name) for plan in plans) if found is not None]
        assert len(fixes) == len(plans), "a DKR/AKS plan did not resolve"
        if not fixes:
            return text, number
        new, applied, _ = apply_fixes(text, name, fixes)
        assert new == splice(text, [edit for done in applied for edit in done.edits]), "bytes outside the edits changed"
        text = new
    raise AssertionError(f"still fixing after 10 passes:\n{text}")


def fix(code: str, text: str, name: str | None = None, unsafe: bool = False, config: Config | None = None) -> str:
    name = name or ("install.sh" if code.startswith("AKS") else "Dockerfile")
    return fix_passes((code,), text, name, unsafe, config)[0]


def plans(code: str, text: str, name: str | None = None) -> list[tuple[int, str | None, bool | None]]:
    """(line, title, safe) of every finding (title None without a fix)."""
    return [(f.span.line, f.autofix.title if f.autofix else None, f.autofix.safe if f.autofix else None)
            for f in findings(code, text, name)]


# ---------------------------------------------------------------------------------------------
# DKR004: --no-cache-dir right after `install`


def test_dkr004_adds_no_cache_dir_after_install_in_every_spelling():
    text = (f"FROM {PT}\nENV PYTHON=python3\n"
            "RUN pip install torch==2.4.1\n"
            "RUN apt-get update && \\\n    # a comment line inside the continuation\n    python -m pip install \\\n"
            "      -r requirements.txt && \\\n    rm -rf /var/lib/apt/lists/*\n"
            "RUN ${PYTHON} -m pip install peft==0.12.0 && pip3 install 'accelerate>=0.34'\n"
            "RUN <<EOT\nset -eux\npip install transformers==4.44.2\nEOT\n"
            'RUN ["pip", \\\n     "install", "datasets==3.0.1"]\n'
            "RUN sudo -H pip install wandb==0.18.3\n"
            "RUN uv pip install --system safetensors==0.4.5\n")
    assert fix("DKR004", text) == (
        f"FROM {PT}\nENV PYTHON=python3\n"
        "RUN pip install --no-cache-dir torch==2.4.1\n"
        "RUN apt-get update && \\\n    # a comment line inside the continuation\n    python -m pip install --no-cache-dir \\\n"
        "      -r requirements.txt && \\\n    rm -rf /var/lib/apt/lists/*\n"
        "RUN ${PYTHON} -m pip install --no-cache-dir peft==0.12.0 && pip3 install --no-cache-dir 'accelerate>=0.34'\n"
        "RUN <<EOT\nset -eux\npip install --no-cache-dir transformers==4.44.2\nEOT\n"
        'RUN ["pip", \\\n     "install", "--no-cache-dir", "datasets==3.0.1"]\n'
        "RUN sudo -H pip install --no-cache-dir wandb==0.18.3\n"
        "RUN uv pip install --no-cache --system safetensors==0.4.5\n")
    assert {safe for _, _, safe in plans("DKR004", text)} == {True}
    assert plans("DKR004", text)[0][1] == "add `--no-cache-dir` to `pip install`"


def test_dkr004_fix_keeps_crlf_and_the_finding_itself():
    text = f"FROM {PT}\r\nRUN pip install torch==2.4.1\r\n"
    assert fix("DKR004", text) == f"FROM {PT}\r\nRUN pip install --no-cache-dir torch==2.4.1\r\n"
    (finding,) = findings("DKR004", text)
    assert (finding.span.line, finding.span.col, finding.span.end_col) == (2, 5, 16)  # `pip install`, as before


def test_dkr004_leaves_pip_no_cache_dir_alone():
    text = f"FROM {PT}\nENV PIP_NO_CACHE_DIR=1\nRUN pip install torch==2.4.1\n"
    assert findings("DKR004", text) == [] and fix("DKR004", text) == text


def test_exec_form_elements_keep_their_own_positions():
    document = load(f'FROM {PT}\nRUN [ "pip",\t"in\\"stall" , \\\n  "x" ]\n', "Dockerfile")
    run = document.dockerfile.stages[0].instructions[0]
    assert [(s.line, s.col, s.end_line, s.end_col) for s in run.exec_spans] == [(2, 7, 2, 12), (2, 14, 2, 25),
                                                                                (3, 3, 3, 6)]
    assert all(w.span == run.args_span for w in run.commands[0].words)  # the words still carry args_span


# ---------------------------------------------------------------------------------------------
# DKR006: exec form for a plain command, `exec` before the last of an && chain, else nothing


def test_dkr006_plain_cmd_becomes_the_exec_form_word_by_word():
    text = (f"FROM {PT}\nCMD python \\\n    # the script\n    /workspace/train.py \\\n"
            "    --name \"my run\" --note='naïve \"q\"' --lr=0.1\n")
    assert fix("DKR006", text) == (
        f"FROM {PT}\nCMD [\"python\", \\\n    # the script\n    \"/workspace/train.py\", \\\n"
        "    \"--name\", \"my run\", \"--note=naïve \\\"q\\\"\", \"--lr=0.1\"]\n")
    assert plans("DKR006", text) == [
        (2, 'use the exec form: `CMD ["python", "/workspace/train.py", "--name", "my run", "--note=naïve \\"q\\"", '
            '"--lr=0.1"]`', True)]
    fixed = load(fix("DKR006", text), "Dockerfile").dockerfile.stages[0].instructions[0]
    assert fixed.exec_args == ["python", "/workspace/train.py", "--name", "my run", '--note=naïve "q"', "--lr=0.1"]


def test_dkr006_single_quoted_array_becomes_the_json_it_meant():
    text = f"FROM {PT}\nCMD ['python', 'train.py']\n"
    assert fix("DKR006", text) == f'FROM {PT}\nCMD ["python", "train.py"]\n'


@pytest.mark.parametrize("start, fixed, safe", [
    # an ENTRYPOINT in exec form would no longer ignore CMD and a pod's args: unsafe
    ("ENTRYPOINT python train.py", 'ENTRYPOINT ["python", "train.py"]', False),
    # behind an exec-form ENTRYPOINT the entrypoint's arguments change: unsafe
    ('ENTRYPOINT ["tini", "--"]\nCMD python train.py', 'ENTRYPOINT ["tini", "--"]\nCMD ["python", "train.py"]', False),
    # needs the shell: exec before the last command
    ("CMD cd /app && python train.py --lr $LR > /tmp/log 2>&1",
     "CMD cd /app && exec python train.py --lr $LR > /tmp/log 2>&1", False),
    ("ENTRYPOINT torchrun --nnodes=$NNODES train.py\nCMD [\"--epochs\", \"3\"]",
     "ENTRYPOINT exec torchrun --nnodes=$NNODES train.py\nCMD [\"--epochs\", \"3\"]", False),
    ("CMD python *.py", "CMD exec python *.py", False),
    # an ENTRYPOINT with a CMD in effect: exec form would append the CMD, `exec` keeps it ignored
    ("ENTRYPOINT python train.py\nCMD ['python', 't.py']", "ENTRYPOINT exec python train.py\nCMD ['python', 't.py']",
     False),
])
def test_dkr006_fix_and_its_safety(start, fixed, safe):
    text = f"FROM {PT}\n{start}\n"
    assert fix("DKR006", text, unsafe=True) == f"FROM {PT}\n{fixed}\n"
    assert [s for _, _, s in plans("DKR006", text)] == [safe]
    assert fix("DKR006", text) == (f"FROM {PT}\n{fixed}\n" if safe else text)
    assert findings("DKR006", f"FROM {PT}\n{fixed}\n") == []


@pytest.mark.parametrize("start", [
    "CMD python train.py | tee /tmp/log",  # a pipeline
    "CMD python a.py; python b.py",
    "CMD python a.py || sleep 1",
    "CMD FOO=1 python a.py",  # an assignment before the program
    "CMD cd /app",  # a shell builtin
    "CMD python a\\ b.py",  # a backslash escape
    "CMD python $(cat /args)",  # command substitution
    "CMD (python a.py)",
    'ENTRYPOINT ["python"]\nCMD train.py $X',  # the shell is the entrypoint's argument: no exec prefix
    'SHELL ["powershell", "-Command"]\nCMD python a.py',  # not a POSIX shell
    'CMD ["python", "a.py"',  # a mangled exec form: neither JSON nor a command worth an `exec`
])
def test_dkr006_no_fix_where_the_shell_is_needed_or_unknown(start):
    text = f"FROM {PT}\n{start}\n"
    assert [title for _, title, _ in plans("DKR006", text)] == [None]


def test_dkr006_no_fix_with_the_windows_escape():
    text = f"# escape=`\nFROM {PT}\nCMD python train.py\n"
    assert [title for _, title, _ in plans("DKR006", text)] == [None]


# ---------------------------------------------------------------------------------------------
# DKR007: USER 1000:1000 after the final stage (unsafe)


def test_dkr007_adds_a_user_line_after_the_final_stage():
    text = f"FROM {PT} AS base\nRUN pip install --no-cache-dir x\nFROM base\nCOPY t.py /w/\nCMD [\"python\", \"/w/t.py\"]"
    assert plans("DKR007", text) == [(3, "add `USER 1000:1000` at the end of the final stage", False)]
    assert fix("DKR007", text) == text  # unsafe: not applied without --unsafe-fixes
    assert fix("DKR007", text, unsafe=True) == text + "\nUSER 1000:1000"
    root = f"FROM {PT}\nUSER root\nRUN <<EOF\napt-get update\nEOF\n"
    assert fix("DKR007", root, unsafe=True) == f"FROM {PT}\nUSER root\nRUN <<EOF\napt-get update\nEOF\nUSER 1000:1000\n"
    assert findings("DKR007", fix("DKR007", root, unsafe=True)) == []


def test_rules_without_a_single_repair_propose_none():
    text = (f"FROM pytorch/pytorch\nFROM python:3.12-slim AS gpu\nENV NVIDIA_VISIBLE_DEVICES=all\n"
            "COPY data/ /data/\nUSER 1000\n")
    found = {code: findings(code, text, "gpu/Dockerfile") for code in ("DKR001", "DKR002", "DKR003", "DKR005")}
    assert all(found.values()), found  # each rule reports something here
    assert [f.autofix for fs in found.values() for f in fs] == [None] * sum(map(len, found.values()))


# ---------------------------------------------------------------------------------------------
# AKS: options appended to the command, values replaced in place

POOL = "az aks nodepool add \\\n  --resource-group rg --cluster-name aks \\\n  --name gpunp --mode User \\\n"


def test_aks001_appends_the_taint_on_the_commands_last_line():
    text = f"{POOL}  # the GPU size\n  --node-vm-size Standard_NC4as_T4_v3 \\\n  --labels accelerator=nvidia  # done\necho ok\n"
    assert plans("AKS001", text) == [(5, "add `--node-taints sku=gpu:NoSchedule` to `az aks nodepool add`", False)]
    assert fix("AKS001", text, unsafe=True) == (
        f"{POOL}  # the GPU size\n  --node-vm-size Standard_NC4as_T4_v3 \\\n"
        "  --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule  # done\necho ok\n")
    assert findings("AKS001", fix("AKS001", text, unsafe=True)) == []


def test_aks001_uses_the_configured_taint_and_skips_what_it_cannot_decide():
    import msgspec

    text = f"{POOL}  --node-vm-size Standard_NC4as_T4_v3 > /tmp/log\n"
    config = msgspec.structs.replace(Config(), gpu_taints=({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},))
    assert fix("AKS001", text, unsafe=True, config=config) == (
        f"{POOL}  --node-vm-size Standard_NC4as_T4_v3 --node-taints nvidia.com/gpu=present:NoSchedule > /tmp/log\n")
    prefer = f"{POOL}  --node-vm-size Standard_NC4as_T4_v3 --node-taints sku=gpu:PreferNoSchedule\n"
    create = "az aks create -g rg -n aks --node-vm-size Standard_NC6s_v3 --generate-ssh-keys\n"
    assert [t for _, t, _ in plans("AKS001", prefer)] == [None]
    assert [t for _, t, _ in plans("AKS001", create)] == [None]


def test_aks002_adds_the_label_to_labels_or_the_flag_to_the_command():
    text = (f"{POOL}  --node-vm-size Standard_NC24ads_A100_v4 \\\n  --labels workload=training team=vision \\\n"
            "  --node-taints sku=gpu:NoSchedule\n"
            "az aks nodepool add -g rg --cluster-name aks --name t4 --mode User -s Standard_NC16as_T4_v3\n"
            "az aks create -g rg -n aks2 --node-vm-size Standard_NC6s_v3 --nodepool-labels=team=ml\n")
    assert [s for _, _, s in plans("AKS002", text)] == [True, True, None]  # no word after `--x=v`
    assert fix("AKS002", text) == (
        f"{POOL}  --node-vm-size Standard_NC24ads_A100_v4 \\\n  --labels accelerator=nvidia workload=training team=vision \\\n"
        "  --node-taints sku=gpu:NoSchedule\n"
        "az aks nodepool add -g rg --cluster-name aks --name t4 --mode User -s Standard_NC16as_T4_v3 --labels accelerator=nvidia\n"
        "az aks create -g rg -n aks2 --node-vm-size Standard_NC6s_v3 --nodepool-labels=team=ml\n")
    assert [line for line, _, _ in plans("AKS002", fix("AKS002", text))] == [8]


def test_aks002_no_fix_for_a_misspelt_key_value():
    text = f"{POOL}  --node-vm-size Standard_NC24ads_A100_v4 --labels accelerator=nvida\n"
    assert [t for _, t, _ in plans("AKS002", text)] == [None]


def test_aks003_user_mode_for_added_and_updated_pools_only():
    text = ("az aks nodepool add -g rg --cluster-name aks --name t4 -s Standard_NC8as_T4_v3 --mode \"System\"\n"
            "az aks nodepool add -g rg --cluster-name aks --name h100 --mode User -s Standard_ND96isr_H100_v5\n"
            "az aks nodepool update -g rg --cluster-name aks --name h100 --mode=system\n"
            "az aks create -g rg -n aks --node-vm-size Standard_NC24ads_A100_v4\n")
    assert [(line, safe) for line, _, safe in plans("AKS003", text)] == [(1, False), (3, False), (4, None)]
    fixed = fix("AKS003", text, unsafe=True)
    assert fixed.splitlines()[0].endswith("--mode User") and fixed.splitlines()[2].endswith("--mode=User")
    assert [line for line, _, _ in plans("AKS003", fixed)] == [4]


def test_aks004_raises_a_system_minimum_and_enables_the_autoscaler_for_bounds():
    text = ("az aks create -g rg -n aks --node-vm-size Standard_D4s_v5 --enable-cluster-autoscaler \\\n"
            "  --min-count 0 --max-count 3\n"
            "az aks nodepool add -g rg --cluster-name aks -n cpu --min-count 0 --max-count 4 --node-count 1\n"
            "az aks nodepool update -g rg --cluster-name aks -n cpu --min-count 0 --max-count 4\n"
            "az aks nodepool add -g rg --cluster-name aks -n b --enable-cluster-autoscaler --min-count 4 --max-count 2\n")
    assert [(line, title, safe) for line, title, safe in plans("AKS004", text)] == [
        (2, "raise --min-count to 1", True),
        (3, "turn the cluster autoscaler on: `--enable-cluster-autoscaler`", False),
        (4, None, None), (5, None, None)]
    assert fix("AKS004", text, unsafe=True).splitlines()[:3] == [
        "az aks create -g rg -n aks --node-vm-size Standard_D4s_v5 --enable-cluster-autoscaler \\",
        "  --min-count 1 --max-count 3",
        "az aks nodepool add -g rg --cluster-name aks -n cpu --min-count 0 --max-count 4 --node-count 1 "
        "--enable-cluster-autoscaler"]
    assert [line for line, _, _ in plans("AKS004", fix("AKS004", text, unsafe=True))] == [4, 5]


def test_aks006_renames_a_close_key_when_its_value_fits():
    text = ("az aks update -g rg -n aks --cluster-autoscaler-profile scan-interval=20s \\\n"
            "  scale-down-unneded-time=10m \"max-graceful-termnation-sec=600\" expandr=fastest\n")
    assert [(line, title) for line, title, _ in plans("AKS006", text)] == [
        (2, "rename `scale-down-unneded-time` to `scale-down-unneeded-time`"),
        (2, "rename `max-graceful-termnation-sec` to `max-graceful-termination-sec`"),
        (2, None)]  # `expandr` is `expander`, but `fastest` is no expander: renaming would not help
    assert fix("AKS006", text, unsafe=True).splitlines()[1] == (
        "  scale-down-unneeded-time=10m \"max-graceful-termination-sec=600\" expandr=fastest")


# ---------------------------------------------------------------------------------------------
# Properties: generated Dockerfiles and scripts

FIXABLE_LINES = st.sampled_from([
    "RUN pip install torch==2.4.1", "RUN pip3 install -r requirements.txt && \\\n  python -m pip install \\\n  x",
    "RUN uv pip install --system y", 'RUN ["pip", "install", "z"]', "RUN <<EOF\nset -e\npip install q\nEOF",
    "CMD python train.py", "CMD python \\\n  # c\n  train.py --x 'a b'", "ENTRYPOINT python train.py",
    "CMD cd /w && python t.py $X > /tmp/l 2>&1", "CMD ['python', 't.py']", "CMD python t.py | tee l",
    'ENTRYPOINT ["tini", "--"]', "USER root", "USER 1000", f"FROM {PT}", "FROM base AS b", "",
    "CMD python 'unclosed", "CMD \"a\"'b'c", "ENTRYPOINT exec x", "CMD $PY t.py", "RUN <<EOF\npip install open",
])


def _dockerfile(lines: list[str], crlf: bool) -> str:
    text = f"FROM {PT}\n" + "\n".join(lines) + "\n"
    return text.replace("\n", "\r\n") if crlf else text


def _check_fix(text: str, name: str, codes: tuple[str, ...]) -> None:
    """Applying every fix (safe and unsafe) of ``codes`` as --fix does: no edit removes a line
    break, each pass changes only its edits, the loader reports nothing new, and the first pass's
    fixes are all there is (a second run has nothing to fix once the deferred ones are in)."""
    before = load(text, name)
    edits = edits_of([f.autofix for code in codes for f in findings(code, text, name) if f.autofix is not None])
    at = offsets(text)
    for edit in edits:
        start, end = at(edit.span.line, edit.span.col), at(edit.span.end_line, edit.span.end_col)
        assert "\n" not in text[start:end], f"an edit removes a line break: {edit}"
    fixed, passes = fix_passes(codes, text, name)
    assert passes <= 2, f"{passes} passes:\n{fixed}"  # one, or two when insertions met at one point
    after = load(fixed, name)
    assert Counter(e.message for e in after.errors) == Counter(e.message for e in before.errors), fixed
    assert fix_passes(codes, fixed, name) == (fixed, 0)


@FUZZ
@given(st.lists(st.one_of(FIXABLE_LINES, FIXABLE_LINES, DOCKER_LINES), max_size=8), st.booleans())
def test_dkr_fixes_keep_the_dockerfile_loadable_and_are_idempotent(lines, crlf):
    _check_fix(_dockerfile(lines, crlf), "Dockerfile", DKR_FIXED)


@FUZZ
@given(az_scripts())
def test_aks_fixes_keep_the_script_loadable_and_are_idempotent(script):
    _check_fix(script, "install.sh", AKS_FIXED)


@pytest.mark.parametrize("script", [
    # a terminal session: a record of what ran, with its output
    "$ az aks nodepool add -g rg --cluster-name aks --name gpu2 --node-vm-size Standard_NC6s_v3\n(BadRequest) no quota\n",
    # a README snippet with its fence
    "```bash\naz aks nodepool add -g rg --cluster-name aks --name gpu2 --node-vm-size Standard_NC6s_v3\n```\n",
    # the reader recovered from an unclosed quote: in the shell, the command is inside the string
    "echo 'never closed\naz aks nodepool add -g rg --cluster-name aks --name gpu2 --node-vm-size Standard_NC6s_v3\n",
])
def test_aks_fixes_leave_records_and_unreadable_scripts_alone(script):
    for code in ("AKS001", "AKS002"):
        found = findings(code, script)
        assert found and [f.autofix for f in found] == [None], code  # reported, not fixed
