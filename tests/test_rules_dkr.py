"""DKR001–DKR007 beyond their fixtures: Docker's semantics where the fixtures cannot show them
(file and folder names, stage inheritance), a property over the ways pip is spelled, the
realistic ML Dockerfiles of fixtures/sources/dockerfile/ml, and the training image linting clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.discover import walk
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.document import DOCKERFILE
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REALISTIC = REPO / "fixtures" / "sources" / "dockerfile" / "ml"
IMAGE = REPO / "fixtures" / "training-image"
REGISTRY = load_registry()
DKR = [f"DKR00{n}" for n in range(1, 9)]
PT = "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726"
PY = "python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea"


def run(text: str, name: str = "Dockerfile", select: list[str] | None = None):
    """Findings (line, col, rule, message) for one Dockerfile read as ``name``."""
    report = lint(LintRequest(paths=[], config=Config(), registry=REGISTRY, select=select or DKR,
                              stdin=(name, text.encode()), cwd=REPO))
    return [(r.line, r.column, r.rule, r.message) for r in report.active]


def codes(text: str, name: str = "Dockerfile", select: list[str] | None = None) -> list[tuple[int, str]]:
    return [(line, rule) for line, _, rule, _ in run(text, name, select)]


# ---------------------------------------------------------------------------------------------
# Discovery of the names ML repositories use


def test_discovery_finds_every_dockerfile_name():
    found = {f.path.relative_to(REALISTIC).as_posix() for f in walk([REALISTIC], root=None).files if f.kind == DOCKERFILE}
    assert found == {
        "deepspeed/Dockerfile", "finetune/Containerfile", "gpu/Dockerfile", "horovod/Dockerfile-mpi",
        "nccl/Dockerfile.roce", "notebook/Dockerfile", "ray/Dockerfile", "serving/Dockerfile.cpu",
        "tensorflow/Dockerfile.gpu", "train.Dockerfile", "triton/Dockerfile",
    }


# ---------------------------------------------------------------------------------------------
# The realistic ML Dockerfiles: every finding, reviewed by hand


REALISTIC_FINDINGS = {
    "deepspeed/Dockerfile": [(1, "DKR002"), (16, "DKR005"), (17, "DKR005")],
    "finetune/Containerfile": [(2, "DKR001"), (7, "DKR005"), (9, "DKR007")],
    "gpu/Dockerfile": [(1, "DKR002"), (1, "DKR003"), (1, "DKR007"), (8, "DKR004"), (9, "DKR004"), (14, "DKR004"),
                       (16, "DKR006")],
    "horovod/Dockerfile-mpi": [(5, "DKR002"), (5, "DKR007"), (22, "DKR004")],
    "nccl/Dockerfile.roce": [(3, "DKR002"), (3, "DKR007"), (15, "DKR004"), (19, "DKR006")],
    "notebook/Dockerfile": [(3, "DKR001"), (5, "DKR007"), (12, "DKR005")],
    "ray/Dockerfile": [(1, "DKR002"), (2, "DKR002"), (4, "DKR004")],
    "serving/Dockerfile.cpu": [],
    "tensorflow/Dockerfile.gpu": [(1, "DKR002"), (1, "DKR003")],
    "train.Dockerfile": [],
    "triton/Dockerfile": [(1, "DKR002"), (5, "DKR006")],
}


def test_realistic_ml_dockerfiles_give_exactly_the_reviewed_findings():
    report = lint(LintRequest(paths=[REALISTIC], config=Config(), registry=REGISTRY, select=DKR + ["SCH001"], cwd=REPO))
    prefix = REALISTIC.relative_to(REPO).as_posix() + "/"
    got: dict[str, list[tuple[int, str]]] = {name: [] for name in REALISTIC_FINDINGS}
    for r in report.active:
        got[r.path.removeprefix(prefix)].append((r.line, r.rule))
    assert {k: sorted(v) for k, v in got.items()} == REALISTIC_FINDINGS


def test_the_training_image_lints_clean_with_every_rule():
    report = lint(LintRequest(paths=[IMAGE], config=Config(), registry=REGISTRY, cwd=REPO))
    assert report.active == []
    assert sorted(Path(p).name for p, s in report.file_status.items() if s == "linted") == ["Dockerfile", "Dockerfile.cpu"]


# ---------------------------------------------------------------------------------------------
# DKR003: names say what a file is for


@pytest.mark.parametrize("name, fires", [
    ("images/gpu/Dockerfile", True),
    ("Dockerfile.cuda12", True),
    ("docker/cu121.Dockerfile", True),
    ("nvidia/Dockerfile", True),
    ("images/gpu/Dockerfile.cpu", False),  # the file's own name wins over its folder's
    ("gpu-operator-cpu/Dockerfile", False),
    ("Dockerfile-mpi", False),
    ("Dockerfile.roce", False),
])
def test_gpu_intent_from_file_and_folder_names(name, fires):
    text = f"FROM {PY}\nRUN pip install --no-cache-dir pandas==2.2.3\n"
    assert codes(text, name, ["DKR003"]) == ([(1, "DKR003")] if fires else [])


def test_gpu_evidence_is_named_in_the_message_strongest_first():
    text = (f"FROM {PY} AS gpu\nLABEL accelerator=nvidia-gpu\nENV NCCL_DEBUG=WARN\n"
            "RUN pip install --no-cache-dir nvidia-cudnn-cu12==9.1.0.70\n")
    ((line, col, rule, message),) = run(text, select=["DKR003"])
    assert (line, col, rule) == (1, 6, "DKR003")
    assert message.index("`nvidia-cudnn-cu12==9.1.0.70` (line 4)") < message.index("ENV `NCCL_DEBUG` (line 3)")
    assert message.index("ENV `NCCL_DEBUG`") < message.index("LABEL `accelerator=nvidia-gpu` (line 2)")
    assert "and 1 more" in message  # the stage name `gpu`
    assert "`python:3.12-slim`" in message and "sha256" not in message


def test_gpu_devices_hidden_or_a_cpu_variable_value_is_no_evidence():
    text = f'FROM {PY}\nENV CUDA_VISIBLE_DEVICES="" NVIDIA_VISIBLE_DEVICES=void\nARG CUDA_VERSION=cpu\n'
    assert codes(text, select=["DKR003"]) == []


# ---------------------------------------------------------------------------------------------
# DKR004: every spelling of pip install, with and without the flag (a property)


PREFIXES = ["", "sudo -H ", "env PIP_DEFAULT_TIMEOUT=60 ", "conda run -n base ", "nohup ", "cd /tmp && ",
            "apt-get update && ", "set -eux; ", "if true; then "]
PROGRAMS = [("pip", "pip"), ("pip3", "pip"), ("pip3.11", "pip"), ("/opt/conda/bin/pip", "pip"), ("python -m pip", "pip"),
            ("python3 -m pip", "pip"), ("python3.11 -u -m pip", "pip"), ("$PYTHON -m pip", "pip"),
            ("uv pip", "uv"), ("pip --log /tmp/pip.log", "pip")]
PACKAGES = ["torch==2.4.1", "-r requirements.txt", "'accelerate>=0.34'", "--upgrade pip", "-e .", "\"deepspeed==0.15.1\""]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(PREFIXES), st.sampled_from(PROGRAMS), st.lists(st.sampled_from(PACKAGES), min_size=1, max_size=3),
       st.booleans())
def test_every_pip_install_spelling_is_found_and_its_flag_honoured(prefix, program, packages, flagged):
    spelled, tool = program
    flag = "" if not flagged else (" --no-cache-dir" if tool == "pip" else " --no-cache")
    command = f"{prefix}{spelled} install{flag} {' '.join(packages)}" + (" ; fi" if "then" in prefix else "")
    text = f"FROM {PT}\nENV PYTHON=python3\nRUN {command}\n"
    found = run(text, select=["DKR004"])
    if flagged:
        assert found == [], command
    else:
        assert [(line, col) for line, col, _, _ in found] == [(3, 5 + len(prefix))], command


def test_pip_no_cache_dir_false_still_disables_the_cache():
    # pip's callback disables the cache for any valid boolean, "false" included (backwards compatibility)
    assert codes(f"FROM {PT}\nENV PIP_NO_CACHE_DIR=false\nRUN pip install torch==2.4.1\n", select=["DKR004"]) == []


def test_a_builder_stage_only_copied_from_ships_no_layer():
    text = (f"FROM {PY} AS wheels\nRUN pip install build==1.2.2\nFROM {PY} AS dev\nRUN pip install pytest==8.3.3\n"
            f"FROM {PT}\nCOPY --from=wheels /wheels /wheels\n")
    assert codes(text, select=["DKR004"]) == [(4, "DKR004")]  # `dev` is a --target of its own


def test_a_suppression_inside_a_continuation_applies_to_the_line_below():
    text = (f"FROM {PT}\nRUN apt-get update && \\\n    # mlops-lint: disable=DKR004 the cache is squashed away in CI\n"
            "    pip install deepspeed==0.15.1\n")
    assert codes(text, select=["DKR004"]) == []


# ---------------------------------------------------------------------------------------------
# DKR006 / DKR007: what the final image inherits


def test_a_later_entrypoint_resets_an_inherited_cmd_but_not_its_own_stage_cmd():
    inherited = f"FROM {PT} AS base\nCMD python serve.py\nFROM base\nENTRYPOINT [\"python\", \"train.py\"]\n"
    assert codes(inherited, select=["DKR006"]) == []
    same_stage = f"FROM {PT}\nCMD python train.py\nENTRYPOINT [\"tini\", \"--\"]\n"
    assert codes(same_stage, select=["DKR006"]) == [(2, "DKR006")]
    shell_entry = f"FROM {PT}\nENTRYPOINT python train.py\nCMD echo ignored\n"
    assert codes(shell_entry, select=["DKR006"]) == [(2, "DKR006")]  # the CMD is ignored by Docker


def test_a_user_from_an_arg_default_is_resolved():
    assert codes(f"FROM {PT}\nARG RUN_AS=root\nUSER ${{RUN_AS}}\n", select=["DKR007"]) == [(3, "DKR007")]
    assert codes(f"FROM {PT}\nARG RUN_AS=1000\nUSER ${{RUN_AS}}:1000\n", select=["DKR007"]) == []


def test_rules_point_at_the_resolved_from_and_name_it():
    ((line, col, rule, message),) = run("ARG BASE=pytorch/pytorch\nFROM ${BASE} AS train\n", select=["DKR001"])
    assert (line, col, rule) == (2, 6, "DKR001")
    assert "`${BASE}` (`pytorch/pytorch`)" in message


# ---------------------------------------------------------------------------------------------
# No input makes a DKR rule raise (a raise would be an LNT002 finding)

_KEYWORDS = ["FROM", "RUN", "COPY", "ADD", "ARG", "ENV", "LABEL", "USER", "CMD", "ENTRYPOINT", "ONBUILD RUN", "SHELL"]
_ARGS = ["python:3.12", "scratch", "$BASE", "${BASE:-x}", "AS gpu", "AS b", "b", "--platform=$X", "--from=b", "--from=0",
         "--from=ghcr.io/a/b:latest", "--mount=type=cache,target=/root/.cache/pip", "--mount=from=c:1,target=/x",
         "pip", "install", "-m", "python3", "uv", "--no-cache-dir", "&&", ";", "|", "<<EOF", "EOF", "'q w'", '"x', "\\",
         "data/", "*.pt", "https://h/x.csv", "root", "0:0", "exec", '["a", "b"]', "['a']", "[1]", "NVIDIA_VISIBLE_DEVICES=all",
         "PIP_NO_CACHE_DIR=", "torch==1+cu121", "-c", "nvidia", "apt-get", "cuda-toolkit-12-4", "$(x", "`y", "#"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_KEYWORDS), st.lists(st.sampled_from(_ARGS), max_size=6)), max_size=10),
       st.sampled_from(["Dockerfile", "gpu/Dockerfile", "Dockerfile.cpu"]))
def test_no_dockerfile_makes_a_rule_raise(lines, name):
    text = "\n".join(f"{keyword} {' '.join(args)}" for keyword, args in lines) + "\n"
    assert [f for f in run(text, name, DKR + ["LNT002"]) if f[2] == "LNT002"] == []


def test_data_patterns_option_replaces_the_default_list():
    import msgspec

    text = f"FROM {PT}\nCOPY weights/model.safetensors /models/\nCOPY raw/ /raw/\n"
    assert codes(text, select=["DKR005"]) == [(2, "DKR005")]
    config = msgspec.structs.replace(Config(), rule_options={"DKR005": {"data-patterns": ["raw/"]}})
    report = lint(LintRequest(paths=[], config=config, registry=REGISTRY, select=["DKR005"],
                              stdin=("Dockerfile", text.encode()), cwd=REPO))
    assert [(r.line, r.rule) for r in report.active] == [(3, "DKR005")]


# ---------------------------------------------------------------------------------------------
# Placeholders (linter.model.placeholder): a base image that is a stand-in is not judged


@pytest.mark.parametrize("arg", ["BASE=undefined", "BASE=unknown", "BASE=<your-base-image>", "BASE=REPLACE_ME",
                                 "BASE=your-acr.azurecr.io/trainer", "BASE=IMG_PLACEHOLDER"])
def test_placeholder_base_images_are_not_judged(arg):
    assert codes(f"ARG {arg}\nFROM $BASE\nUSER 1000\n", select=["DKR001", "DKR002"]) == []


def test_a_real_arg_default_is_still_judged():
    assert codes("ARG BASE=pytorch/pytorch\nFROM $BASE\nUSER 1000\n", select=["DKR001", "DKR002"]) == [(2, "DKR001")]
    assert codes("ARG BASE=pytorch/pytorch:2.4.1\nFROM $BASE\nUSER 1000\n", select=["DKR001", "DKR002"]) == [
        (2, "DKR002")]


def test_a_placeholder_registry_leaves_the_tag_judged():
    # `:latest` stays `latest` whatever registry the reader fills in (IMG001's rule, for FROM)
    assert codes("FROM your-acr.azurecr.io/trainer:latest\nUSER 1000\n", select=["DKR001", "DKR002"]) == [
        (1, "DKR001")]
    assert codes("FROM <registry>/trainer:2.4.1\nUSER 1000\n", select=["DKR001", "DKR002"]) == [(1, "DKR002")]


@pytest.mark.parametrize("flag,found", [("--no-cache-dir", []), ("--no-cache", []), ("-n", []),
                                        ("--no-cache-dirs", [(2, "DKR004")]), ("", [(2, "DKR004")])])
def test_uv_accepts_pips_no_cache_dir(flag, found):
    # uv's `--no-cache` has the alias `--no-cache-dir` (astral-sh/uv#1380): written so, no cache is kept
    assert codes(f"FROM {PT}\nRUN uv pip install --system {flag} torch==2.4.1\n", select=["DKR004"]) == found
# ---------------------------------------------------------------------------------------------
# DKR008: NVIDIA drivers belong to the node


@pytest.mark.parametrize("run_line, flagged", [
    ("RUN apt-get install -y nvidia-driver-550", ["nvidia-driver-550"]),
    ("RUN apt install -y nvidia-driver", ["nvidia-driver"]),
    ("RUN apt-get install -y --no-install-recommends cuda-drivers-550 libnvidia-compute-550:amd64", ["cuda-drivers-550", "libnvidia-compute-550:amd64"]),
    ("RUN dnf install -y kmod-nvidia-open-dkms nvidia-utils-550 && dnf clean all", ["kmod-nvidia-open-dkms", "nvidia-utils-550"]),
    ("RUN zypper in -y nvidia-open-driver-G06", ["nvidia-open-driver-G06"]),
    ("RUN apt-get install -y cuda cuda-12-4 cuda-runtime-12-4", ["cuda", "cuda-12-4", "cuda-runtime-12-4"]),
    ("RUN apt-get install -y nvidia-driver-${DRIVER_VERSION}", ["nvidia-driver-${DRIVER_VERSION}"]),
    ("RUN apt-get install -y cuda-toolkit-12-4 cuda-compat-12-4 cuda-cudart-12-4 cuda-nvcc-12-4", []),
    ("RUN apt-get install -y libnvidia-container1 nvidia-container-toolkit nvidia-cuda-toolkit", []),
    ("RUN apt-get download nvidia-driver-550", []),  # not installed
    ("RUN conda install -y -c nvidia cuda", []),  # conda's cuda is the toolkit
    ("RUN pip install nvidia-cuda-runtime-cu12", []),
    ("RUN sh NVIDIA-Linux-x86_64-550.54.15.run -s", ["NVIDIA-Linux-x86_64-550.54.15.run"]),
    ("RUN /tmp/NVIDIA-Linux-x86_64-550.54.15.run --silent", ["/tmp/NVIDIA-Linux-x86_64-550.54.15.run"]),
    ("RUN bash cuda_12.4.0_550.54.14_linux.run --silent", ["cuda_12.4.0_550.54.14_linux.run"]),
    ("RUN sh cuda_12.4.0_550.54.14_linux.run --silent --toolkit", []),
    ("RUN wget https://x/NVIDIA-Linux-x86_64-550.54.15.run && chmod +x NVIDIA-Linux-x86_64-550.54.15.run", []),
])
def test_dkr008_driver_packages_and_installers(run_line: str, flagged: list[str]) -> None:
    found = run(f"FROM {PT}\n{run_line}\n", select=["DKR008"])
    assert [line for line, _, _, _ in found] == [2] * len(flagged)
    # each finding points at its package or installer, and names it
    assert [run_line[column - 1:column - 1 + len(word)] for (_, column, _, _), word in zip(found, flagged)] == flagged
    assert all(f"`{word}`" in message for (_, _, _, message), word in zip(found, flagged))


def test_dkr008_points_at_the_package_on_its_continuation_line_and_skips_builders() -> None:
    text = (f"FROM {PT} AS build\nRUN apt-get install -y nvidia-driver-550\n"
            f"FROM {PT}\nCOPY --from=build /opt/x /opt/x\nRUN apt-get update \\\n    && apt-get install -y \\\n"
            "      python3 \\\n      cuda-drivers=550.54.15-1\n")
    found = run(text, select=["DKR008"])
    assert [(line, column) for line, column, _, _ in found] == [(8, 7)]
    assert "`apt-get` installs the NVIDIA driver package `cuda-drivers=550.54.15-1` into the image" in found[0][3]


# ---------------------------------------------------------------------------------------------
# DKR009: unpinned pip installs

from mlops_lint.rules.dkr.dkr009_pip_install_unpinned import unpinned  # noqa: E402


@pytest.mark.parametrize("word, name", [
    ("torch", "torch"), ("transformers>=4.40", "transformers"), ("numpy~=1.26", "numpy"), ("vllm==0.6.*", "vllm"),
    ("peft[torch]", "peft"), ("scipy>=1.0,<2", "scipy"), ("torch!=2.0.0", "torch"),
    ("torch==2.4.1", None), ("torch===2.4.1", None), ("peft[torch]==0.12.0", None),
    ("bitsandbytes==0.43.3; platform_machine == 'x86_64'", None),
    (".", None), ("./src", None), ("/tmp/x.whl", None), ("pkg.tar.gz", None), ("git+https://github.com/a/b", None),
    ("flash-attn @ https://x/y.whl", None), ("$PACKAGES", None), ("pip", None), ("setuptools", None), ("wheel", None),
    ("uv", None),
])
def test_dkr009_requirements(word: str, name: str | None) -> None:
    assert unpinned(word) == name


def test_dkr009_positions_constraints_and_build_arguments() -> None:
    base = f"FROM {PT}\n"
    found = run(base + "RUN pip install --no-cache-dir -r req.txt torch\n", select=["DKR009"])
    assert [(line, col, rule) for line, col, rule, _ in found] == [(2, 43, "DKR009")]
    assert "`torch`" in found[0][3]
    # the exec form: the element's own position
    found = run(base + 'RUN ["pip", "install", "--no-cache-dir", "torch"]\n', select=["DKR009"])
    assert [(line, col) for line, col, _, _ in found] == [(2, 42)]
    # a constraints file, PIP_CONSTRAINT from ENV or a prefix, value options that swallow a word
    for text in ("RUN pip install --no-cache-dir -c c.txt torch\n", "RUN pip install --no-cache-dir --constraint=c.txt torch\n",
                 "ENV PIP_CONSTRAINT=/c.txt\nRUN pip install --no-cache-dir torch\n",
                 "RUN PIP_CONSTRAINT=/c.txt pip install --no-cache-dir torch\n",
                 "RUN pip install --no-cache-dir --index-url https://x/simple torch==2.4.1\n",
                 "RUN pip install --no-cache-dir -r requirements.txt\n", "RUN echo pip install torch\n"):
        assert run(base + text, select=["DKR009"]) == [], text
