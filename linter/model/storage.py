"""Storage facts and semantics for the STO rules: where a pod's checkpoints live and what
happens to them when the claim is deleted.

Three things are written once here:

- **AKS's built-in StorageClasses** and their reclaim policies (facts carried over from the AKS
  storage docs: every built-in class reclaims with ``Delete``; ``default`` is the cluster default).
- **Reclaim resolution** of a claim, as Kubernetes decides it: a claim bound to a named
  PersistentVolume (``spec.volumeName``, or a PV whose ``claimRef`` names the claim) keeps that
  PV's ``persistentVolumeReclaimPolicy``; otherwise the class (the beta annotation
  ``volume.beta.kubernetes.io/storage-class`` wins over ``spec.storageClassName``, as in
  ``GetPersistentVolumeClaimClass``) provisions it with the class's ``reclaimPolicy`` (API
  default ``Delete``); no class at all means the cluster default class (a project class
  annotated ``storageclass.kubernetes.io/is-default-class: "true"``, else AKS's ``default``);
  ``""`` means static binding to a pre-created PV.
- **Checkpoint evidence** in a container: mounts whose path, volume or claim names mention
  checkpoints, and checkpoint *destinations* given in env values or command-line flags
  (``CHECKPOINT_DIR=/ckpt``, ``--checkpoint-dir /ckpt``, ``--checkpoint-file /ckpt/last.pt``,
  ``checkpointer.output_dir=/out``, ``--output-dir /scratch/checkpoints``, and the trainers' own
  ``--output_dir`` (Hugging Face's Trainer) and ``--save_dir`` (fairseq, and many scripts after
  it), which is where they write their checkpoints), resolved to the mount that holds them by the
  longest mount-path prefix, as the kernel does. A relative path is resolved against the
  container's ``workingDir``; without one it is relative to the image's WORKDIR (``/`` unless the
  image sets one), which the manifest does not tell, so it is kept (as ``./path``) only for a
  container with no volume mount at all: wherever WORKDIR is, the path is then on the container
  filesystem.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from functools import lru_cache
from typing import Any, Iterator

from msgspec import Struct

from mlops_lint.model.document import K8sObject
from mlops_lint.model.k8s import Container, PodSpec, is_templated
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap
from mlops_lint.model.memo import once

# ---------------------------------------------------------------------------------------------
# AKS built-in StorageClasses (facts/aks-platform.md section A)


class BuiltinClass(Struct, frozen=True):
    name: str
    provisioner: str
    reclaim_policy: str | None  # None: not documented (Azure Container Storage classes)
    access_modes: tuple[str, ...]  # what the backing storage supports
    present_when: str


_DISK, _FILE, _BLOB = "disk.csi.azure.com", "file.csi.azure.com", "blob.csi.azure.com"
_RWO, _RWX = ("ReadWriteOnce", "ReadWriteOncePod"), ("ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany")

BUILTIN_STORAGE_CLASSES: dict[str, BuiltinClass] = {c.name: c for c in (
    BuiltinClass("default", _DISK, "Delete", _RWO, "always (the cluster default class, same as managed-csi)"),
    BuiltinClass("managed-csi", _DISK, "Delete", _RWO, "always"),
    BuiltinClass("managed-csi-premium", _DISK, "Delete", _RWO, "always"),
    BuiltinClass("managed-csi-premium-v2", _DISK, "Delete", _RWO, "Kubernetes 1.35 and later"),
    BuiltinClass("azurefile-csi", _FILE, "Delete", _RWX, "always"),
    BuiltinClass("azurefile-csi-premium", _FILE, "Delete", _RWX, "always"),
    BuiltinClass("azureblob-nfs-premium", _BLOB, "Delete", _RWX, "with the Blob CSI driver (--enable-blob-driver)"),
    BuiltinClass("azureblob-fuse-premium", _BLOB, "Delete", _RWX, "with the Blob CSI driver (--enable-blob-driver)"),
    BuiltinClass("managed", _DISK, "Delete", _RWO, "older clusters (legacy name)"),
    BuiltinClass("managed-premium", _DISK, "Delete", _RWO, "older clusters (legacy name)"),
    BuiltinClass("azurefile", _FILE, "Delete", _RWX, "older clusters (legacy name)"),
    BuiltinClass("azurefile-premium", _FILE, "Delete", _RWX, "older clusters (legacy name)"),
    BuiltinClass("local-csi", "localdisk.csi.acstor.io", None, _RWO, "with Azure Container Storage"),
    BuiltinClass("azuresan-csi", "san.csi.azure.com", None, _RWO, "with Azure Container Storage"),
)}
AKS_DEFAULT_CLASS = "default"
_ACSTOR_V1_PREFIX = "acstor-"  # Azure Container Storage v1: one class per storage pool


def builtin_class(name: str) -> BuiltinClass | None:
    """The AKS built-in class ``name`` (``acstor-<pool>`` classes of Azure Container Storage too)."""
    found = BUILTIN_STORAGE_CLASSES.get(name)
    if found is None and name.startswith(_ACSTOR_V1_PREFIX) and len(name) > len(_ACSTOR_V1_PREFIX):
        return BuiltinClass(name, "containerstorage.csi.azure.com", None, _RWO, "with Azure Container Storage v1")
    return found


DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")
BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


# ---------------------------------------------------------------------------------------------
# Claims: PVC objects, StatefulSet volumeClaimTemplates, generic ephemeral volume templates


class Claim(Struct, frozen=True):
    """A PersistentVolumeClaim or a claim template, with where its fields sit."""

    name: str
    namespace: str
    spec: YMap
    metadata: YMap
    span: Span  # where a missing storageClassName is reported: the claim's ``spec:`` key
    path: tuple[str | int, ...]  # path of the claim (its ``metadata``/``spec`` holder) in the object

    @property
    def class_name(self) -> str | None:
        """The class asked for (annotation first, as Kubernetes reads it); None when unset."""
        annotations = self.metadata.get("annotations")
        if isinstance(annotations, dict) and isinstance(annotations.get(BETA_CLASS_ANNOTATION), str):
            return annotations[BETA_CLASS_ANNOTATION]
        value = self.spec.get("storageClassName")
        return value if isinstance(value, str) else None

    @property
    def class_span(self) -> Span:
        annotations = self.metadata.get_map("annotations")
        if annotations is not None and isinstance(annotations.get(BETA_CLASS_ANNOTATION), str):
            return annotations.value_span(BETA_CLASS_ANNOTATION)
        if isinstance(self.spec.get("storageClassName"), str):
            return self.spec.value_span("storageClassName")
        return self.span

    @property
    def class_node(self) -> tuple[str | int, ...]:
        annotations = self.metadata.get("annotations")
        if isinstance(annotations, dict) and isinstance(annotations.get(BETA_CLASS_ANNOTATION), str):
            return self.path + ("metadata", "annotations", BETA_CLASS_ANNOTATION)
        return self.path + ("spec", "storageClassName")

    @property
    def access_modes(self) -> tuple[str, ...]:
        modes = self.spec.get("accessModes")
        return tuple(str(m) for m in modes) if isinstance(modes, list) else ()

    @property
    def access_modes_span(self) -> Span:
        return self.spec.kspans.get("accessModes") or self.span


def pvc_claim(obj: K8sObject) -> Claim | None:
    """The claim of a PersistentVolumeClaim object."""
    spec = obj.body.get_map("spec")
    if obj.kind != "PersistentVolumeClaim" or spec is None:
        return None
    return Claim(obj.name, obj.namespace or "default", spec, obj.metadata, obj.body.kspans.get("spec", obj.span), ())


def claim_templates(obj: K8sObject) -> Iterator[Claim]:
    """A StatefulSet's ``volumeClaimTemplates`` (each template is a PVC per pod)."""
    if obj.kind != "StatefulSet":
        return
    spec = obj.body.get_map("spec")
    templates = spec.get_seq("volumeClaimTemplates") if spec is not None else None
    for index, template in templates.maps() if templates is not None else ():
        claim_spec = template.get_map("spec")
        if claim_spec is None:
            continue
        meta = template.get_map("metadata") or YMap(template.span)
        name = meta.get("name")
        yield Claim(str(name) if name is not None else f"#{index}", obj.namespace or "default", claim_spec, meta,
                    template.kspans.get("spec", templates.item_span(index)), ("spec", "volumeClaimTemplates", index))


