"""What vulture reports as unused in the package but is used where vulture cannot see it
(tests/hygiene/test_dead_code.py). Each name is listed with who uses it; anything else vulture finds is
dead code, to be deleted rather than listed here."""

# ruff: noqa
# mypy: ignore-errors

# click registers each command function with its decorator.
check_command  # policylint/cli.py
server_command
config_command
rules_command
rule_command
profiles_command
diff_command
explain_command
graph_command

# pydantic reads a model's `model_config` and calls its field validators.
model_config  # policylint/config/model.py, policylint/k8s/validation.py
_._rfc3339  # policylint/k8s/validation.py

# pickle's pickler and unpickler call them for every object (policylint/rules/workers.py `_Sender`, `_Receiver`).
_.persistent_id
_.persistent_load

# PyYAML's composer calls the resolver's methods (policylint/input/resolver.py).
descend_resolver
ascend_resolver

# The CEL evaluator dispatches on the node kind: `getattr(self, "c_" + kind)` (policylint/k8s/cel/evaluator.py).
_.c_lit
_.c_ident
_.c_select
_.c_has
_.c_index
_.c_list
_.c_optlist
_.c_optselect
_.c_optindex
_.c_map
_.c_optmaplit
_.c_cond
_.c_and
_.c_or
_.c_not
_.c_neg
_.c_binop
_.c_comp
_.c_comp2
_.c_call

# Options read by google-re2 (policylint/k8s/cel/stdlib.py, policylint/k8s/strformats.py) and
# attributes read by zipfile when it writes an entry (policylint/k8s/schemas.py).
_.max_mem
_.log_errors
_.never_capture
_.compress_type
_.external_attr

# The annotations of a generated `__init__`, read by `inspect` and typing tools (policylint/values.py).
_.__annotations__

# The levels of the hierarchy (policylint/vocabulary.py `Level`): members of an enumeration are
# its values, each a level, whether a module names it or not.
GATEWAYCLASS
LISTENERSET
RULE
BACKEND
PORT

# A profile's data, read from its YAML entry and kept with the others (policylint/profiles/registry.py).
delegation_docs
# A field of a component's reference, set where it is built (policylint/semantics/components.py).
explicit_namespace

# The interpreter reads a function's keyword-only defaults (policylint/values.py, a compiled `__init__`).
_.__kwdefaults__

# The interpreter calls `sys.unraisablehook` for an exception it cannot pass on (policylint/entry.py).
_.unraisablehook
