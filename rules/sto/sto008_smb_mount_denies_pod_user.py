"""An Azure Files SMB share mounted with an owner and modes that deny the pod's user.

## What it does
For each container that mounts a PersistentVolumeClaim read-write, follows the claim to what
mounts it: the PersistentVolume it binds to (`spec.volumeName`, or a PV whose `claimRef` names it)
when that is an Azure Files CSI volume, else the project StorageClass it names, when that
provisions Azure Files (`file.csi.azure.com`) over SMB (no `protocol: nfs`). SMB has no owners of
its own: every file and folder of the share shows the owner, group and modes of the mount
options, `uid=` and `gid=` (0 when not given; `gid` is the pod's `fsGroup` when the options set
none, as the driver passes it) and `dir_mode=` / `file_mode=` (0777 when not given).

It then takes the container's user (`runAsUser`, the container's over the pod's) and groups
(`runAsGroup`, the pod's `fsGroup` and `supplementalGroups`), picks the owner, group or other
bits of the modes as the kernel does, and flags the container when those bits deny it writing:
no `w` and `x` in `dir_mode` (it cannot create a file) or no `w` in `file_mode` (it cannot
overwrite one). The finding points at the volume mount's `mountPath` and names the options.

Not judged: a container whose user is not written (the image decides) or is root, one whose
verdict depends on a primary group that is not written (no `runAsGroup`), read-only mounts,
`noperm` mounts (no client-side checks), options or modes that are templated or not octal,
classes and volumes of other drivers or NFS shares, and claims without a class.

## Why is this bad?
The article mounts its Azure Files shares with `uid=1000`, `gid=1000`, `dir_mode=0770` and
`file_mode=0660` for pods that run as user and group 1000 with `fsGroup: 1000`, so that "distributed
workers on different nodes" can write to the same share, and its checkpoint Job writes there
with the same identity. With another user and no matching group, the CIFS client refuses every
write (`Permission denied`): the workers cannot write their results and the trainer cannot save
a checkpoint, which shows up only when the first save fails, hours into the run. `fsGroup`
cannot repair it: the kubelet never changes ownership on an SMB mount.

## Example
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-checkpoints-azurefile
provisioner: file.csi.azure.com
mountOptions: [dir_mode=0770, file_mode=0660, uid=1000, gid=1000]
---
# the trainer mounts a claim of that class
      securityContext:
        runAsUser: 2000
        runAsGroup: 2000
        fsGroup: 2000
```

Use instead:
```yaml
      securityContext:
        runAsUser: 1000
        runAsGroup: 1000
        fsGroup: 1000
```

## Known problems
Only the mount options written in the project are read: a class or volume of another repository,
AKS's built-in classes (mode 0777) and options the driver adds are not. Access-control lists the
share's server enforces (Azure AD Kerberos identities) are not modelled. Inline `csi:` volumes and
StatefulSet claim templates are not followed.

## References
- AKS, Azure Files CSI driver mount options: https://learn.microsoft.com/azure/aks/azure-csi-files-storage-provision#mount-options
- mount.cifs(8), `uid`, `gid`, `file_mode`, `dir_mode`, `noperm`: https://man7.org/linux/man-pages/man8/mount.cifs.8.html
- Kubernetes, configure a security context (`fsGroup`, `supplementalGroups`): https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.security import effective, pod_security_context
from mlops_lint.model.storage import bound_volume, claim_name, claim_object, is_read_only, pod_volumes, pvc_claim
from mlops_lint.rule import POD, Finding, rule

FILE = "file.csi.azure.com"
_DEFAULT_MODE = 0o777


class Share(Struct, frozen=True):
    """What an SMB mount shows every file as: owner, group (None: not given) and modes."""

    uid: int
    gid: int | None
    dir_mode: int
    file_mode: int
    where: str  # for messages: the object and its options
    options: str


def _parse(items) -> dict[str, str] | None:
    """The mount options as name -> value (None when one cannot be read)."""
    found: dict[str, str] = {}
    for item in items or ():
        if not isinstance(item, str) or is_templated(item):
            return None
        for token in item.split(","):
            name, _, value = token.strip().partition("=")
            if name:
                found[name.strip().lower()] = value.strip()
    return found


def _number(text: str | None, default: int | None, base: int) -> int | None | bool:
    """The option's number, ``default`` when absent, False when not a plain number."""
    if text is None:
        return default
    digits = text[2:] if base == 8 and text.lower().startswith("0o") else text
    try:
        return int(digits, base) if digits and digits.isdigit() and len(digits) < 12 else False
    except ValueError:
        return False


def _protocol_is_smb(params) -> bool:
    if params is None:
        return True
    for key, value in params.items():
        if isinstance(key, str) and key.lower() == "protocol":
            return isinstance(value, str) and value.strip().lower() == "smb"
    return True


def _share(obj, options, params) -> Share | None:
    """The share an Azure Files class or volume mounts, or None when it denies no one or is unknown."""
    if not options or not _protocol_is_smb(params):
        return None
    found = _parse(options)
    if found is None or "noperm" in found:
        return None
    uid, gid = _number(found.get("uid"), 0, 10), _number(found.get("gid"), None, 10)
    dir_mode, file_mode = _number(found.get("dir_mode"), _DEFAULT_MODE, 8), _number(found.get("file_mode"), _DEFAULT_MODE, 8)
    if any(v is False for v in (uid, gid, dir_mode, file_mode)) or dir_mode == file_mode == _DEFAULT_MODE:
        return None
    shown = ", ".join(f"{k}={found[k]}" for k in ("uid", "gid", "dir_mode", "file_mode") if k in found)
    where = f"{obj.kind} `{obj.name}` ({obj.path}:{options.item_span(0).line})"
    return Share(uid, gid, dir_mode, file_mode, where, shown)


