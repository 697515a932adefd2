"""Configuration: ``.mlops-lint.yaml`` (nearest upward) or ``[tool.mlops-lint]`` in pyproject.toml.

Validated by ``schemas/config.schema.json`` and by each rule's declared options; an invalid file is
a :class:`ConfigError` that names the file, the line and column of the bad key (YAML), the key,
and what was expected. The CLI turns it into exit status 2.
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from msgspec import Struct, field

# how a config's YAML becomes plain data, bounded against alias bombs (the linted config file's
# loader, linter.sources.config_pools, reads its node pools the same way)
from mlops_lint.sources.config_yaml import MAX_CONFIG_VALUES  # noqa: F401 - the bound, named here too
from mlops_lint.sources.config_yaml import alias_growth_too_large as _alias_growth_too_large
from mlops_lint.sources.config_yaml import plain as _plain

CONFIG_NAMES = (".mlops-lint.yaml", ".mlops-lint.yml")  # as linter.roots finds them
PROFILES = ("aks-standard", "aks-automatic")
FAIL_ON = ("error", "warning", "info", "never")

# What the article uses when nothing is configured: pools labelled accelerator=nvidia (AKS also
# labels GPU nodes kubernetes.azure.com/accelerator=nvidia) and tainted sku=gpu:NoSchedule.
DEFAULT_GPU_NODE_LABELS = {"accelerator": "nvidia"}
KNOWN_GPU_NODE_LABEL_KEYS = (
    "accelerator",
    "kubernetes.azure.com/accelerator",
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.deploy.device-plugin",
    "nvidia.com/mig.config",
    "karpenter.azure.com/sku-gpu-name",
    "karpenter.azure.com/sku-gpu-manufacturer",
    "karpenter.azure.com/sku-gpu-count",
)
DEFAULT_GPU_TAINTS = ({"key": "sku", "value": "gpu", "effect": "NoSchedule"},)
KNOWN_GPU_TAINT_KEYS = ("sku", "nvidia.com/gpu", "kubernetes.azure.com/accelerator", "gpu")


class ConfigError(Exception):
    """An invalid configuration; ``str()`` is the whole message for the user."""


# A last guard (no real file comes near it: the slowest of the corpus takes well under a second):
# a file whose loading and rules take longer becomes one finding naming what ran out of time.
DEFAULT_FILE_TIMEOUT = 120.0


class Config(Struct, frozen=True, dict=True):
    path: Path | None = None  # the config file in use
    root: Path | None = None  # project root: the config file's folder (None: the PATHs themselves)
    profile: str = "aks-standard"
    # where the profile comes from: "--profile", "config" (the file's `profile:`), "inferred" (the
    # project's cluster, linter.engine.profile) or None (the default)
    profile_from: str | None = None
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str = "warning"
    fail_on_empty: bool = False  # exit 1 when the run linted no file (a CI gate that must lint something)
    exclude: tuple[str, ...] = ()
    lint_testdata: bool = False  # `lint-testdata: true`: folders named testdata are walked too (linter.discover)
    trusted_registries: tuple[str, ...] | None = None
    required_labels: tuple[str, ...] = ()
    gpu_node_labels: dict[str, str] | None = None
    gpu_taints: tuple[dict[str, str], ...] | None = None
    node_pools: tuple[dict[str, Any], ...] = ()
    kubernetes_version: str | None = None
    crd_paths: tuple[str, ...] = ()
    kustomize: dict[str, Any] | None = None  # {command, enabled, timeout} (linter.engine.builds)
    helm: dict[str, Any] | None = None  # {enabled, values, set, release-name, namespace, charts, timeout} (linter.sources.helm)
    bundled_crds: bool = True  # SCH002/SCH003 use the CRD schemas shipped with mlops-lint (linter/data/crds)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    file_timeout: float = DEFAULT_FILE_TIMEOUT  # seconds one file's loading and rules may take
    fix_unsafe: bool = False  # `fix: {unsafe: true}`: --fix applies unsafe fixes too (as --unsafe-fixes)
    unfixable: tuple[str, ...] = ()  # selectors (ids, slugs, prefixes) of rules --fix never fixes
    custom_rules: tuple[dict[str, Any], ...] = ()  # the organisation's CEL rules (linter.custom)
    require_reason: bool = False  # `require-reason: true`: a suppression without a reason is LNT004
    inline_suppressions: bool = True  # False: `inline-suppressions: false` or --no-inline-suppressions (comments and annotations ignored)

    def fixable(self, code: str, registry: Any) -> bool:
        """Whether --fix may apply ``code``'s fixes here (not named by ``unfixable``)."""
        return not any(code == meta.code for token in self.unfixable for meta in registry.resolve(token))

    @property
    def effective_gpu_node_labels(self) -> dict[str, str]:
        return dict(self.gpu_node_labels) if self.gpu_node_labels is not None else dict(DEFAULT_GPU_NODE_LABELS)

    @property
    def effective_gpu_taints(self) -> tuple[dict[str, str], ...]:
        return self.gpu_taints if self.gpu_taints is not None else DEFAULT_GPU_TAINTS