def ephemeral_claim(pod: PodSpec, index: int, volume: YMap) -> Claim | None:
    """The claim template of a generic ephemeral volume (``volumes[].ephemeral.volumeClaimTemplate``)."""
    ephemeral = volume.get_map("ephemeral")
    template = ephemeral.get_map("volumeClaimTemplate") if ephemeral is not None else None
    claim_spec = template.get_map("spec") if template is not None else None
    if claim_spec is None:
        return None
    meta = template.get_map("metadata") or YMap(template.span)
    name = volume.get("name")
    return Claim(f"{pod.obj.name}-{name}", pod.obj.namespace or "default", claim_spec, meta,
                 template.kspans.get("spec", template.span), pod.path + ("volumes", index, "ephemeral", "volumeClaimTemplate"))


def claim_object(index: Any, name: str, namespace: str, near: K8sObject) -> K8sObject | None:
    """The PersistentVolumeClaim a pod volume of ``near`` names. When the project defines that
    claim more than once (alternative samples, overlays), the definition in ``near``'s own file
    is the one it goes with; otherwise the project's."""
    namespace = namespace or "default"
    found = [pvc for pvc in index.named("PersistentVolumeClaim", name)
             if (pvc.namespace or "default") == namespace and pvc.group == ""]
    if len(found) > 1:
        return next((pvc for pvc in found if pvc.path == near.path), found[0])
    return found[0] if found else None


