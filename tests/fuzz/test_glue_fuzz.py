"""The glue operators under a seeded stream of random attributes, element types, shapes and constant
values (zeros, negatives, int64 extremes, NaN, inf, booleans where numbers belong): `infer` and `run`
raise only IRGridErrors (not even the numpy errors the graph pass would turn into ShapeErrors), and
where `infer` knew every value, the shapes it gave are the shapes `run` produced. The stream runs in a child process limited to 4 GiB of address
space: an output that `irgrid.memory` lets through (it allows up to the machine's memory) but the
child cannot hold ends as MemoryError, counted apart; anything unbounded fails the test.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent("""
    import json, random, resource
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import numpy as np
    from irgrid.errors import IRGridError
    from irgrid.ir import element_types
    from irgrid.registry import RunContext, TensorInfo, all_specs

    MODULES = {"arithmetic", "comparison", "elementwise", "expand", "matmul", "range", "reduction", "select",
               "slicing", "split"}
    specs = [s for s in all_specs() if s.infer is not None and s.infer.__module__.rsplit(".", 1)[-1] in MODULES]
    TYPES = ["f32", "f16", "f64", "i32", "i64", "u8", "boolean"]
    INTS = [0, 1, -1, 2, 3, -2, 7, -100, 2**31 - 1, 2**63 - 1, -2**63]
    FLOATS = [0.0, -0.0, 0.5, -1.5, 3.0, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]
    rng = random.Random("glue")
    report = {"ok": 0, "irgrid_errors": 0, "memory_errors": 0, "bad": []}

    def array(element_type, shape):
        dtype = element_types.numpy_dtype(element_type)
        n = int(np.prod(shape))
        if dtype.kind == "b":
            return np.array([rng.random() < 0.5 for _ in range(n)], bool).reshape(shape)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return np.array([min(max(rng.choice(INTS), info.min), info.max) for _ in range(n)], dtype).reshape(shape)
        with np.errstate(all="ignore"):
            return np.array([rng.choice(FLOATS + INTS[:8]) for _ in range(n)]).astype(dtype).reshape(shape)

    def attr_text(attr):
        if attr.choices:
            return rng.choice(list(attr.choices))
        return {"bool": lambda: rng.choice(["true", "false"]), "int": lambda: str(rng.choice(INTS[:8])),
                "float": lambda: str(rng.choice([0.0, 1.0, -1.5, 2.5, 1e30])),
                "ints": lambda: ",".join(str(rng.choice([0, 1])) for _ in range(rng.randint(0, 4))),
                "element_type": lambda: rng.choice(TYPES)}[attr.kind]()

    def attempt(stage, where, call):
        # call()'s result, or None after counting an IRGridError or MemoryError or recording a bad one
        try:
            return call()
        except IRGridError:
            report["irgrid_errors"] += 1
        except MemoryError:
            report["memory_errors"] += 1
        except BaseException as exc:
            report["bad"].append(f"{stage} {where}: {type(exc).__name__}: {exc}"[:400])
        return None

    for trial in range(TRIALS):
        spec = rng.choice(specs)
        try:
            attrs = spec.parse_attrs({a.name: attr_text(a) for a in spec.attrs if rng.random() < 0.9})
        except IRGridError:
            continue
        arrays, infos = [], []
        for index in range(rng.randint(*spec.inputs)):
            shape = tuple(rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.choice([0, 1, 1, 2, 3])))
            element_type = rng.choice(TYPES if index == 0 or rng.random() < 0.3 else ["i64", "i32", "boolean", "f32"])
            arrays.append(array(element_type, shape))
            infos.append(TensorInfo(shape, element_type, arrays[-1] if rng.random() < 0.8 else None))
        where = f"{spec.type}-{spec.versions[0]} {[(i.shape, i.element_type) for i in infos]} {attrs}"
        outs = attempt("infer", where, lambda: spec.infer(attrs, infos))
        results = None if outs is None else attempt("run", where, lambda: spec.run(attrs, arrays, RunContext(1)))
        if results is None:
            continue
        report["ok"] += 1
        if all(i.value is not None for i in infos):
            for out, result in zip(outs, results):
                if out.shape is not None and (len(out.shape) != result.ndim or any(
                        d is not None and d != r for d, r in zip(out.shape, result.shape))):
                    report["bad"].append(f"shape {where}: inferred {out.shape}, ran {result.shape}")
    print(json.dumps(report))
""")


def test_glue_operators_under_random_values():
    proc = subprocess.run([sys.executable, "-c", _CHILD.replace("TRIALS", "12000")], capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["bad"] == []
    assert report["ok"] > 2000 and report["irgrid_errors"] > 2000