_KEYS = {
    "profile": "profile",
    "select": "select",
    "ignore": "ignore",
    "severity": "severity",
    "fail-on": "fail_on",
    "fail-on-empty": "fail_on_empty",
    "require-reason": "require_reason",
    "inline-suppressions": "inline_suppressions",
    "exclude": "exclude",
    "lint-testdata": "lint_testdata",
    "trusted-registries": "trusted_registries",
    "required-labels": "required_labels",
    "gpu-node-labels": "gpu_node_labels",
    "gpu-taints": "gpu_taints",
    "node-pools": "node_pools",
    "kubernetes-version": "kubernetes_version",
    "crd-paths": "crd_paths",
    "kustomize": "kustomize",
    "helm": "helm",
    "bundled-crds": "bundled_crds",
    "rules": "rule_options",
    "file-timeout": "file_timeout",
    "unfixable": "unfixable",
    "custom-rules": "custom_rules",
}


@lru_cache(maxsize=1)
def config_schema() -> dict[str, Any]:
    return json.loads((resources.files("mlops_lint") / "schemas" / "config.schema.json").read_text("utf-8"))


def find_config(start: Path) -> Path | None:
    """The config of the project ``start`` is in: the nearest ``.mlops-lint.yaml`` (or ``.yml``, or
    ``pyproject.toml`` with ``[tool.mlops-lint]``) upward, nearest folder first (linter.roots)."""
    from mlops_lint.roots import RootFinder

    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    found = RootFinder(folder).marks(str(folder))[0]
    return Path(found) if found is not None else None


def _where(positions: dict[tuple, tuple[int, int]], path: tuple) -> str:
    """``:line:col`` of the deepest known node on ``path``."""
    for cut in range(len(path), -1, -1):
        if path[:cut] in positions:
            line, col = positions[path[:cut]]
            return f":{line}:{col}"
    return ""