# ---------------------------------------------------------------------------------------------
# Reclaim policy of a claim


class Reclaim(Struct, frozen=True):
    """What happens to the data when the claim is deleted, and who decides it."""

    policy: str  # Delete | Retain | Recycle
    via: str  # for messages: "StorageClass `x` (AKS built-in)", "PersistentVolume `pv`"
    obj: K8sObject | None = None  # the StorageClass or PV of the project that decides it
    class_name: str | None = None  # the class that provisions the volume (None: a static PV)


def _policy(value: Any, default: str) -> str:
    return value if value in ("Delete", "Retain", "Recycle") else default


def _pv_reclaim(pv: K8sObject) -> Reclaim:
    spec = pv.body.get("spec")
    # a PersistentVolume written by hand defaults to Retain (SetDefaults_PersistentVolume)
    policy = _policy(spec.get("persistentVolumeReclaimPolicy") if isinstance(spec, dict) else None, "Retain")
    return Reclaim(policy, f"PersistentVolume `{pv.name}`", pv, None)


def bound_volume(index: Any, claim: Claim) -> K8sObject | None:
    """The project's PersistentVolume the claim binds to: ``spec.volumeName``, or a PV whose
    ``claimRef`` names the claim (pre-binding)."""
    volume_name = claim.spec.get("volumeName")
    if isinstance(volume_name, str) and volume_name:
        return index.get("PersistentVolume", volume_name)
    return index.memo("pv-by-claim-ref", lambda: _volumes_by_claim_ref(index)).get((claim.namespace, claim.name))


def _volumes_by_claim_ref(index: Any) -> dict[tuple[str, str], K8sObject]:
    """(namespace, name) of the claim a PV's ``claimRef`` names -> the first such PV."""
    found: dict[tuple[str, str], K8sObject] = {}
    for pv in index.of_kind("PersistentVolume"):
        spec = pv.body.get("spec")
        ref = spec.get("claimRef") if isinstance(spec, dict) else None
        if isinstance(ref, dict):
            namespace, name = ref.get("namespace") or "default", ref.get("name")
            if isinstance(namespace, str) and isinstance(name, str):  # nothing else equals a claim's
                found.setdefault((namespace, name), pv)
    return found


