"""A StorageClass or PersistentVolume whose mount options belong to another protocol than its own.

## What it does
Reads the mount options of a StorageClass (`mountOptions`) or a PersistentVolume
(`spec.mountOptions`) of the Azure Blob (`blob.csi.azure.com`) or Azure Files
(`file.csi.azure.com`) CSI driver, with the protocol the class mounts with (`parameters.protocol`,
`spec.csi.volumeAttributes.protocol`; Blob defaults to `fuse`, Azure Files to `smb`), and flags:

- **blobfuse options** on an NFS or SMB mount: an item written as a command-line flag
  (`-o allow_other`, `-o attr_timeout=120`, `--file-cache-timeout-in-seconds=120`), which only
  blobfuse understands;
- **SMB options** on an NFS mount (Blob or Azure Files with `protocol: nfs`): `dir_mode`,
  `file_mode`, `uid`, `gid`, `forceuid`, `forcegid`, `mfsymlinks`, `cache=`, `nosharesock`,
  `nobrl`, `noperm`, `serverino`, `multichannel`, `max_channels`, `seal`;
- **NFS options** on an SMB mount (Azure Files without `protocol: nfs`): `nconnect`, `nfsvers`,
  `vers=4…`, `noresvport`, `resvport`, `lookupcache`, `proto`, `mountproto`, `nolock`,
  `local_lock`.

Options both protocols take (`actimeo`, `rsize`, `wsize`, `vers=3.0` on SMB) are not judged, nor a
blobfuse class's options, an unknown or templated protocol, or another driver. One finding per
kind of mismatch, at the first option of that kind, naming every option of it.

## Why is this bad?
For NFS and SMB the CSI driver joins the mount options with commas into the `-o` argument of
`mount -t nfs` or `mount -t cifs`: `-o attr_timeout=120` becomes an option named
`-o attr_timeout=120`, `dir_mode` means nothing to NFS and `nconnect` nothing to CIFS, and the
kernel refuses the mount ("an incorrect mount option was specified"). Every pod that uses the
volume then stays in `ContainerCreating`, and the training job waits on its dataset or its
checkpoints. The article's Blob NFS class for training datasets carries the blobfuse form
(`-o attr_timeout=120`, `-o nconnect=4`) while mounting over NFS; its Azure Files classes show
the SMB options (`dir_mode`, `uid`, `mfsymlinks`, `cache=strict`) that belong to SMB only.

## Example
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-azureblob-nfs
provisioner: blob.csi.azure.com
parameters:
  protocol: nfs
mountOptions:
- -o attr_timeout=120
- -o nconnect=4
```

Use instead:
```yaml
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ml-azureblob-nfs
provisioner: blob.csi.azure.com
parameters:
  protocol: nfs
mountOptions:
- nconnect=4
- actimeo=120
```

## Known problems
Only the options listed above are judged, by name; an option of neither protocol, or a wrong
value of a right option, is not. Inline pod volumes (`csi:` in a pod spec) and the driver's
`mountOptions` volume attribute are not read. There is no automatic fix: a blobfuse timeout has
no single NFS equivalent (`actimeo` is the nearest), and a class's mount options cannot be changed
in place (a new class, or a new PersistentVolume, is needed).

## References
- Azure Blob CSI driver, NFS mount options: https://learn.microsoft.com/azure/aks/azure-csi-blob-storage-provision
- Azure Files CSI driver, SMB and NFS mount options: https://learn.microsoft.com/azure/aks/azure-csi-files-storage-provision
- nfs(5) and mount.cifs(8), the options each protocol takes: https://man7.org/linux/man-pages/man5/nfs.5.html
"""

from __future__ import annotations

from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.rule import Finding, Kind, rule

_BLOB, _FILE = "blob.csi.azure.com", "file.csi.azure.com"
_DEFAULT_PROTOCOL = {_BLOB: "fuse", _FILE: "smb"}
_KNOWN_PROTOCOLS = {_BLOB: ("fuse", "fuse2", "nfs"), _FILE: ("smb", "nfs")}

_SMB_ONLY = frozenset({
    "dir_mode", "file_mode", "uid", "gid", "forceuid", "forcegid", "mfsymlinks", "cache", "nosharesock",
    "nobrl", "noperm", "serverino", "noserverino", "multichannel", "max_channels", "seal",
})
_NFS_ONLY = frozenset({
    "nconnect", "nfsvers", "noresvport", "resvport", "lookupcache", "proto", "mountproto", "nolock", "local_lock",
})
_NFS_VERSIONS = ("4", "4.0", "4.1", "4.2")  # `vers=` is SMB's too (vers=3.0, 3.1.1): only NFS's 4.x is judged