def _read(path: Path) -> tuple[dict[str, Any], dict[tuple, tuple[int, int]], str]:
    """Raw settings, key positions, and how to name the place in messages."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[data.rfind(b"\n", 0, exc.start) + 1:exc.start].decode("utf-8", "replace")) + 1
        raise ConfigError(f"{path}:{line}:{col}: invalid UTF-8 (byte 0x{data[exc.start]:02x}); save the config "
                          "file as UTF-8") from None
    if path.name == "pyproject.toml":
        import tomllib

        try:
            table = tomllib.loads(text).get("tool", {}).get("mlops-lint", {})
        except tomllib.TOMLDecodeError as exc:
            found = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(exc))
            if found:
                raise ConfigError(f"{path}:{found.group(2)}:{found.group(3)}: invalid TOML: {found.group(1)}") from None
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        except RecursionError:
            raise ConfigError(f"{path}: invalid TOML: nested too deeply to be read") from None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.mlops-lint] must be a table")
        return table, _toml_positions(text), str(path)
    import ruamel.yaml
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = ruamel.yaml.YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        data = yaml.load(text)
    except RecursionError:  # ruamel's composer recurses once per level
        raise ConfigError(f"{path}: invalid YAML: nested too deeply to be read") from None
    except MarkedYAMLError as exc:
        problem, mark = _yaml_problem(exc)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}{where}: invalid YAML: {problem}") from None
    except YAMLError as exc:
        position = getattr(exc, "position", None)
        if isinstance(position, int) and getattr(exc, "character", None) is not None:  # a control character
            line = text.count("\n", 0, position) + 1
            col = position - (text.rfind("\n", 0, position) + 1) + 1
            char = exc.character if isinstance(exc.character, str) else chr(exc.character)
            raise ConfigError(f"{path}:{line}:{col}: invalid YAML: control character U+{ord(char):04X} is not "
                              "allowed") from None
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None
    if data is None:
        return {}, {}, str(path)
    positions: dict[tuple, tuple[int, int]] = {}
    try:
        if _alias_growth_too_large(data):
            raise ConfigError(f"{path}: aliases expand the config by more than {MAX_CONFIG_VALUES:,} values (an "
                              "alias bomb?); it was not read")
        plain = _plain(data, (), positions)
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply to be read") from None
    if not isinstance(plain, dict):
        raise ConfigError(f"{path}:1:1: the config file must be a mapping of settings, not {type(plain).__name__}")
    return plain, positions, str(path)


def _yaml_problem(exc: Any) -> tuple[str, Any]:
    """ruamel.yaml's problem in a user's words, and the mark to report it at."""
    problem, context = exc.problem or "", exc.context or ""
    mark, start = exc.problem_mark, exc.context_mark
    at = f"line {start.line + 1}, column {start.column + 1}" if start is not None else "above"
    if "'\\t'" in problem and "cannot start any token" in problem:
        return "a tab character here: YAML is indented with spaces only", mark
    if problem.startswith("mapping values are not allowed"):
        return "unexpected `:` here: quote a value that contains `: `, or indent this line like the keys above it", mark
    if problem.startswith("expected <block end>"):
        return "this line does not line up with the block above it: check its indentation", mark
    if "'<stream end>'" in problem and "flow mapping" in context:
        return f"the `{{…}}` that starts at {at} is never closed", mark
    if "'<stream end>'" in problem and "flow sequence" in context:
        return f"the `[…]` that starts at {at} is never closed", mark
    if "'<stream end>'" in problem:
        return "the file ends where a value was expected (an unclosed `[` or `{`?)", mark
    if "quoted scalar" in context and "end of stream" in problem:
        return f"the quoted string that starts at {at} is never closed", start or mark
    if problem.startswith("found duplicate key"):
        key = problem.split('"')[1] if '"' in problem else "?"
        first = f" (first at line {start.line + 1})" if start is not None else ""
        return f'duplicate key "{key}"{first}: write each setting once', mark
    return ", ".join(p for p in (context, problem) if p) or "invalid YAML", mark or start


def _toml_positions(text: str) -> dict[tuple, tuple[int, int]]:
    """1-based positions of the keys of ``[tool.mlops-lint]`` (and its sub-tables) in a
    pyproject.toml; tomllib gives none, and each line of TOML holds at most one key."""
    positions: dict[tuple, tuple[int, int]] = {}
    table: tuple | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]$", stripped)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(1).split("."))
            table = parts[2:] if parts[:2] == ("tool", "mlops-lint") else None
            if table is not None:
                positions.setdefault(table, (number, line.index("[") + 1))
            continue
        key = re.match(r"^\s*(\"[^\"]+\"|[A-Za-z0-9_-]+)\s*=", line)
        if table is not None and key:
            positions.setdefault(table + (key.group(1).strip('"'),), (number, line.index(key.group(1)) + 1))
    return positions


_TYPE_WORDS = {"array": "a list", "object": "a mapping", "string": "a string", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "nothing"}


def _value_words(value: Any) -> str:
    """How a user would name a value they wrote: "the number 1.3", "a list ['a']"."""
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return f"a list {value!r}"
    if isinstance(value, dict):
        return f"a mapping {value!r}"
    return repr(value)


def _describe_error(error: Any) -> str:
    path = list(error.absolute_path)
    key = ".".join(str(p) for p in path) or "(top level)"
    validator = error.validator
    if validator == "additionalProperties":
        extras = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        where = f"under '{key}'" if path else "at the top level"
        from mlops_lint.suggest import close_matches

        known = error.schema.get("properties", {})
        guesses = [g for extra in extras for g in close_matches(extra.replace("_", "-"), known, cutoff=0.6)
                   or close_matches(extra, known, cutoff=0.6)]
        hint = f" (did you mean {' or '.join(repr(g) for g in dict.fromkeys(guesses))}?)" if guesses else ""
        return f"unknown key {', '.join(repr(e) for e in extras)} {where}{hint}; expected one of: {allowed}"
    if validator == "enum":
        return f"'{key}' is {error.instance!r}; expected one of: {', '.join(map(str, error.validator_value))}"
    if validator == "type":
        expected = error.validator_value
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in (expected if isinstance(expected, list) else [expected]))
        hint = " (quote it: YAML reads 1.30 as the number 1.3)" if expected == "string" and isinstance(
            error.instance, float) else ""
        return f"'{key}' is {_value_words(error.instance)}; expected {words}{hint}"
    if validator == "required":
        return f"'{key}' is missing {error.message.split(' is a required')[0]}"
    if validator == "pattern":
        return f"'{key}' is {error.instance!r}; expected a value matching {error.validator_value}"
    if validator == "minimum":
        return f"'{key}' is {error.instance!r}; expected at least {error.validator_value}"
    return f"'{key}': {error.message}"


def _check_finite(value: Any, path: tuple, where: str, positions: dict[tuple, tuple[int, int]]) -> None:
    """Every number in the config is finite: YAML (``.nan``, ``.inf``) and TOML (``nan``, ``inf``)
    can write what JSON cannot, and NaN passes every bound the schema sets (a comparison with
    NaN is false), so ``file-timeout: .nan`` would turn the time guard off."""
    if isinstance(value, float) and not math.isfinite(value):
        key = ".".join(str(p) for p in path) or "(top level)"
        raise ConfigError(f"{where}{_where(positions, path)}: '{key}' is {value!r}: numbers in the config must be "
                          "finite")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, path + (key,), where, positions)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_finite(item, path + (index,), where, positions)


def validate(raw: dict[str, Any], where: str, positions: dict[tuple, tuple[int, int]], registry: Any) -> None:
    from jsonschema import Draft202012Validator

    _check_finite(raw, (), where, positions)
    validator = Draft202012Validator(config_schema())
    errors = sorted(validator.iter_errors(raw), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    if errors:
        error = errors[0]
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":  # point at the first unknown key itself
            extras = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            path += (extras[0],) if extras else ()
        raise ConfigError(f"{where}{_where(positions, path)}: {_describe_error(error)}")
    if raw.get("custom-rules"):
        from mlops_lint import custom
        from mlops_lint.rule import RegistryError

        for path, problem in custom.compile_problems(raw["custom-rules"]):
            raise ConfigError(f"{where}{_where(positions, path)}: custom rule expression {problem}")
        try:
            registry = registry.with_rules(custom.metas(raw["custom-rules"], where))
        except RegistryError as exc:
            raise ConfigError(f"{where}{_where(positions, ('custom-rules',))}: {exc}") from None
    timeout = raw.get("kustomize", {}).get("timeout") if isinstance(raw.get("kustomize"), dict) else None
    if isinstance(timeout, float) and timeout != timeout:  # NaN passes every comparison the schema makes
        raise ConfigError(f"{where}{_where(positions, ('kustomize', 'timeout'))}: 'timeout' is {timeout!r}; "
                          "expected a number of seconds above 0, at most 3600")
    for setting in ("select", "ignore", "unfixable"):
        for index, value in enumerate(raw.get(setting, [])):
            if not registry.is_known_selector(value):
                raise ConfigError(
                    f"{where}{_where(positions, (setting, index))}: '{setting}' names an unknown rule or prefix "
                    f"{value!r}{registry.selector_hint(value)} (see `mlops-lint rules`)"
                )
    for code in raw.get("severity", {}):
        if registry.get(code) is None:
            raise ConfigError(f"{where}{_where(positions, ('severity', code))}: 'severity' names an unknown rule {code!r}")
    for code, options in raw.get("rules", {}).items():
        meta = registry.get(code)
        if meta is None:
            raise ConfigError(f"{where}{_where(positions, ('rules', code))}: 'rules' names an unknown rule {code!r}")
        for option, value in options.items():
            if option not in meta.options:
                known = ", ".join(sorted(meta.options)) or "none"
                raise ConfigError(
                    f"{where}{_where(positions, ('rules', code, option))}: unknown option {option!r} for rule "
                    f"{meta.code}; its options: {known}"
                )
            expected = meta.options[option]
            if not _matches_type(value, expected):
                raise ConfigError(
                    f"{where}{_where(positions, ('rules', code, option))}: option {option!r} of {meta.code} is "
                    f"{value!r}; expected {getattr(expected, '__name__', str(expected))}"
                )
    pools = raw.get("node-pools", [])
    for index, pool in enumerate(pools):
        low, high = pool.get("min-count"), pool.get("max-count")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            raise ConfigError(
                f"{where}{_where(positions, ('node-pools', index, 'min-count'))}: node pool {pool['name']!r} has "
                f"min-count {low} > max-count {high}"
            )


def _check_schema_settings(raw: dict[str, Any], where: str, positions: dict[tuple, tuple[int, int]],
                           base: Path) -> None:
    """`kubernetes-version` must be one whose schemas are installed; every `crd-paths` entry must
    exist and hold CRDs (read here, once: SCH002/SCH003 reuse what was read)."""
    version = raw.get("kubernetes-version")
    if isinstance(version, str):
        from mlops_lint.validation.builtin import version_problem

        problem = version_problem(version)
        if problem:
            raise ConfigError(f"{where}{_where(positions, ('kubernetes-version',))}: 'kubernetes-version' is "
                              f"{version!r}: {problem}")
    entries = raw.get("crd-paths") or []
    if entries:
        from mlops_lint.validation.crds import CrdPathError, load_paths

        for index, entry in enumerate(entries):
            try:
                load_paths([entry], base)
            except CrdPathError as exc:
                raise ConfigError(f"{where}{_where(positions, ('crd-paths', index))}: 'crd-paths' entry {entry!r}: "
                                  f"{exc}") from None


def _check_exclude(raw: dict[str, Any], where: str, positions: dict[tuple, tuple[int, int]]) -> None:
    """`exclude` compiles (RE2; a list too large for one set is split, see linter.discover); a
    pattern too large to compile on its own is named."""
    if not raw.get("exclude"):
        return
    from mlops_lint.discover import ExcludePatternError, exclude_spec

    try:
        exclude_spec(raw["exclude"])
    except ExcludePatternError as exc:
        shown = repr(exc.pattern) if len(exc.pattern) <= 60 else f"{exc.pattern[:40]!r}... ({len(exc.pattern):,} characters)"
        raise ConfigError(f"{where}{_where(positions, ('exclude', exc.index))}: 'exclude' pattern {shown} is too "
                          "large to compile (past RE2's memory bound); write it shorter") from None


def _matches_type(value: Any, expected: Any) -> bool:
    origin = getattr(expected, "__origin__", None)
    if origin is list:
        (item,) = getattr(expected, "__args__", (object,))
        return isinstance(value, list) and all(_matches_type(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(expected, type):
        return isinstance(value, expected)
    return True


def normalise_severity_keys(severity: dict[str, str], registry: Any) -> dict[str, str]:
    return {registry.get(code).code: level for code, level in severity.items()}


def _data(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_data(v) for v in value]
    return value


def load_config(path: Path | None, registry: Any, *, start: Path | None = None) -> Config:
    """Load and validate ``path``, or the config found upward from ``start``, or the defaults."""
    if path is None and start is not None:
        path = find_config(start)
    if path is None:
        return Config()
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: config file does not exist")
    raw, positions, where = _read(path)
    validate(raw, where, positions, registry)
    _check_schema_settings(raw, where, positions, path.resolve().parent)
    _check_exclude(raw, where, positions)
    if raw.get("custom-rules"):  # severity and rule options may name them
        from mlops_lint.custom import metas

        registry = registry.with_rules(metas(raw["custom-rules"], where))
    values: dict[str, Any] = {}
    for key, attribute in _KEYS.items():
        if key not in raw:
            continue
        value = raw[key]
        if isinstance(value, list):
            value = tuple(value)
        values[attribute] = value
    if "severity" in values:
        values["severity"] = normalise_severity_keys(values["severity"], registry)
    if "rule_options" in values:
        values["rule_options"] = {registry.get(k).code: dict(v) for k, v in values["rule_options"].items()}
    if "gpu_taints" in values:
        values["gpu_taints"] = tuple(dict(t) for t in values["gpu_taints"])
    if "node_pools" in values:
        values["node_pools"] = tuple(dict(p) for p in values["node_pools"])
    for section in ("kustomize", "helm"):
        if section in values:
            values[section] = dict(values[section])
    if "gpu_node_labels" in values:
        values["gpu_node_labels"] = {str(k): str(v) for k, v in values["gpu_node_labels"].items()}
    if "custom_rules" in values:
        values["custom_rules"] = tuple(_data(rule) for rule in values["custom_rules"])
    if "profile" in values:
        values["profile_from"] = "config"
    if "unsafe" in raw.get("fix", {}):
        values["fix_unsafe"] = bool(raw["fix"]["unsafe"])
    return Config(path=path.resolve(), root=path.resolve().parent, **values)


# Every key is commented out, each with an example that is valid as written once its `# ` is
# removed (tests/test_cli.py uncomments each one, and all at once, and loads the result): the file
# changes nothing until edited, and still marks its folder as the project root.
INIT_TEMPLATE = """\
# mlops-lint configuration.
# Every key is optional and commented out: remove the `# ` before a key (and before the lines
# indented under it) to use it. `mlops-lint rules` lists the rules, `mlops-lint explain RULE`
# documents one and its options.