def _class_share(index, name: str) -> Share | None:
    found = [sc for sc in index.named("StorageClass", name) if sc.group == "storage.k8s.io"]
    if not found or any(sc.body.get("provisioner") != FILE for sc in found):
        return None
    shares = [_share(sc, sc.body.get_seq("mountOptions"), sc.body.get_map("parameters")) for sc in found]
    if any(s is None for s in shares) or len({(s.uid, s.gid, s.dir_mode, s.file_mode) for s in shares}) > 1:
        return None  # variant definitions that do not agree: not judged
    return shares[0]


def _volume_share(pv) -> Share | None:
    spec = pv.body.get_map("spec")
    csi = spec.get_map("csi") if spec is not None else None
    if csi is None or csi.get("driver") != FILE:
        return None
    return _share(pv, spec.get_seq("mountOptions"), csi.get_map("volumeAttributes"))


def _claim_share(index, pod, claim_ref: str) -> Share | None:
    obj = claim_object(index, claim_ref, pod.obj.namespace, pod.obj)
    claim = pvc_claim(obj) if obj is not None else None
    if claim is None:
        return None
    pv = bound_volume(index, claim)
    if pv is not None:
        return _volume_share(pv)
    volume_name = claim.spec.get("volumeName")
    name = claim.class_name
    if (isinstance(volume_name, str) and volume_name) or not name or is_templated(name):
        return None
    return index.memo(("STO008-class", name), lambda: _class_share(index, name))


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bits(share: Share, user: int, groups: set[int], group_known: bool, gid: int) -> tuple[int, int] | None:
    """(dir bits, file bits) the user gets, or None when that depends on an unwritten primary group."""
    shift = 6 if user == share.uid else 3 if gid in groups else 0
    if shift == 0 and not group_known:
        group_bits = ((share.dir_mode >> 3) & 7, (share.file_mode >> 3) & 7)
        if group_bits != (share.dir_mode & 7, share.file_mode & 7):
            return None  # the image's primary group might be the share's
    return (share.dir_mode >> shift) & 7, (share.file_mode >> shift) & 7


@rule(code="STO008", name="smb-mount-denies-pod-user", severity="error", scope=POD, tags=("storage",))
def check(pod, ctx):
    volumes = None
    for container in pod.app_containers:
        for mount_index, mount in container.volume_mounts:
            if volumes is None:
                volumes = pod_volumes(pod)
                if not any(claim_name(volume) for _, volume in volumes.values()):
                    return  # no claim mounted: decided before any lookup
            name = mount.get("name")
            entry = volumes.get(name) if isinstance(name, str) else None
            claim_ref = claim_name(entry[1]) if entry is not None else None
            if claim_ref is None or is_read_only(mount, entry[1]) or not isinstance(mount.get("mountPath"), str):
                continue
            share = _claim_share(ctx.index, pod, claim_ref)
            if share is None:
                continue
            user = _int(effective(container, "runAsUser").value)
            if user is None or user == 0:
                continue
            context = pod_security_context(pod)
            primary = _int(effective(container, "runAsGroup").value)
            fs_group = _int(context.get("fsGroup")) if context is not None else None
            extra = context.get("supplementalGroups") if context is not None else None
            groups = {g for g in (primary, fs_group, *(extra if isinstance(extra, list) else ())) if _int(g) is not None}
            gid = share.gid if share.gid is not None else (fs_group if fs_group is not None else 0)
            bits = _bits(share, user, groups, primary is not None, gid)
            if bits is None:
                continue
            denied = []
            if (bits[0] & 3) != 3:
                denied.append(f"create files (dir_mode gives it {_rwx(bits[0])})")
            if not bits[1] & 2:
                denied.append(f"write files (file_mode gives it {_rwx(bits[1])})")
            if not denied:
                continue
            who = "owner" if user == share.uid else "group" if gid in groups else "other"
            shown = sorted(groups)
            yield Finding(
                mount.value_span("mountPath"),
                f"container `{container.name}` runs as user {user} (groups {', '.join(map(str, shown)) or 'none written'}) "
                f"and mounts claim `{claim_ref}` read-write at {mount['mountPath']}, but the SMB share shows every file "
                f"as uid {share.uid}, gid {gid} ({share.options} in {share.where}): user {user} gets the {who} "
                f"permissions and cannot {' or '.join(denied)}, so every write fails with Permission denied",
                node=container.path + ("volumeMounts", mount_index, "mountPath"),
                fix=_fix(share, user, primary if primary is not None else fs_group, gid),
            )


def _fix(share: Share, user: int, group: int | None, gid: int) -> str:
    holder = "StorageClass's" if share.where.startswith("StorageClass") else "PersistentVolume's"
    own = f"mount the share as the pod's user: `uid={user}`" + (f", `gid={group}`" if group is not None else "") + \
        f" in the {holder} mountOptions"
    if share.uid == 0 and gid == 0:
        return own  # never advise running as root
    return f"run the pod as the share's user or group (`runAsUser: {share.uid}` or `fsGroup: {gid}`), or {own}"


def _rwx(bits: int) -> str:
    return "".join(letter if bits & mask else "-" for letter, mask in (("r", 4), ("w", 2), ("x", 1)))
