"""An object that the project's own ValidatingAdmissionPolicy would deny, warn about or audit.

## What it does
Evaluates the project's `ValidatingAdmissionPolicy` objects (admissionregistration.k8s.io/v1),
through their `ValidatingAdmissionPolicyBinding`s, against every object of the project, as the
API server does when the object is applied (a CREATE): the policy's `matchConstraints` and the
binding's `matchResources` (resource rules, excluded rules, `namespaceSelector` over the project's
Namespaces, `objectSelector`), `matchConditions`, `variables`, then each CEL validation with
`object`, `params`, `namespaceObject` and `request`. Each validation that fails is reported at the
object with the policy's `message` (or `messageExpression`) and the policy's file and line; the
binding's `validationActions` give the severity: `Deny` an error, `Warn` a warning, `Audit` info.

Kyverno's `ValidatingPolicy` (policies.kyverno.io/v1, the same CEL `validations`,
`matchConstraints`, `matchConditions` and `variables`, in force by itself with the
`validationActions` of its own spec) is evaluated the same way, unless its `evaluation` turns
admission off or is not on Kubernetes objects; an expression that calls one of Kyverno's own
libraries (`resource.Get`, `http.Get` …), which the engine lacks, is not checked and said so once,
at the policy.

A binding whose policy is not in the project is reported at the binding (info): it cannot be
judged. A policy whose parameters (`paramRef`) are not in the project denies as the API server
does (`parameterNotFoundAction: Deny`), and says so.

## Why is this bad?
The article asks for "automation for policy validation" in the pipeline, and notes that setting
GPU requests and limits "helps policy validation". A repository that ships its admission policies
beside its workloads learns that a Job breaks one only when `kubectl apply` is refused (or, with
`Warn`/`Audit`, never notices): this rule tells at review time, with the policy's own words.

## Example
```yaml
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: gpu-limits
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["batch"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["jobs"]
  validations:
  - expression: >-
      object.spec.template.spec.containers.all(c,
        !has(c.resources.requests) || !('nvidia.com/gpu' in c.resources.requests) ||
        (has(c.resources.limits) && 'nvidia.com/gpu' in c.resources.limits))
    message: GPU containers must set nvidia.com/gpu in limits
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: gpu-limits
spec:
  policyName: gpu-limits
  validationActions: [Deny]
---
apiVersion: batch/v1
kind: Job               # denied: the GPU is requested, not limited
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests:
            nvidia.com/gpu: 1
```

Use instead:
```yaml
        resources:
          requests:
            nvidia.com/gpu: 1
          limits:
            nvidia.com/gpu: 1
```

## Known problems
- The object is judged as it is written, on CREATE: `oldObject` is null, mutating webhooks and
  defaults the API server would add first are not applied, and the `authorizer` is not available
  (a validation that uses it fails to evaluate, reported as the API server would with
  `failurePolicy: Fail`).
- A namespaceSelector that reads labels of a namespace the project does not define (or an object
  applied with `-n`, which names none) cannot be decided: the object is not judged. The
  `kubernetes.io/metadata.name` label every namespace has is known.
- A resource's plural name comes from the project's CRD, else from Kubernetes' default
  pluralisation of the kind.
- Each expression is bounded in cost as the API server bounds it (see SCH002's CEL rules); one
  refused for cost is not reported.
- An expression the CEL engine cannot compile (Kubernetes' optional field syntax
  `object.?spec.orValue(…)` and `[?key]`, which common-expression-language lacks) is one info
  finding at the policy: a validation is then skipped, a variable or match condition leaves the
  policy's objects unjudged; none is ever a denial.

## References
- Validating Admission Policy: https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/
- CEL in Kubernetes: https://kubernetes.io/docs/reference/using-api/cel/
"""

from mlops_lint.model.memo import once
from mlops_lint.model.vap import (KYVERNO_LIBRARIES, Namespaces, Subject, evaluate_policy, matches, plain, plural,
                              select_params, severity_of, uncompiled)
from mlops_lint.rule import PROJECT, Finding, rule
from mlops_lint.validation import kustomize

BINDING = "ValidatingAdmissionPolicyBinding"
POLICY = "ValidatingAdmissionPolicy"
KYVERNO = "ValidatingPolicy"  # Kyverno's CEL policy (policies.kyverno.io): its own binding


def _kyverno(policy):
    """Whether ``policy`` is a Kyverno ValidatingPolicy that admission evaluates on Kubernetes objects."""
    if policy.kind != KYVERNO or not str(policy.api_version).startswith("policies.kyverno.io/"):
        return False
    spec = policy.body.get("spec") or {}
    evaluation = spec.get("evaluation") if isinstance(spec, dict) else None
    if isinstance(evaluation, dict):
        admission = evaluation.get("admission")
        if isinstance(admission, dict) and admission.get("enabled") is False:
            return False  # background scans only
        if evaluation.get("mode") not in (None, "Kubernetes"):
            return False  # JSON payloads, not Kubernetes objects
    return True