# The cluster profile. With aks-standard (the default) you own the node pools and the AKS and
# placement rules apply; with aks-automatic AKS provisions nodes from pod requests (AKS rules,
# GPU005 and GPU006 are off; inferred when the project makes an Automatic or NAP cluster).
# profile: aks-automatic

# Rules to run: ids (GPU001), slugs (gpu-limit-missing), prefixes (GPU), families (ml, aks, k8s:
# `select: [ml, aks]` beside kube-linter or Checkov) or ALL (the default).
# ALL leaves out opt-in rules such as LNT001 (unused-suppression): select those by name.
# select: [ALL, LNT001]

# Rules never to run (wins over select).
# ignore: [OBS004, gpu-node-selector-missing]

# Per-rule severity: error | warning | info.
# severity: {IMG002: error, DKR004: warning}

# Lowest severity that makes the exit status 1: error | warning (default) | info | never.
# fail-on: error

# Exit 1 when the run lints no file (every file skipped, none found, an empty stdin), for a CI
# gate that must lint something; the run says why on stdout and in the report either way.
# fail-on-empty: true

# A suppression (`# mlops-lint: disable=ID reason`, an ignore annotation) must give a reason: one
# without is an LNT004 finding.
# require-reason: true

# Suppression comments and annotations suppress nothing (as --no-inline-suppressions), for a CI
# gate whose exceptions are only the config's ignore and the baseline.
# inline-suppressions: false