def default_class(index: Any) -> K8sObject | None:
    """A StorageClass of the project marked as the cluster default."""
    return index.memo("default-storage-class", lambda: next(
        (sc for sc in index.of_kind("StorageClass")
         if any(str(sc.annotations.get(key, "")).lower() == "true" for key in DEFAULT_CLASS_ANNOTATIONS)), None))


def class_reclaim(index: Any, name: str, *, defaulted: bool = False) -> Reclaim | None:
    """The reclaim policy volumes of class ``name`` get; None when the class is unknown."""
    how = "the cluster default class" if defaulted else "StorageClass"
    builtin = builtin_class(name)
    sc = index.get("StorageClass", name)
    if builtin is not None:
        # AKS reconciles its built-in classes: a manifest that redefines one does not change it
        if builtin.reclaim_policy is None:
            return None
        return Reclaim(builtin.reclaim_policy, f"{how} `{name}` (AKS built-in)", sc, name)
    if sc is not None:
        # a class written in several variant files (one applied): Delete only if every one says so
        sc = next((alt for alt in index.alternatives(sc) if _policy(alt.body.get("reclaimPolicy"), "Delete") != "Delete"),
                  sc)
        return Reclaim(_policy(sc.body.get("reclaimPolicy"), "Delete"), f"{how} `{name}`", sc, name)
    return None


def claim_reclaim(index: Any, claim: Claim) -> Reclaim | None:
    """What deleting ``claim`` does to its data, as far as the project and AKS's facts tell."""
    pv = bound_volume(index, claim)
    if pv is not None:
        return _pv_reclaim(pv)
    if isinstance(claim.spec.get("volumeName"), str) and claim.spec.get("volumeName"):
        return None  # bound to a PV that is not in the project
    name = claim.class_name
    if name is None:
        project_default = default_class(index)
        if project_default is not None and builtin_class(project_default.name) is None:
            return class_reclaim(index, project_default.name, defaulted=True)
        return class_reclaim(index, AKS_DEFAULT_CLASS, defaulted=True)
    if name == "" or is_templated(name):
        return None  # static binding to a PV outside the project, or a name filled in later
    return class_reclaim(index, name)


def retain_classes(index: Any) -> list[str]:
    """Names of the project's StorageClasses that keep volumes (``reclaimPolicy: Retain``)."""
    return index.memo("retain-classes", lambda: sorted(
        sc.name for sc in index.of_kind("StorageClass")
        if sc.body.get("reclaimPolicy") == "Retain" and builtin_class(sc.name) is None))


# ---------------------------------------------------------------------------------------------
# Volumes: what kind of storage a pod volume is

CLAIM, EPHEMERAL, NODE_LOCAL = "claim", "ephemeral", "node-local"
PERSISTENT, CONTENT, UNKNOWN = "persistent", "content", "unknown"

_PERSISTENT_SOURCES = frozenset({
    "azureFile", "azureDisk", "nfs", "iscsi", "cephfs", "rbd", "glusterfs", "fc", "cinder", "gcePersistentDisk",
    "awsElasticBlockStore", "portworxVolume", "flocker", "quobyte", "storageos", "vsphereVolume",
    "photonPersistentDisk", "scaleIO", "flexVolume",
})
_CONTENT_SOURCES = frozenset({"configMap", "secret", "downwardAPI", "projected", "image", "gitRepo"})
_PERSISTENT_CSI = frozenset({
    "file.csi.azure.com", "blob.csi.azure.com", "disk.csi.azure.com", "nfs.csi.k8s.io", "smb.csi.k8s.io",
    "gcsfuse.csi.storage.gke.io", "filestore.csi.storage.gke.io", "efs.csi.aws.com", "s3.csi.aws.com",
    "fsx.csi.aws.com", "cephfs.csi.ceph.com", "rbd.csi.ceph.com", "lustre.csi.azure.com", "azurelustre.csi.azure.com",
})
_CONTENT_CSI = frozenset({"secrets-store.csi.k8s.io", "csi.cert-manager.io"})