def _libraries(policy):
    """The libraries the policy's expressions may call that the engine lacks (Kyverno's)."""
    return KYVERNO_LIBRARIES if policy is not None and policy.kind == KYVERNO else None


def _label(policy, name):
    if policy.kind == KYVERNO:
        return f"Kyverno ValidatingPolicy `{policy.name}` ({_where(policy)})"
    return f"ValidatingAdmissionPolicy `{policy.name}` ({_where(policy)}, bound by `{name}`)"


def _in_force(index):
    """The bindings of the project by name, each a list of its alternatives (binding, policy or
    None): a binding or policy defined in several files is one object with alternative
    definitions, and an object is judged only by what every alternative says. Also the
    namespaces' labels and the parameter kinds the policies take."""
    def build():
        policies = {}
        for policy in index.of_kind(POLICY):
            policies.setdefault(policy.name, []).append(policy)
        groups = {}
        for binding in index.of_kind(BINDING):
            spec = binding.body.get("spec") or {}
            name = spec.get("policyName") if isinstance(spec, dict) else None
            chosen = policies.get(name, [None]) if isinstance(name, str) else [None]
            alternatives = groups.setdefault(binding.name, [])
            for policy in chosen:
                if len(alternatives) < _MAX_ALTERNATIVES:
                    alternatives.append((binding, policy))
        for policy in index.of_kind(KYVERNO):  # in force by itself: its spec holds validationActions
            if _kyverno(policy):
                alternatives = groups.setdefault(f"{KYVERNO}/{policy.name}", [])  # `/`: never a binding's name
                if len(alternatives) < _MAX_ALTERNATIVES:
                    alternatives.append((policy, policy))
        labels = {}
        for namespace in index.of_kind("Namespace"):
            found = namespace.labels
            labels[namespace.name] = {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
        param_kinds = set()
        for alternatives in groups.values():
            for _, policy in alternatives:
                kind = (policy.body.get("spec") or {}).get("paramKind") if policy is not None else None
                if isinstance(kind, dict):
                    param_kinds.add((str(kind.get("apiVersion", "")), str(kind.get("kind", ""))))
        return dict(sorted(groups.items())), Namespaces(labels), param_kinds
    return index.memo("ADM001-in-force", build)


_MAX_ALTERNATIVES = 16


def _common(verdicts):
    """The messages every alternative gives (in the first's order), or () when one gives none."""
    if not verdicts or any(not v for v in verdicts):
        return ()
    first, *rest = verdicts
    return tuple(m for m in dict.fromkeys(first) if all(m in other for other in rest))


def _resource(obj, index):
    """The resource name of ``obj``'s kind: its CRD's plural when the project has the CRD, else
    Kubernetes' default pluralisation (the project's CRDs read once per run, not per object)."""
    def build():
        plurals = {}
        for crd in index.of_kind("CustomResourceDefinition"):
            spec = crd.body.get("spec") or {}
            names = (spec.get("names") or {}) if isinstance(spec, dict) else {}
            if isinstance(names, dict) and isinstance(names.get("plural"), str):
                plurals.setdefault((spec.get("group"), names.get("kind")), names["plural"])
        return plurals
    return index.memo("ADM001-plurals", build).get((obj.group, obj.kind)) or plural(obj.kind)


def _spec(obj):
    """An object's ``spec`` as plain data, converted once per object and run (a policy's and a
    binding's are read for every object they may judge)."""
    return once(obj, "ADM001-spec", lambda: plain(obj.body.get("spec") or {}))


def facts(obj, ctx):
    """Per object: ("param", subject) when a policy takes its kind as parameters; ("judged", stub,
    binding name, severity, messages) for each binding in force whose policy needs no parameters;
    ("pending", stub, subject, resource, binding name) for those that do (judged where every
    parameter object is known)."""
    index = ctx.index
    if not (index.has_kind(BINDING) or index.has_kind(KYVERNO)) or kustomize.is_input(obj.path):
        return
    groups, namespaces, param_kinds = _in_force(index)
    subject = Subject(obj.api_version, obj.kind, obj.name, obj.namespace, plain(obj.body))
    if (obj.api_version, obj.kind) in param_kinds:
        yield ("param", subject)
    resource = _resource(obj, index)
    for name, alternatives in groups.items():
        verdicts = []
        pending = False
        severity = None
        for binding, policy in alternatives:
            if policy is None:
                verdicts = []
                break
            policy_spec = _spec(policy)
            binding_spec = _spec(binding)
            severity = severity_of(binding_spec.get("validationActions"))
            if severity is None or matches(policy_spec, binding_spec, subject, resource, namespaces) is not True:
                verdicts = []
                break
            if isinstance(policy_spec.get("paramKind"), dict) and isinstance(binding_spec.get("paramRef"), dict):
                pending = True
                break
            verdicts.append(evaluate_policy(policy_spec, subject, resource, None, _namespace_object(index, obj),
                                            _libraries(policy)) or [])
        if pending:
            yield ("pending", obj.stub(), subject, resource, name)
            continue
        messages = _common(verdicts)
        if messages:
            yield ("judged", obj.stub(), name, severity, messages)


def _namespace_object(index, obj):
    if not obj.namespace:
        return None
    found = index.get("Namespace", obj.namespace)
    return plain(found.body) if found is not None else {"metadata": {"name": obj.namespace}}


def _where(policy):
    return f"{policy.path}:{policy.span.line}"


@rule(code="ADM001", name="admission-denied", severity="error", scope=PROJECT, requires=(BINDING, KYVERNO),
      collect=facts, tags=("admission", "policy"))
def check(found, ctx):
    index = ctx.index
    groups, _, _ = _in_force(index)
    for name, alternatives in groups.items():
        binding, policy = alternatives[0]
        if policy is None:
            spec = binding.body.get("spec") or {}
            wanted = spec.get("policyName") if isinstance(spec, dict) else None
            yield Finding(binding.body.key_span("spec") if "spec" in binding.body else binding.span,
                          f"ValidatingAdmissionPolicyBinding `{name}` puts ValidatingAdmissionPolicy `{wanted}` in "
                          f"force, which the project does not define: its objects are not judged (add the policy's "
                          f"manifest to the project to have them checked)",
                          obj=binding, severity="info")
    yield from _not_compiled(groups)
    params = [fact[1] for fact in found if fact[0] == "param"]
    seen = set()
    for fact in found:
        if fact[0] == "judged":
            _, stub, name, severity, messages = fact
        elif fact[0] == "pending":
            _, stub, subject, resource, name = fact
            severity, messages = _with_params(groups.get(name, []), subject, resource, params, index)
        else:
            continue
        if not messages or (stub.key, name) in seen:
            continue
        seen.add((stub.key, name))
        binding, policy = groups[name][0]
        verb = {"error": "denies", "warning": "warns about", "info": "audits"}[severity]
        for message in messages:
            yield Finding(stub.span,
                          f"{_label(policy, name)} {verb} "
                          f"{stub.kind} `{(stub.namespace + '/') if stub.namespace else ''}{stub.name}`: {message}",
                          obj=stub, severity=severity)


def _not_compiled(groups):
    """One info finding per policy in force with expressions the engine cannot compile, at the policy."""
    told = set()
    for alternatives in groups.values():
        for _, policy in alternatives:
            if policy is None or (policy.path, policy.span.line) in told:
                continue
            told.add((policy.path, policy.span.line))
            found = uncompiled(_spec(policy), _libraries(policy))
            if not found:
                continue
            where, text, why = found[0]
            short = " ".join(text.split())
            short = short if len(short) <= 100 else short[:99] + "…"
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            whole = any(w.startswith(("variables", "matchConditions")) for w, _, _ in found)
            effect = ("its objects are not judged" if whole else
                      "the objects it binds are judged without those expressions")
            kind = "Kyverno ValidatingPolicy" if policy.kind == KYVERNO else POLICY
            cause = why if why.startswith("it calls") else f"the CEL engine cannot compile it ({why})"
            yield Finding(policy.span,
                          f"{kind} `{policy.name}`: {where} `{short}` is not checked: {cause}{more}; {effect}",
                          obj=policy, severity="info")


def _with_params(alternatives, subject, resource, params, index):
    """The severity and the messages every alternative of a binding with parameters gives."""
    verdicts = []
    severity = None
    for binding, policy in alternatives:
        if policy is None:
            return None, ()
        policy_spec = _spec(policy)
        binding_spec = _spec(binding)
        severity = severity_of(binding_spec.get("validationActions"))
        chosen, missing = select_params(binding_spec, policy_spec, subject, params)
        if chosen is None and missing is None:
            return None, ()  # the parameters' namespace is not known: not judged
        if missing:
            verdicts.append([f"its parameters are missing ({missing}) and the binding's parameterNotFoundAction is "
                             "not Allow"])
            continue
        namespace = index.get("Namespace", subject.namespace) if subject.namespace else None
        namespace_object = (plain(namespace.body) if namespace is not None else
                            {"metadata": {"name": subject.namespace}} if subject.namespace else None)
        verdicts.append(evaluate_policy(policy_spec, subject, resource, chosen, namespace_object, _libraries(policy)) or [])
    return severity, _common(verdicts)
