"""Compare CEL implementations on the bundled CRDs' validation rules (PL704's choice).

    python benchmarks/cel_bench.py [--repeat 5] [--json]

Offline. Measures each implementation that imports here: policylint's own
(policylint.k8s.cel), cel-python (`celpy`, pure Python), common-expression-language (`cel`,
Rust bindings) and cel-expr-python (`cel_expr_python`, Google's C++ runtime). For each:

- how many of the bundled rules (distinct texts) it compiles, and which it does not;
- how many of a set of cases it evaluates correctly: the language features and the Kubernetes
  library functions the bundled rules use, each expected value worked out by hand (the same
  kinds of cases as tests/rules/test_cel.py); a library without a function the rules need gets it
  as a custom function where it allows one (isIP, lowerAscii, ...), else the case counts wrong;
- speed: compile every distinct rule once, then evaluate a simple rule (a filter's type and its
  configuration) and a quadratic one (listener uniqueness over 16 and 64 listeners).

Only policylint's evaluator is a dependency; the others are measured when installed
(`pip install cel-python common-expression-language cel-expr-python`).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from policylint.k8s.schemas import bundled_entries

SIMPLE = "!(has(self.requestHeaderModifier) && self.type != 'RequestHeaderModifier')"
SIMPLE_VALUE = {"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "a", "value": "b"}]}}
QUADRATIC = (
    "self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && (has(l1.hostname) &&"
    " has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && !has(l2.hostname))))"
)

# (rule, self, expected: True / False / "error")
CASES: list[tuple[str, Any, Any]] = [
    ("has(self.a)", {"a": 1}, True),
    ("has(self.b)", {"a": 1}, False),
    ("self.b == 1", {"a": 1}, "error"),
    ("self.b == 1 || true", {"a": 1}, True),
    ("self.b == 1 && false", {"a": 1}, False),
    ("self in [80, 443]", 443, True),
    ("self == 1", "1", False),
    ("self.all(k, k.size() < 3)", {"ab": 1, "abc": 2}, False),
    ("self.all(l1, self.exists_one(l2, l1.name == l2.name))", [{"name": "a"}, {"name": "a"}], False),
    ("self.filter(f, f.type == 'CORS').size() <= 1", [{"type": "CORS"}], True),
    ("[has(self.a), has(self.b)].filter(x, x).size() == 1", {"a": 1}, True),
    ("(has(self.h) ? 1 : 0) + (has(self.p) ? 1 : 0) == 1", {"h": 1}, True),
    ('{"Auto":0,"1.2":3}[self] <= 3', "1.2", True),
    ("duration(self) > duration('0s')", "10ms", True),
    ("duration(self) < duration('1h')", "1h30m", False),
    ('self.matches(r"""^(?i)\\.?[a-z_][a-z_0-9]*$""")', "Foo", True),
    ("size(self) == 3", "héé", True),
    ("!('*' in self && self.size() > 1)", ["*", "a"], False),
    ("-7 / 2 == -3", 0, True),
    ("self.lowerAscii() != 'host'", "Host", False),
    ("self.method.upperAscii() in ['POST','PUT']", {"method": "post"}, True),
    ('self.all(key, key.split("/")[0].size() < 253)', {"example.com/a": "x"}, True),
    ("self.startsWith('*.') && self.substring(2) == 'a.b'", "*.a.b", True),
    ("self.all(h, !isIP(h))", ["192.0.2.1"], False),
    ("self.all(h, !isIP(h))", ["example.com", "::ffff:192.0.2.1"], True),
    ("size(self) == 0 || format.dns1123Label().validate(self) == null", "abc", False),  # optional.none() != null
    ("self.__namespace__ == 'x'", {"__namespace__": "x"}, True),
]


def bundled_rules() -> list[str]:
    raw = {"kinds": bundled_entries()}
    found: dict[str, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.get("x-kubernetes-validations") or ():
                found.setdefault(v["rule"], None)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for entry in raw["kinds"]:
        walk(entry["schema"])
    return list(found)


def _is_ip(s: str) -> bool:
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        return False
    return not (isinstance(addr, ipaddress.IPv6Address) and (addr.scope_id or addr.ipv4_mapped))


class Impl:
    name = ""

    def compile(self, rule: str) -> Any:
        raise NotImplementedError

    def run(self, program: Any, value: Any) -> Any:
        raise NotImplementedError


class Policylint(Impl):
    name = "policylint (policylint.k8s.cel)"

    def __init__(self) -> None:
        from policylint.k8s import cel

        self.cel = cel

    def compile(self, rule: str) -> Any:
        compiled = self.cel.compile_rule.__wrapped__(rule)  # uncached: measure compilation
        if compiled.program is None and compiled.skip != "transition":
            raise ValueError(compiled.error)
        return compiled

    def run(self, program: Any, value: Any) -> Any:
        passed, error = self.cel.evaluate(program, value)
        return "error" if error is not None else passed


class CelPython(Impl):
    name = "cel-python (celpy)"

    def __init__(self) -> None:
        import celpy
        from celpy import celtypes

        self.celpy, self.celtypes = celpy, celtypes
        self.env = celpy.Environment()

        def unary(fn: Callable[[str], Any]) -> Callable[[Any], Any]:
            return lambda s: celtypes.BoolType(fn(str(s))) if isinstance(fn(str(s)), bool) else celtypes.StringType(fn(str(s)))

        self.functions = {
            "isIP": lambda s: celtypes.BoolType(_is_ip(str(s))),
            "lowerAscii": lambda s: celtypes.StringType(str(s).lower()),
            "upperAscii": lambda s: celtypes.StringType(str(s).upper()),
            "split": lambda s, sep: celtypes.ListType([celtypes.StringType(p) for p in str(s).split(str(sep))]),
            "substring": lambda s, i, j=None: celtypes.StringType(str(s)[int(i) : None if j is None else int(j)]),
        }

    def compile(self, rule: str) -> Any:
        return self.env.program(self.env.compile(rule), functions=self.functions)

    def run(self, program: Any, value: Any) -> Any:
        try:
            result = program.evaluate({"self": self.celpy.json_to_cel(value)})
        except Exception:
            return "error"
        if isinstance(result, Exception):
            return "error"
        return bool(result) if isinstance(result, self.celtypes.BoolType) else result


class CommonExpressionLanguage(Impl):
    name = "common-expression-language (cel, Rust)"

    def __init__(self) -> None:
        import cel

        self.cel = cel

    def compile(self, rule: str) -> Any:
        return self.cel.compile(rule)

    def run(self, program: Any, value: Any) -> Any:
        context = self.cel.Context({"self": value})
        context.add_function("isIP", _is_ip)
        try:
            result = program.execute(context)
        except Exception:
            return "error"
        return result


class CelExprPython(Impl):
    name = "cel-expr-python (Google's C++ runtime)"

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_strings

        self.cel = cel
        self.env = cel.NewEnv(variables={"self": cel.Type.DYN}, extensions=[ext_strings.ExtStrings()])

    def compile(self, rule: str) -> Any:
        return self.env.compile(rule)

    def run(self, program: Any, value: Any) -> Any:
        try:
            result = program.eval(data={"self": value})
            plain = result.plain_value()
        except Exception:
            return "error"
        if result.type() == self.cel.Type.ERROR:
            return "error"
        return plain


def implementations() -> list[Impl]:
    out: list[Impl] = [Policylint()]
    for factory in (CelPython, CommonExpressionLanguage, CelExprPython):
        try:
            out.append(factory())
        except ImportError:
            pass
    return out


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(impl: Impl, rules: list[str], repeat: int) -> dict[str, Any]:
    failed: list[str] = []
    start = time.perf_counter()
    for rule in rules:
        try:
            impl.compile(rule)
        except Exception as exc:
            failed.append(f"{rule[:70]}: {str(exc).splitlines()[0][:80]}")
    compile_all = time.perf_counter() - start
    correct, wrong = 0, []
    for rule, value, expected in CASES:
        try:
            got = impl.run(impl.compile(rule), value)
        except Exception:
            got = "does not compile"
        if got == expected and type(got) is type(expected):
            correct += 1
        else:
            wrong.append(f"{rule} on {value!r}: {got!r}, expected {expected!r}")
    simple = impl.compile(SIMPLE)
    quadratic = impl.compile(QUADRATIC)
    listeners = {
        n: [{"name": f"l{i}", "port": 80 + i, "protocol": "HTTP", "hostname": f"h{i}.example.com"} for i in range(n)]
        for n in (16, 64)
    }
    n_simple = 2000
    return {
        "implementation": impl.name,
        "compiled": len(rules) - len(failed),
        "rules": len(rules),
        "compile_failures": failed,
        "cases_correct": correct,
        "cases": len(CASES),
        "cases_wrong": wrong,
        "compile_all_s": round(compile_all, 4),
        "simple_eval_us": round(
            best(lambda: [impl.run(simple, SIMPLE_VALUE) for _ in range(n_simple)], repeat) / n_simple * 1e6, 2
        ),
        "listeners16_ms": round(best(lambda: impl.run(quadratic, listeners[16]), repeat) * 1e3, 3),
        "listeners64_ms": round(best(lambda: impl.run(quadratic, listeners[64]), max(1, repeat // 2)) * 1e3, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rules = bundled_rules()
    results = [measure(impl, rules, args.repeat) for impl in implementations()]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]}; {len(rules)} distinct rules in the bundled CRDs; {len(CASES)} cases")
    for r in results:
        print(f"\n{r['implementation']}")
        print(f"  compiles {r['compiled']}/{r['rules']} rules ({r['compile_all_s']} s for all)")
        for failure in r["compile_failures"]:
            print(f"    - {failure}")
        print(f"  cases correct: {r['cases_correct']}/{r['cases']}")
        for w in r["cases_wrong"]:
            print(f"    - {w}")
        print(f"  simple rule: {r['simple_eval_us']} us per evaluation")
        print(f"  listener uniqueness: {r['listeners16_ms']} ms over 16 listeners, {r['listeners64_ms']} ms over 64")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