def volume_storage(volume: YMap) -> str:
    """CLAIM (a PVC), EPHEMERAL (emptyDir, generic ephemeral volume: deleted with the pod),
    NODE_LOCAL (hostPath: stays on one node), PERSISTENT (network storage named inline),
    CONTENT (configMap, secret, projected …: read-only content), or UNKNOWN."""
    if "persistentVolumeClaim" in volume:
        return CLAIM
    if "emptyDir" in volume or "ephemeral" in volume:
        return EPHEMERAL
    if "hostPath" in volume:
        return NODE_LOCAL
    if _PERSISTENT_SOURCES & volume.keys():
        return PERSISTENT
    if _CONTENT_SOURCES & volume.keys():
        return CONTENT
    csi = volume.get("csi")
    if isinstance(csi, dict):
        driver = str(csi.get("driver") or "")
        if driver in _PERSISTENT_CSI:
            return PERSISTENT
        if driver in _CONTENT_CSI:
            return CONTENT
    return UNKNOWN


def describe_volume(volume: YMap) -> str:
    """``emptyDir``, ``emptyDir (medium: Memory)``, ``hostPath /data`` … for messages."""
    if "emptyDir" in volume:
        empty = volume.get("emptyDir")
        return "emptyDir (medium: Memory)" if isinstance(empty, dict) and empty.get("medium") == "Memory" else "emptyDir"
    if "ephemeral" in volume:
        return "generic ephemeral volume"
    if "hostPath" in volume:
        host = volume.get("hostPath")
        path = host.get("path") if isinstance(host, dict) else None
        return f"hostPath {path}" if isinstance(path, str) else "hostPath"
    return next((str(key) for key in volume if key != "name"), "volume")


def claim_name(volume: YMap) -> str | None:
    source = volume.get("persistentVolumeClaim")
    name = source.get("claimName") if isinstance(source, dict) else None
    return name if isinstance(name, str) and name else None


def claim_name_span(volume: YMap) -> Span:
    source = volume.get_map("persistentVolumeClaim")
    if source is not None and "claimName" in source:
        return source.value_span("claimName")
    return volume.kspans.get("persistentVolumeClaim") or volume.span


def pod_volumes(pod: PodSpec) -> dict[str, tuple[int, YMap]]:
    """Volumes of a pod template by name (the last one wins, as the API would reject duplicates)."""
    found: dict[str, tuple[int, YMap]] = {}
    for index, volume in pod.volumes:
        name = volume.get("name")
        if isinstance(name, str):
            found[name] = (index, volume)
    return found


# ---------------------------------------------------------------------------------------------
# Checkpoint evidence

_CHECKPOINT = re.compile(r"checkpoint|ckpt", re.IGNORECASE)
# a checkpoint *destination*: the name says checkpoint and where (dir, path, output …) …
_DESTINATION = re.compile(r"dir|path|folder|root|location|save|output|store|storage|prefix|dest")
# a checkpoint name may also name the file itself (``--checkpoint-file``, ``CKPT_FILE``)
_CHECKPOINT_DESTINATION = re.compile(_DESTINATION.pattern + "|file")
# flags whose destination is where a trainer writes its checkpoints, whatever the path is called:
# Hugging Face Trainer's ``--output_dir`` ("where the model predictions and checkpoints will be
# written"), fairseq's ``--save-dir`` (squashed spellings)
_TRAINER_OUTPUT_FLAGS = frozenset({"outputdir", "savedir"})
# … and not where a checkpoint is read from (resume, load, pretrained, init …)
_SOURCE = re.compile(r"load|resume|restore|pretrain|init|from|source|src|input|import|convert|warmstart")
_FLAG = re.compile(r"^(?P<dashes>-{0,2})(?P<name>[A-Za-z_][\w.-]*)(?:=(?P<value>.*))?$", re.DOTALL)
_VAR = re.compile(r"\$\((\w+)\)|\$\{(\w+)\}|\$(\w+)")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
_PLAIN_RELATIVE = re.compile(r"^[\w./-]+$")


