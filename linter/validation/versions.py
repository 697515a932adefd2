"""Whether an object's apiVersion is served, and what to use instead (SCH003)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linter.validation import builtin, crds, removed
from linter.validation.validate import split_api_version


@dataclass(frozen=True, slots=True)
class Unserved:
    message: str
    replacement: str | None  # the apiVersion to use (the fix), when there is one


def _use(replacement: str | None, kind: str | None, current_kind: str) -> str:
    if replacement is None:
        return ""
    renamed = f" {kind}" if kind and kind != current_kind else ""
    return f"; use {replacement}{renamed}"


def check(obj: Any, index: Any, config: Any) -> Unserved | None:
    group, version = split_api_version(obj.api_version)
    kind = obj.kind
    target = builtin.effective_version(config)
    release = builtin.release(target)
    gone = removed.builtin_removal(group, version, kind)
    if gone is not None and builtin.version_key(gone.removed_in) <= builtin.version_key(target):
        if gone.replacement is None:
            return Unserved(f"{obj.api_version} {kind} was removed in Kubernetes {gone.removed_in}: {gone.note}", None)
        return Unserved(f"{obj.api_version} {kind} was removed in Kubernetes {gone.removed_in} (linting for "
                        f"{target}){_use(gone.replacement, gone.replacement_kind, kind)}", gone.replacement)
    if release is None:
        return None
    if group in release.groups or group in removed.BUILTIN_GROUPS:
        if release.definition(group, version, kind) is not None or gone is not None:
            return None
        versions = release.kinds.get((group, kind))
        later = builtin.first_served(group, version, kind, target)
        if not versions:
            if later is not None:  # a kind the target release does not have yet
                return Unserved(f"Kubernetes {target} does not serve {obj.api_version} {kind} yet (first served in "
                                f"{later}); set kubernetes-version to the cluster's if it is newer", None)
            return None  # not a kind of this group at all: SCH002 names the kind
        preferred = builtin.preferred_version(versions)
        replacement = f"{group}/{preferred}" if group else preferred
        if later is not None:
            return Unserved(f"Kubernetes {target} does not serve {obj.api_version} {kind} yet (first served in "
                            f"{later}); use {replacement}, or set kubernetes-version to the cluster's", replacement)
        return Unserved(f"Kubernetes {target} does not serve {kind} in {obj.api_version}; use {replacement}",
                        replacement)
    defined = crds.candidates(index, config, group, kind)
    if defined:
        if any(crd.serves(version) for crd in defined):
            return None
        crd = defined[0]
        served = crd.served
        replacement = crd.replacement()
        state = "does not serve" if version not in crd.versions else "no longer serves (served: false)"
        if not served:
            return Unserved(f"the CustomResourceDefinition {crd.name} ({crd.where}) {state} {obj.api_version} and "
                            "serves no version at all", None)
        role = " (its storage version)" if replacement == crd.storage else ""
        return Unserved(f"the CustomResourceDefinition {crd.name} ({crd.where}) {state} {obj.api_version}; use "
                        f"{group}/{replacement}{role}", f"{group}/{replacement}")
    gone = removed.custom_removal(group, version, kind)
    if gone is not None:
        return Unserved(f"{obj.api_version} {kind} is not served by {gone.release} any more"
                        f"{_use(gone.replacement, gone.replacement_kind, kind)}", gone.replacement)
    return None