_NAMES = {"blobfuse": ("written as a blobfuse command-line flag", "written as blobfuse command-line flags"),
          "smb": ("an SMB (mount.cifs) option", "SMB (mount.cifs) options"),
          "nfs": ("an NFS option", "NFS options")}


def _parameter(params: YMap | None, key: str) -> str | None:
    """A CSI parameter: the Azure drivers read their parameter keys case-insensitively."""
    if params is None:
        return None
    for name, value in params.items():
        if isinstance(name, str) and name.lower() == key:
            return value.strip().lower() if isinstance(value, str) else None
    return None


def _kind_of(item: str, protocol: str) -> str | None:
    """The foreign protocol an option item belongs to on a ``protocol`` mount, or None."""
    text = item.strip()
    if text.startswith("-"):
        return "blobfuse"
    for token in text.split(","):
        name, _, value = token.strip().partition("=")
        name = name.strip().lower()
        if protocol == "nfs" and name in _SMB_ONLY:
            return "smb"
        if protocol == "smb" and (name in _NFS_ONLY or (name == "vers" and value.strip() in _NFS_VERSIONS)):
            return "nfs"
    return None


def _mount(obj) -> tuple[str, str, YSeq, tuple] | None:
    """(driver, protocol, mount options, node path of the options) of a class or volume, or None."""
    body = obj.body
    if obj.kind == "StorageClass":
        if obj.group != "storage.k8s.io":
            return None
        driver, params, options, node = body.get("provisioner"), body.get_map("parameters"), \
            body.get_seq("mountOptions"), ("mountOptions",)
    else:
        spec = body.get_map("spec")
        csi = spec.get_map("csi") if spec is not None else None
        if obj.group != "" or csi is None:
            return None
        driver, params, options, node = csi.get("driver"), csi.get_map("volumeAttributes"), \
            spec.get_seq("mountOptions"), ("spec", "mountOptions")
    if not isinstance(driver, str) or driver not in _DEFAULT_PROTOCOL or not options:  # a list or map: SCH002's
        return None
    protocol = _parameter(params, "protocol")
    if protocol is None:
        if params is not None and any(isinstance(k, str) and k.lower() == "protocol" for k in params):
            return None  # written but not a plain string: not judged
        protocol = _DEFAULT_PROTOCOL[driver]
    if protocol not in _KNOWN_PROTOCOLS[driver] or protocol.startswith("fuse"):
        return None
    return driver, protocol, options, node


@rule(code="STO007", name="mount-options-protocol-mismatch", severity="error",
      scope=Kind("StorageClass", "PersistentVolume"), tags=("storage",))
def check(obj, ctx):
    mount = _mount(obj)
    if mount is None:
        return
    driver, protocol, options, node = mount
    found: dict[str, list[int]] = {}
    for index, item in enumerate(options):
        if isinstance(item, str) and (kind := _kind_of(item, protocol)) is not None:
            found.setdefault(kind, []).append(index)
    storage = "Blob storage" if driver == _BLOB else "an Azure Files share"
    over = "NFS" if protocol == "nfs" else "SMB"
    what = "StorageClass" if obj.kind == "StorageClass" else "PersistentVolume"
    for kind, indexes in found.items():
        items = ", ".join(f"`{options[i].strip()}`" for i in indexes)
        tool = "mount.nfs" if protocol == "nfs" else "mount.cifs"
        hint = {
            "blobfuse": f"{over} options without `-o`/`--` ("
                        + ("`nconnect=4`, `actimeo=120`" if protocol == "nfs" else "`actimeo=30`, `mfsymlinks`") + ")"
                        + (", or a blobfuse class (`protocol: fuse2`) for blobfuse's options" if driver == _BLOB else ""),
            "smb": "NFS options instead (the share's owner and modes are set on the files, not at mount)",
            "nfs": "SMB options instead, or `protocol: nfs` on a Premium NFS share",
        }[kind]
        yield Finding(options.item_span(indexes[0]),
                      f"{what} `{obj.name}` mounts {storage} over {over} ({driver}, protocol `{protocol}`), but "
                      f"mount option{'s' if len(indexes) > 1 else ''} {items} {'are' if len(indexes) > 1 else 'is'} "
                      f"{_NAMES[kind][len(indexes) > 1]}: {tool} refuses the mount and every pod using the volume stays in "
                      "ContainerCreating",
                      node=(*node, indexes[0]), fix=hint)
