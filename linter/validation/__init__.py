"""Schema validation of Kubernetes objects (SCH002) and served API versions (SCH003).

- :mod:`.builtin`: the official Kubernetes OpenAPI schemas shipped, per minor version, by the
  ``kubernetes-validate`` package (its data files only), loaded lazily and cached;
- :mod:`.convert`: a CustomResourceDefinition's ``openAPIV3Schema`` as JSON Schema, with the
  ``x-kubernetes-*`` extensions and structural pruning semantics;
- :mod:`.crds`: the CRDs a run knows (the project's and the config's ``crd-paths``);
- :mod:`.checker`: a fast yes/no check compiled from a JSON Schema (valid objects stop there);
- :mod:`.validate`: validators per group/kind/version, and the errors of invalid objects, found
  with ``jsonschema`` and said in words (:mod:`.messages`);
- :mod:`.removed`: removed API versions (data), :mod:`.kustomize`: kustomize inputs.
"""
