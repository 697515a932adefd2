"""Whether an object's apiVersion is served, and what to use instead (SCH003)."""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from mlops_lint.validation import builtin, bundle, crds, removed
from mlops_lint.validation.validate import split_api_version


class Unserved(Struct, frozen=True):
    message: str
    replacement: str | None  # the apiVersion to use (the fix), when there is one
    severity: str | None = None  # "info" for a deprecated version that is still served
    # which case (SCH003's slug): "removed" (served once, not now), "not-yet-served" (first served by
    # a later release), "not-served" (not among the versions the release or CRD lists), "deprecated" (served, marked deprecated)
    case: str = "removed"


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
                                f"{later}); set kubernetes-version to the cluster's if it is newer", None,
                                case="not-yet-served")
            return None  # not a kind of this group at all: SCH002 names the kind
        preferred = builtin.preferred_version(versions)
        replacement = f"{group}/{preferred}" if group else preferred
        if later is not None:
            return Unserved(f"Kubernetes {target} does not serve {obj.api_version} {kind} yet (first served in "
                            f"{later}); use {replacement}, or set kubernetes-version to the cluster's", replacement,
                            case="not-yet-served")
        return Unserved(f"Kubernetes {target} does not serve {kind} in {obj.api_version}; use {replacement}",
                        replacement, case="not-served")
    defined = crds.candidates(index, config, group, kind)
    if defined:
        return _crd_check(obj, defined, group, version)
    gone = removed.custom_removal(group, version, kind)
    if gone is not None:
        return Unserved(f"{obj.api_version} {kind} is not served by {gone.release} any more"
                        f"{_use(gone.replacement, gone.replacement_kind, kind)}", gone.replacement)
    bundled = bundle.candidates(index, config, group, kind)
    if bundled:
        return _bundled_check(obj, bundled[0], group, version)
    return None


def _crd_check(obj: Any, defined: list, group: str, version: str) -> Unserved | None:
    """A CRD of the project or of ``crd-paths`` defines the kind: is the version served (deprecated)?"""
    serving = [crd for crd in defined if crd.serves(version)]
    if serving:
        return _deprecated(obj, serving[0], group, version, f"the CustomResourceDefinition {serving[0].name} "
                                                               f"({serving[0].where})")
    crd = defined[0]
    served = crd.served
    replacement = crd.replacement()
    state = "does not serve" if version not in crd.versions else "no longer serves (served: false)"
    case = "not-served" if version not in crd.versions else "removed"
    if not served:
        return Unserved(f"the CustomResourceDefinition {crd.name} ({crd.where}) {state} {obj.api_version} and "
                        "serves no version at all", None, case=case)
    role = " (its storage version)" if replacement == crd.storage else ""
    return Unserved(f"the CustomResourceDefinition {crd.name} ({crd.where}) {state} {obj.api_version}; use "
                    f"{group}/{replacement}{role}", f"{group}/{replacement}", case=case)


def _bundled_check(obj: Any, crd: Any, group: str, version: str) -> Unserved | None:
    """Only the bundle defines the kind: the versions its upstream release serves (or another
    upstream project that defines the same kind, such as the MPI Operator's ``v2beta1`` MPIJob)."""
    if version in crd.elsewhere:
        return None
    if crd.serves(version):
        return _deprecated(obj, crd, group, version, f"{crd.origin}")
    served = [*crd.served, *crd.elsewhere]
    replacement = crd.replacement()
    listed = ", ".join(f"{group}/{v}" for v in served)
    state = "no longer serves" if version in crd.versions else "does not serve"
    return Unserved(f"{crd.origin} {state} {obj.api_version} {obj.kind} (it serves {listed}); use {group}/{replacement}",
                    f"{group}/{replacement}" if replacement else None,
                    case="removed" if version in crd.versions else "not-served")


def _deprecated(obj: Any, crd: Any, group: str, version: str, who: str) -> Unserved | None:
    """A served version that the CRD marks ``deprecated``: an info-level note, naming what to move to."""
    entry = crd.versions.get(version)
    if entry is None or not entry.deprecated:
        return None
    replacement = crd.replacement()
    warning = getattr(entry, "warning", None)
    said = f" (\"{warning}\")" if isinstance(warning, str) and warning else ""
    move = f"; move to {group}/{replacement}" if replacement and replacement != version else ""
    return Unserved(f"{obj.api_version} {obj.kind} is still served but deprecated by {who}{said}{move}",
                    f"{group}/{replacement}" if replacement and replacement != version else None, severity="info",
                    case="deprecated")
