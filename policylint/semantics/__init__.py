"""What the references mean: the stage between the objects and the rules.

`resolution.py` decides what each policy's target references name (`Resolution`), with
`grants.py` (ReferenceGrants), `producers.py`, `parameters.py`, `listeners.py` (listener port and
protocol facts) and `namespace_admission.py` (namespace selectors against Namespaces that may not
be in the input); `topology/` resolves the traffic hierarchy GatewayClass › Gateway › listener ›
Route › rule › backend (`Topology`); `components.py` groups objects into the independent parts
a scoped run reads; `effective/` folds policies over every context of the hierarchy
(`Simulation`). Nothing here reads files or formats output.
"""
