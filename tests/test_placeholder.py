"""The one placeholder test (linter.model.placeholder): which values are stand-ins, whole or in part."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mlops_lint.model.placeholder import has_placeholder, is_placeholder, known
from tests.strategies import FUZZ

WHOLE = [
    "$IMAGE", "${IMAGE}", "${TAG:-latest}", "$(IMAGE)", "{{ .Values.image }}", "{{image}}", "  $VAR  ",
    "<your-image>", "<digest>", "<pool name>", "<...>", "[gloo|nccl]", "[true|false]", "[A|B|C]", "...", "....",
    "…", "REPLACE_ME", "replace-me", "ReplaceMe", "REPLACE_WITH_YOUR_IMAGE", "CHANGEME", "change-me", "changeme",
    "fixme", "TODO", "TODO: set the queue", "TBD", "your-acr", "your_registry", "YOUR_TOKEN", "Your Name",
    "your-acr.azurecr.io/trainer:1.0", "IMG_PLACEHOLDER", "IMAGE_PLACEHOLDER", "FILLED_BY_THE_VALIDATOR",
    "FILLED BY THE OPERATOR", "SET_ME", "FILL_IN_IMAGE",
    "REPLACE_ME.azurecr.io/trainer",
]
PARTIAL = [
    "myacr.azurecr.io/trainer:${TAG}", "$(REGISTRY)/trainer:1.0", "{{ .Values.repo }}:1.0", "<registry>/trainer:1.0",
    "myacr.azurecr.io/<image>:<tag>", "nvcr.io/nvidia/pytorch@sha256:…", "nvcr.io/nvidia/pytorch@sha256:...",
    "myacr.azurecr.io/your-image:1.0", "registry/IMG_PLACEHOLDER:1.0",
    "--backend=[gloo|nccl]", "pool-$N",
]
REAL = [
    "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime", "nvcr.io/nvidia/pytorch:24.05-py3", "a<b", "x > 3", "$5",
    "../data/train", "todo", "todo-app:1.0", "todo-list", "yourself", "replacement", "changemetrics", "unknown",
    "undefined", "none", "", "   ", "Standard_NC24ads_A100_v4", "default", "ALL", "GPU001", "managed-csi",
    "http://example.com/a?b=c", "100Gi", "500m", "[1, 2]", "IMAGE", "MY_QUEUE",
]


@pytest.mark.parametrize("value", WHOLE)
def test_whole_placeholders(value):
    assert is_placeholder(value)
    assert has_placeholder(value)
    assert known(value) is None


@pytest.mark.parametrize("value", PARTIAL)
def test_values_holding_a_placeholder(value):
    assert has_placeholder(value)
    assert not is_placeholder(value)
    assert known(value) is None


@pytest.mark.parametrize("value", REAL)
def test_real_values_are_not_placeholders(value):
    assert not is_placeholder(value)
    assert not has_placeholder(value)
    assert known(value) == value


@pytest.mark.parametrize("value", ["undefined", "unknown", "UNKNOWN", " Undefined "])
def test_arg_defaults_that_mean_set_me(value):
    assert is_placeholder(value, arg_default=True)
    assert not is_placeholder(value)


@pytest.mark.parametrize("value", ["", "none", "null", "cu121", "3.12"])
def test_arg_defaults_that_are_values(value):
    assert not is_placeholder(value, arg_default=True)


@pytest.mark.parametrize("value", [None, 3, 2.5, True, ["$X"], {"a": "$X"}])
def test_non_strings_are_values(value):
    assert not is_placeholder(value) and not has_placeholder(value) and not is_placeholder(value, arg_default=True)


_COMPONENT = st.from_regex(r"[a-z0-9]{1,8}(?:[-_.][a-z0-9]{1,8}){0,2}", fullmatch=True)
_REFERENCE = st.builds(
    lambda host, path, tag: (f"{host}/" if host else "") + "/".join(path) + (f":{tag}" if tag else ""),
    st.sampled_from(["", "docker.io", "nvcr.io", "myacr.azurecr.io", "localhost:5000"]),
    st.lists(_COMPONENT, min_size=1, max_size=3),
    st.one_of(st.none(), st.from_regex(r"[a-z0-9][a-z0-9._-]{0,10}", fullmatch=True)),
)
_MARKERS = ("your", "replace", "change", "fixme", "...")


@FUZZ
@given(_REFERENCE)
def test_real_image_references_hold_no_placeholder(reference):
    assume(not any(marker in reference for marker in _MARKERS))
    assert not has_placeholder(reference) and not is_placeholder(reference)


@FUZZ
@given(_REFERENCE, st.sampled_from(["${X}", "$(X)", "$X", "{{ .Values.x }}", "<x>", "REPLACE_ME", "…"]))
def test_a_placeholder_anywhere_makes_the_value_unknown(reference, stand_in):
    for value in (stand_in + "/" + reference, reference + ":" + stand_in, stand_in):
        assert has_placeholder(value)
    assert is_placeholder(stand_in)


@FUZZ
@given(st.text(max_size=40))
def test_a_whole_placeholder_holds_one(text):
    if is_placeholder(text):
        assert has_placeholder(text)


@pytest.mark.parametrize("image,pin", [
    # a placeholder in the registry or path leaves the tag and digest known
    ("gcr.io/<<PROJECT>>/app:latest", ("latest", None)), ("${REGISTRY}/app:latest", ("latest", None)),
    ("$(REGISTRY)/app", (None, None)), ("${REGISTRY:-docker.io}/app:1.0", ("1.0", None)),
    ("{{ .Values.registry }}/x/app:latest", ("latest", None)), ("your-acr.azurecr.io/trainer:latest", ("latest", None)),
    ("$IMAGE:latest", ("latest", None)), ("pytorch/pytorch:2.4.1", ("2.4.1", None)),
    ("${R}/app:1.0@sha256:" + "a" * 64, ("1.0", "sha256:" + "a" * 64)),
    # a placeholder in the tag or digest, a whole placeholder, or an untagged reference whose last
    # part (which may carry the tag) or whole is a stand-in: not judged
    ("app:${TAG}", None), ("{{ .Values.repo }}:{{ .Values.tag }}", None), ("x/app@sha256:<digest>", None),
    ("nvcr.io/nvidia/pytorch@sha256:…", None), ("repo/${IMAGE}", None), ("$IMAGE", None), ("<your-image>", None),
    ("your-acr.azurecr.io/trainer", None), ("FILLED_BY_THE_VALIDATOR", None), ("my-image:TBD", None), ("", None),
    (None, None),
])
def test_image_pin_judges_the_parts_a_placeholder_leaves(image, pin):
    from mlops_lint.model.images import image_pin

    assert image_pin(image) == pin
