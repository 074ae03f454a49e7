"""The Kubernetes stages: the objects and their index, then the admission stage over them.

The objects and their index are data: `objects.py` builds the objects (`K8sObject`, keyed by
group, kind, namespace and name), with `validation.py`, `fieldtypes.py` (what is malformed in
one), `names.py`, `selectors.py`, `hostnames.py`, `timestamps.py`, `urls.py`, `external.py`
(`--external`) and `overlay.py` (`--context`); `index.py` is the `ProjectIndex`, every object by key
and kind with the lookups over them and each file's parse-cache key, and `cluster.py` what the
cluster runs. The index validates nothing.

The admission stage is what the API server would refuse in each object: `admissions.py` holds it
(`Admissions`: the catalogue of schemas that decide, and each object's verdict, worked out when
first asked for, and kept between runs when it refuses nothing), which the pipeline builds after the index when a rule or
a later stage reads it; `admission.py` works a verdict out (which schema decides, `admit`) from the
structural schema (`schemawalk.py`, `strformats.py`) and the CEL validation rules (`celrules.py`
over the evaluator in `cel/`); `verdicts.py` holds the verdict's types; `schemas.py` and
`deprecations.py` the bundled CRDs' schemas and deprecations.
"""