def mentions_checkpoint(text: Any) -> bool:
    """Whether a name or path speaks of checkpoints: ``checkpoint`` or ``ckpt`` anywhere in it,
    any case (``checkpoints``, ``/ckpts``, ``model-ckpt``, ``CheckpointDir``)."""
    return isinstance(text, str) and _CHECKPOINT.search(text) is not None


@lru_cache(maxsize=4096)
def is_checkpoint_destination(name: str) -> bool:
    """An env var or flag name that says where checkpoints are written (``CHECKPOINT_DIR``,
    ``--ckpt-path``, ``--save-checkpoint-dir``, ``checkpointer.output_dir``), not read from
    (``--resume-from-checkpoint``, ``PRETRAINED_CKPT_PATH``)."""
    squashed = _NOT_ALNUM.sub("", name.lower())
    return bool(_CHECKPOINT.search(squashed) and _CHECKPOINT_DESTINATION.search(_CHECKPOINT.sub(" ", squashed))
                and not _SOURCE.search(squashed) and not squashed.endswith(_CHECKPOINTER_INPUTS))


# torchtune's checkpointer reads the model from ``checkpointer.checkpoint_dir`` (its
# ``checkpoint_files``) and writes to ``checkpointer.output_dir``, or the recipe's ``output_dir``:
# the first two are sources though their names say checkpoint and dir
_CHECKPOINTER_INPUTS = ("checkpointercheckpointdir", "checkpointercheckpointfiles")


@lru_cache(maxsize=4096)
def is_destination(name: str) -> bool:
    """An env var or flag name that says where something is written (``--output-dir``,
    ``SCRATCH_DIR``, ``--save-path``), not read from, and not a model location (``--model-dir``
    is where TensorFlow writes checkpoints and where servers read weights: ambiguous)."""
    squashed = _NOT_ALNUM.sub("", name.lower())
    return bool(_DESTINATION.search(squashed) and not _SOURCE.search(squashed) and "model" not in squashed)


def _names_checkpoints(name: str, value: str) -> bool:
    """Whether ``name=value`` says checkpoints go to ``value``: the name says so, or the name is a
    destination and the path itself speaks of checkpoints (``--scratch-dir=/scratch/checkpoints``)."""
    return is_checkpoint_destination(name) or (is_destination(name) and mentions_checkpoint(value))


class CheckpointPath(Struct, frozen=True):
    """A checkpoint destination a container names: the path and where it is written."""

    path: str  # absolute, normalised
    span: Span
    node: tuple[str | int, ...]
    source: str  # for messages: "env CHECKPOINT_DIR", "--checkpoint-dir", "checkpointer.output_dir"
    form: str = "{source}={path}"  # how the source and path read together

    def describe(self) -> str:
        """``env CHECKPOINT_DIR=/ckpt``, ``--checkpoint-dir /ckpt``, ``ckpt_dir=/ckpt``."""
        return self.form.format(source=self.source, path=self.path)


def literal_env(container: Container) -> dict[str, str]:
    """Env vars with literal values (``valueFrom`` ones are unknown), later entries winning."""
    values: dict[str, str] = {}
    for var in container.env:
        if var.from_ref or var.value is None:
            values.pop(var.name, None)
        else:
            values[var.name] = str(var.value)
    return values


def expand(text: str, env: dict[str, str]) -> str | None:
    """``$(VAR)`` (Kubernetes), ``${VAR}`` and ``$VAR`` (a shell) from literal env values; None
    when something stays unknown (a ``valueFrom`` var, a var the image sets, ``{{ … }}``)."""
    if "{{" in text:
        return None
    unknown = False

    def substitute(match: re.Match) -> str:
        nonlocal unknown
        name = match.group(1) or match.group(2) or match.group(3)
        if name in env:
            return env[name]
        unknown = True
        return ""

    result = _VAR.sub(substitute, text.replace("$$", "\0"))
    return None if unknown else result.replace("\0", "$")