# gitignore-style patterns, relative to this file's folder, of files and folders never read
# (also when named on the command line, as pre-commit names them).
# exclude: ["vendor/**", "examples/"]

# Folders named testdata (Go's convention: test inputs and goldens, never deployed) are skipped
# with a note; true lints them too (a testdata folder named on the command line is always linted).
# lint-testdata: true

# Registries images may come from; IMG004 runs only when this list is set.
# trusted-registries: [myacr.azurecr.io, nvcr.io, mcr.microsoft.com]

# Labels every training workload must carry (OBS004).
# required-labels: [app.kubernetes.io/name, team]

# How your GPU nodes are selected and tainted (default: the AKS article's accelerator=nvidia
# label and sku=gpu:NoSchedule taint).
# gpu-node-labels: {kubernetes.azure.com/accelerator: nvidia}
# gpu-taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]

# Cluster node pools, when no `az aks` script or IaC template in the project creates them (the
# AKS rules then report on them in this file).
# node-pools:
#   - {name: gpunp, vm-size: Standard_NC24ads_A100_v4, labels: {accelerator: nvidia},
#      taints: ["sku=gpu:NoSchedule"], min-count: 0, max-count: 4}

# The Kubernetes minor version manifests are validated for (SCH002/SCH003; default 1.35).
# kubernetes-version: "1.33"

