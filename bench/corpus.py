"""A benchmark corpus: the project's conforming and violating fixtures turned into N files.

Each *group* is one copy of every template (a project's worth of manifests, Dockerfiles and
``az aks`` scripts) in its own folder, with every ``metadata.name`` and ``namespace`` of the copy
suffixed with the group's number, consistently inside the group (references, selectors and
labels that spell a name are renamed with it), so N files hold N unique file names and objects
that do not collide across groups, as in a monorepo of many teams. The last group is cut short
to make exactly N files; cluster scripts come in one group of
``SCRIPT_EVERY``, in at most ``SCRIPT_GROUPS`` groups (an organisation has a few clusters, however many
manifests it has), Dockerfiles in every group (about 8 %), the rest YAML. The output depends only on N and the templates.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# the reference manifests, their violating variants, the cluster examples and the training image
TEMPLATE_DIRS = ("conforming", "violating", "cluster/conforming", "cluster/violating", "training-image")
SCRIPT_EVERY = 4  # cluster scripts in one group of this many,
SCRIPT_GROUPS = 8  # in at most this many groups: clusters grow with teams, not with manifests
# a value that names an object: of `name`, `namespace`, a `…Name`/`…-name` key, or a list item
# (matchNames); other keys (`accelerator: nvidia`) keep their values, as the scripts' pools do
_VALUE = re.compile(r"""^(?P<lead>\s*(?:-\s+)?(?:[\w./-]*(?:name|Name|namespace):\s+|-\s+))(?P<q>["']?)(?P<value>[a-z0-9][a-z0-9.-]*)(?P=q)(?P<tail>\s*(?:#.*)?)$""")
# the cluster and resource group a script creates: one cluster per group that holds scripts
_CLUSTER = re.compile(r"""^(?P<lead>\s*(?:export\s+)?(?:AKS_CLUSTER|RESOURCE_GROUP)=)(?P<q>["']?)(?P<value>[\w.-]+)(?P=q)(?P<tail>\s*(?:#.*)?)$""", re.M)


@dataclass(frozen=True)
class Template:
    path: str  # relative to fixtures/
    text: str
    kind: str  # yaml | dockerfile | shell

    @property
    def names(self) -> frozenset[str]:
        """Every object name and namespace the file defines or uses (empty for non-YAML)."""
        if self.kind != "yaml":
            return frozenset()
        found: set[str] = set()
        try:
            documents = list(yaml.load_all(self.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except yaml.YAMLError:
            return frozenset()
        for doc in documents:
            meta = doc.get("metadata") if isinstance(doc, dict) else None
            if isinstance(meta, dict):
                for key in ("name", "namespace"):
                    if isinstance(meta.get(key), str):
                        found.add(meta[key])
        return frozenset(found)


def templates() -> list[Template]:
    out = []
    for folder in TEMPLATE_DIRS:
        for path in sorted((FIXTURES / folder).rglob("*")):
            if not path.is_file() or any(part.startswith(".") for part in path.relative_to(FIXTURES).parts):
                continue
            name = path.name
            if name.startswith("Dockerfile"):
                kind = "dockerfile"
            elif path.suffix in (".yaml", ".yml"):
                kind = "yaml"
            elif path.suffix == ".sh":
                kind = "shell"
            else:
                continue
            out.append(Template(path.relative_to(FIXTURES).as_posix(), path.read_text(encoding="utf-8"), kind))
    return out


def rename(text: str, names: frozenset[str], suffix: str) -> str:
    """``text`` with every line whose whole value is one of ``names`` given ``suffix``."""
    if not names:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _VALUE.match(line)
        if match and match["value"] in names:
            lines[i] = f"{match['lead']}{match['q']}{match['value']}{suffix}{match['q']}{match['tail']}"
    return "\n".join(lines)


def generate(out: Path, count: int) -> dict[str, int]:
    """Write ``count`` files under ``out`` (emptied first); returns the number of files per kind."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    source = templates()
    names = frozenset().union(*(t.names for t in source))
    kinds = {"yaml": 0, "dockerfile": 0, "shell": 0}
    written, group = 0, 0
    while written < count:
        suffix = f"-g{group:05d}"
        folder = out / f"team-{group % 25:02d}" / f"project{suffix}"
        for template in source:
            if written == count:
                break
            if template.kind == "shell" and (group % SCRIPT_EVERY or group >= SCRIPT_EVERY * SCRIPT_GROUPS):
                continue  # a monorepo holds far fewer cluster scripts than manifests
            target = folder / template.path  # the fixtures' own layout: Dockerfiles keep their names
            target.parent.mkdir(parents=True, exist_ok=True)
            if template.kind == "yaml":
                text = rename(template.text, names, suffix)
            elif template.kind == "shell":
                text = _CLUSTER.sub(lambda m: f"{m['lead']}{m['q']}{m['value']}{suffix}{m['q']}{m['tail']}", template.text)
            else:
                text = template.text
            target.write_text(text, encoding="utf-8")
            kinds[template.kind] += 1
            written += 1
        group += 1
    return kinds


# ---------------------------------------------------------------------------------------------
# The IaC corpus: node pools in Terraform, Bicep and ARM templates

IAC_DIRS = ("iac", "rules/AKS001", "rules/AKS002", "rules/AKS003", "rules/AKS004", "rules/AKS005", "rules/AKS006")
IAC_SUFFIXES = (".tf", ".tfvars", ".bicep", ".bicepparam", ".json")
# the names a cluster or pool is written with in the fixtures: quoted literals only (`'ml-aks'`,
# `"gpunp"`), so references (`var.x`, `parameters('x')`) keep theirs
_IAC_NAME = re.compile(r"""(?P<q>["'])(?P<value>ml-aks(?:-[a-z]+)?|[a-z][a-z0-9]{1,11}(?:np|gpu|pool|a100|h100|t4))(?P=q)""")


def iac_templates() -> list[Template]:
    """The Terraform, Bicep and ARM fixtures (ARM: a ``.json`` with a ``deploymentTemplate``
    schema), grouped as they are: a Terraform module is its folder."""
    out = []
    for folder in IAC_DIRS:
        for path in sorted((FIXTURES / folder).rglob("*")):
            if not path.is_file() or path.suffix not in IAC_SUFFIXES:
                continue
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json" and "deploymentTemplate" not in text[:4096]:
                continue
            out.append(Template(path.relative_to(FIXTURES).as_posix(), text, "iac"))
    return out


def generate_iac(out: Path, count: int) -> dict[str, int]:
    """Write ``count`` IaC files under ``out`` (emptied first): groups of every IaC fixture, each
    in its own folder, with every quoted cluster and pool name suffixed with the group's number
    (unique names across groups, as in a platform repository of many clusters); the last group
    is cut short. Returns the number of files per suffix. Depends only on N and the fixtures."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    source = iac_templates()
    kinds = {suffix: 0 for suffix in IAC_SUFFIXES}
    written, group = 0, 0
    while written < count:
        suffix = f"g{group:05d}"
        folder = out / f"platform-{group % 25:02d}" / f"cluster-{suffix}"
        for template in source:
            if written == count:
                break
            target = folder / template.path
            target.parent.mkdir(parents=True, exist_ok=True)
            text = _IAC_NAME.sub(lambda m: f"{m['q']}{m['value']}{suffix}{m['q']}", template.text)
            target.write_text(text, encoding="utf-8")
            kinds[target.suffix] += 1
            written += 1
        group += 1
    return kinds


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 3 and sys.argv[3] == "iac":
        print(generate_iac(Path(sys.argv[1]), int(sys.argv[2])))
    else:
        print(generate(Path(sys.argv[1]), int(sys.argv[2])))