def _absolute(value: str, env: dict[str, str], working_dir: str | None, unmounted: bool = False) -> str | None:
    """The path ``value`` names, normalised: absolute, or relative to ``working_dir``; with none,
    ``./relative`` when ``unmounted`` (a container without mounts: on its filesystem wherever the
    image's WORKDIR is), else None."""
    value = value.strip().strip("'\"")
    expanded = expand(value, env)
    if not expanded or "://" in expanded or expanded.startswith("~"):
        return None
    if not expanded.startswith("/"):
        if not _PLAIN_RELATIVE.match(expanded):
            return None
        if working_dir is None:
            relative = posixpath.normpath(expanded)
            if not unmounted or relative == "." or relative.startswith(".."):
                return None
            return "./" + relative
        expanded = posixpath.join(working_dir, expanded)
    return posixpath.normpath(expanded)


def _tokens(container: Container) -> Iterator[tuple[str, Span, tuple[str | int, ...]]]:
    """Words of ``command`` and ``args``, a shell script item split as a shell would."""
    for field_name in ("command", "args"):
        items = container.body.get_seq(field_name)
        for index, item in enumerate(items if items is not None else ()):
            if not isinstance(item, (str, int, float)):
                continue
            text = str(item)
            span, node = items.item_span(index), container.path + (field_name, index)
            if not any(ch.isspace() for ch in text):
                yield text, span, node
                continue
            for word in _shell_words(text):
                yield word, span, node