# Files or folders (relative to this file's folder; they must exist) of the
# CustomResourceDefinitions of custom resources that are not in the project.
# crd-paths: [crds/]

# Whether SCH002/SCH003 use the CRD schemas bundled with mlops-lint (Kueue, Kubeflow, KubeRay,
# Volcano, KAITO, JobSet, LeaderWorkerSet, KServe, Prometheus Operator, NAP, GPU Operator) for
# custom resources whose CRD is neither in the project nor in crd-paths (default true).
# bundled-crds: false

# Kustomization roots: auto (the default: built with `kustomize build` or `kubectl kustomize` when
# one is on PATH, else linted raw with a note), always (a root that cannot be built is an
# SCH001) or never; `command` and `timeout` (seconds per build) are optional.
# kustomize: {enabled: always, timeout: 120}

# Helm charts: auto (the default: each chart rendered by Helm's SDK, pip install "mlops-lint[helm]",
# else by a `helm` on PATH, findings reported at its templates; with neither, skipped with a note),
# always (a chart that cannot be rendered is an SCH001) or never; `values` (more values files,
# inside the chart or the project), `set`, `release-name`, `namespace`, `charts` (the same per
# chart folder) and `timeout` are optional.
# helm: {values: [values-prod.yaml], namespace: ml, charts: {charts/serving: {namespace: serving}}}

