"""CEL as the Kubernetes API server runs it on CRD validation rules (`x-kubernetes-validations`).

The API server compiles each rule of a schema node with cel-go and the Kubernetes CEL libraries,
binds `self` to the node's value (converted by the node's schema: k8s.io/apiserver
pkg/cel/common/valuesunstructured.go) and rejects the object when a rule evaluates to false or
fails. This package does the same offline, with a CEL implementation of its own (why not a
library, and what differs from cel-go: docs/cel.md). It owns:

- `values`: the value model (`UInt`, `Duration`, `Timestamp`, `Optional`, `Type`, ...), the
  errors, equality and ordering across types, and the activation an evaluation runs in;
- `parser`: the lexer and the parser of the whole CEL grammar, to a tuple syntax tree (`Node`);
- `evaluator`: the syntax tree compiled to Python closures (`_Compiler`), with the macros;
  `operators` its arithmetic, `comprehensions` the one-variable macros' loops, `uniqueness` its
  shortcut for pairwise-uniqueness rules and `twovar` cel-go's two-variable comprehensions;
- the functions, by library: `stdlib` (the standard definitions and conversions), `times`
  (timestamps, and the fields of durations), `strings` and `formatting` (cel-go's strings
  extension, `format` and `strings.quote` among it), `optionals` (cel-go's optional values and
  their syntax), `kubernetes` (k8s.io/apiserver pkg/cel/library: lists, regex, ip, url, format),
  gathered by name in `functions.FUNCTIONS`;
- `program`: a rule compiled once (`compile_rule`, `Compiled`), its evaluation under a cost limit
  (`evaluate_within`), the API server's message for a failed rule (`message_of`), the memo keys
  that let equal inputs share a verdict (`result_key`, `shape`), from what a rule reads of `self`
  (`projection`) and, for a rule that only compares strings for equality, their pattern
  (`patterns`);
- `convert`: YAML values as the API server hands them to CEL under their schema (`to_cel`) and
  the escaping of property names (`escape`);
- `cost`: the runtime cost units the evaluator charges and the API server's limits (PL704);
- `estimate`: the API server's static cost estimate of a CRD's rules before it accepts the CRD
  (PL708), over the schema's declarations (`decls`).

There is no static type checker: a rule cel-go would refuse at CRD creation fails here only when
the ill-typed branch is evaluated. tests/rules/test_cel_conformance.py runs the CEL specification's
conformance tests against the package (docs/cel.md: the pass rate and each difference). Callers
import from this package; the names below are its public interface.
"""

from __future__ import annotations

from policylint.k8s.cel.convert import MISSING, escape, to_cel
from policylint.k8s.cel.functions import FUNCTIONS
from policylint.k8s.cel.parser import Node, parse
from policylint.k8s.cel.program import (
    Compiled,
    compile_rule,
    evaluate,
    evaluate_within,
    message_of,
    node_rules,
    result_key,
    rules_key,
    shape,
)
from policylint.k8s.cel.stdlib import parse_duration
from policylint.k8s.cel.values import (
    BAD,
    MAX_DEPTH,
    MAX_LENGTH,
    Activation,
    BadValue,
    CompileError,
    CostExceeded,
    Duration,
    Eval,
    EvalError,
    NamedFormat,
    Optional,
    Timestamp,
    TooLarge,
    Type,
    UInt,
    equals,
    type_name,
)

__all__ = [
    "BAD",
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MISSING",
    "Activation",
    "BadValue",
    "CompileError",
    "Compiled",
    "CostExceeded",
    "Duration",
    "Eval",
    "EvalError",
    "NamedFormat",
    "Node",
    "Optional",
    "Timestamp",
    "TooLarge",
    "Type",
    "UInt",
    "compile_rule",
    "equals",
    "escape",
    "evaluate",
    "evaluate_within",
    "message_of",
    "node_rules",
    "parse",
    "parse_duration",
    "result_key",
    "rules_key",
    "shape",
    "to_cel",
    "type_name",
]