@lru_cache(maxsize=512)  # a pure function of the text; the replicas of a job mostly share their scripts
def _shell_words(text: str) -> tuple[str, ...]:
    """A shell script item split into words as a shell would."""
    try:  # a backslash-newline is a line continuation, removed before words are split
        lexer = shlex.shlex(text.replace("\\\n", " "), posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return tuple(lexer)
    except ValueError:
        return tuple(text.split())


def checkpoint_paths(container: Container) -> list[CheckpointPath]:
    """Checkpoint destinations the container names in env values and command-line flags
    (found once per container view: views are read-only; a fresh list each call)."""
    return list(once(container, "checkpoint_paths", lambda: tuple(_checkpoint_paths(container))))


def _checkpoint_paths(container: Container) -> list[CheckpointPath]:
    env = literal_env(container)
    working_dir = container.body.get("workingDir")
    working_dir = working_dir if isinstance(working_dir, str) and working_dir.startswith("/") else None
    unmounted = "workingDir" not in container.body and not container.volume_mounts
    found: list[CheckpointPath] = []
    for var in container.env:
        if var.from_ref or not isinstance(var.value, str):
            continue
        path = _absolute(var.value, env, working_dir, unmounted)
        if path is not None and _names_checkpoints(var.name, path):
            found.append(CheckpointPath(path, var.value_span, var.path + ("value",), f"env {var.name}"))
    words = list(_tokens(container))
    # ``tune run RECIPE … output_dir=/out``: torchtune's recipes write their checkpoints to the
    # override ``output_dir`` (key=value, no dashes)
    torchtune = len(words) > 1 and posixpath.basename(words[0][0]) == "tune" and words[1][0] == "run"
    for position, (word, span, node) in enumerate(words):
        match = _FLAG.match(word)
        if match is None or not (is_checkpoint_destination(match["name"]) or is_destination(match["name"])):
            continue
        squashed = _NOT_ALNUM.sub("", match["name"].lower())
        trainer_output = (bool(match["dashes"]) and squashed in _TRAINER_OUTPUT_FLAGS) or (
            torchtune and not match["dashes"] and squashed == "outputdir")
        value = match["value"]
        if value is None:
            if not match["dashes"] or position + 1 >= len(words):
                continue
            value, span, node = words[position + 1]
            if value.startswith("-"):
                continue
        path = _absolute(value, env, working_dir, unmounted)
        if path is not None and (trainer_output or _names_checkpoints(match["name"], path)):
            found.append(CheckpointPath(path, span, node, f"{match['dashes']}{match['name']}",
                                        "{source} {path}" if match["dashes"] else "{source}={path}"))
    return found


def mount_for(container: Container, path: str) -> tuple[int, YMap] | None:
    """The volume mount holding ``path``: the longest ``mountPath`` that is a path prefix."""
    best: tuple[int, YMap] | None = None
    best_len = -1
    for index, mount in container.volume_mounts:
        mount_path = mount.get("mountPath")
        if not isinstance(mount_path, str) or not mount_path.startswith("/"):
            continue
        root = posixpath.normpath(mount_path)
        if path == root or root == "/" or path.startswith(root + "/"):
            if len(root) > best_len:
                best, best_len = (index, mount), len(root)
    return best


def is_read_only(mount: YMap, volume: YMap | None) -> bool:
    if mount.get("readOnly") is True:
        return True
    source = volume.get("persistentVolumeClaim") if volume is not None else None
    return isinstance(source, dict) and source.get("readOnly") is True


class CheckpointMount(Struct, frozen=True):
    """A writable mount that holds checkpoints, and why we think so."""

    container: Container
    mount_index: int
    mount: YMap
    volume_index: int | None
    volume: YMap | None  # None when the mount names no volume of the pod
    reason: str  # "mount path /checkpoints", "volume name `ckpt`", "env CHECKPOINT_DIR=/out/ckpt" …

    @property
    def mount_path(self) -> str:
        return str(self.mount.get("mountPath"))

    @property
    def span(self) -> Span:
        return self.mount.value_span("mountPath")

    @property
    def node(self) -> tuple[str | int, ...]:
        return self.container.path + ("volumeMounts", self.mount_index, "mountPath")


def checkpoint_mounts(container: Container) -> list[CheckpointMount]:
    """The container's writable mounts that hold checkpoints: the mount path, the volume name or
    the claim name mentions checkpoints, or a checkpoint destination of :func:`checkpoint_paths`
    lies on it. Found once per container view (a fresh list each call)."""
    return list(once(container, "checkpoint_mounts", lambda: tuple(_checkpoint_mounts(container))))


def _checkpoint_mounts(container: Container) -> list[CheckpointMount]:
    volumes = pod_volumes(container.pod)
    by_mount: dict[int, CheckpointMount] = {}

    def add(mount_index: int, mount: YMap, reason: str) -> None:
        if mount_index in by_mount:
            return
        volume_index, volume = volumes.get(str(mount.get("name")), (None, None))
        if is_read_only(mount, volume):
            return
        by_mount[mount_index] = CheckpointMount(container, mount_index, mount, volume_index, volume, reason)

    for mount_index, mount in container.volume_mounts:
        name = mount.get("name")
        _, volume = volumes.get(str(name), (None, None))
        claim = claim_name(volume) if volume is not None else None
        if mentions_checkpoint(mount.get("mountPath")):
            add(mount_index, mount, f"mount path {mount.get('mountPath')}")
        elif mentions_checkpoint(name):
            add(mount_index, mount, f"volume name `{name}`")
        elif mentions_checkpoint(claim):
            add(mount_index, mount, f"claim `{claim}`")
    for evidence in checkpoint_paths(container):
        held = mount_for(container, evidence.path)
        if held is not None:
            add(held[0], held[1], evidence.describe())
    return sorted(by_mount.values(), key=lambda m: m.mount_index)


def pod_checkpoint_evidence(pod: PodSpec) -> str | None:
    """Why a pod writes checkpoints, for messages (the first app or sidecar container that says
    so: a checkpoint mount, else a checkpoint path), or None (STO005 and NAP003 ask for it)."""
    for container in pod.containers:
        if container.is_ephemeral or (container.is_init and not container.is_sidecar):
            continue
        mounts = checkpoint_mounts(container)
        if mounts:
            return f"{container.kind_label} `{container.name}`: {mounts[0].reason}"
        paths = checkpoint_paths(container)
        if paths:
            return f"{container.kind_label} `{container.name}`: {paths[0].describe()}"
    return None