# What --fix applies: safe fixes only (the default), or unsafe ones too (as --unsafe-fixes):
# fixes that change behaviour beyond the rule's intent (`explain RULE` says which are which).
# fix: {unsafe: true}

# Rules whose fixes --fix never applies (ids, slugs or prefixes; their findings are still reported).
# unfixable: [SEC002, STO]

# Seconds one file's loading and rules may take (default 120): a file that takes longer becomes
# one finding naming what ran out of time, and the run goes on.
# file-timeout: 300

# The organisation's own rules (ids ORG000-ORG999), as CEL on the objects they match, shaped like
# a ValidatingAdmissionPolicy: `mlops-lint export-policies` writes them for the cluster to enforce.
# custom-rules:
#   - id: ORG001
#     name: training-priority-required
#     severity: error
#     match: {kinds: [Job, PyTorchJob], namespaces: [research]}
#     validations:
#       - expression: "has(object.spec.template.spec.priorityClassName)"
#         message: "training Jobs in research use a PriorityClass"

# Per-rule options: {RULE: {option: value}}; `mlops-lint explain RULE` lists a rule's options.
# rules:
#   GPU001: {gpu-resource-prefixes: [nvidia.com/gpu, nvidia.com/mig-, amd.com/gpu]}
#   STO005: {min-grace-period-seconds: 120}
"""


def config_sources(folder: Path) -> list[Path]:
    """Every config source ``folder`` has or is governed by: its own ``.mlops-lint.yaml`` /
    ``.yml`` (as links too, dangling or not), a pyproject.toml with ``[tool.mlops-lint]`` there,
    and the config a run in it would find upward."""
    from mlops_lint.roots import has_tool_table

    found = [folder / name for name in CONFIG_NAMES if os.path.lexists(folder / name)]
    project = folder / "pyproject.toml"
    if project.is_file() and has_tool_table(project):
        found.append(project)
    upward = find_config(folder) if folder.is_dir() else None
    if upward is not None and all(not _same_file(upward, f) for f in found):
        found.append(upward)
    return found


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_init(folder: Path, force: bool = False) -> Path:
    """Write the commented template as ``folder/.mlops-lint.yaml``. Refused when any config
    source exists (:func:`config_sources`: the new file would silently shadow it) unless
    ``force``; never written through a link: a new file is created exclusively, and with
    ``force`` a temporary file beside it is renamed over the name (replacing a link, not its
    target)."""
    import tempfile

    target = folder / CONFIG_NAMES[0]
    sources = config_sources(folder)
    if sources and not force:
        names = ", ".join(str(s) for s in sources)
        advice = "it already exists; --force overwrites it" if os.path.lexists(target) else "--force to write it anyway"
        raise ConfigError(f"{target}: not written, a config already applies here ({names}); "
                          f"a new file would shadow it ({advice})")
    # a folder that does not exist is not made (unlike -o's report folders): init names where a
    # project is, and a mistyped one is one line and exit 2 (issue 21, item 16)
    data = INIT_TEMPLATE.encode("utf-8")
    if not os.path.lexists(target):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            descriptor = os.open(target, flags, 0o644)
        except FileExistsError:
            raise ConfigError(f"{target}: appeared while writing; not overwritten") from None
        except OSError as exc:
            raise ConfigError(f"{target}: cannot be written ({exc.strerror})") from None
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
        except OSError as exc:
            os.unlink(target)  # never an empty or partial config left behind
            raise ConfigError(f"{target}: cannot be written ({exc.strerror})") from None
        return target
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".mlops-lint.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ConfigError(f"{target}: cannot be written ({exc.strerror})") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except OSError as exc:
        os.unlink(temporary)
        raise ConfigError(f"{target}: cannot be written ({exc.strerror})") from None
    return target


def env_no_color() -> bool:
    return "NO_COLOR" in os.environ
