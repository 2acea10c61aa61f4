"""Every public entry point under a seeded stream of mutated real IRs and inputs: read, check, compile,
call, and the CLI verbs. Only IRGridErrors (or success), exactly one stderr line for a CLI failure, no
crash, no hang, and memory within a bound: the stream runs in a child process limited to 4 GiB of
address space and 240 s, so an unbounded allocation or a hang fails this test instead of the machine."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from oracles import SAMPLES

ADDRESS_SPACE = 4 << 30

_CHILD = textwrap.dedent("""
    import contextlib, io, json, random, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    import irgrid
    from irgrid.cli import main
    from irgrid.ir.element_types import numpy_dtype
    sys.path.insert(0, {tests!r})
    from test_fuzz_reader import mutated_irs

    samples, work, trials = Path({samples!r}), Path({work!r}), {trials}
    report = {{"ok": 0, "irgrid_errors": 0, "cli_runs": 0, "bad": []}}

    def bad_inputs(compiled, rng, nprng):
        # Inputs as users get them wrong: a wrong dtype, rank or dim, NaN/Inf values, a missing or extra name.
        arrays = {{}}
        for parameter, info in compiled.inputs:
            shape = [2 if d is None else d for d in (info.shape or ())]
            if np.prod(shape) > 1 << 21:
                return None
            dtype = numpy_dtype(info.element_type)
            value = nprng.uniform(-1.5, 1.5, shape).astype(dtype)
            kind = rng.randrange(7)
            if kind == 1:
                value = value.astype(np.float64 if dtype != np.float64 else np.float32)
            elif kind == 2 and value.ndim:
                value = value[..., :1] if value.shape[-1] > 1 else np.concatenate([value, value], -1)
            elif kind == 3:
                value = value[None]
            elif kind == 4 and dtype.kind == "f":
                value.reshape(-1)[:: 3] = rng.choice([np.nan, np.inf, -np.inf, 1e30])
            arrays[parameter.name] = value
        if arrays and rng.random() < 0.1:
            arrays.pop(next(iter(arrays)))
        if rng.random() < 0.05:
            arrays["no_such_input"] = np.zeros(1, np.float32)
        return arrays

    def cli(*argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main([str(a) for a in argv])
            except BaseException as exc:
                report["bad"].append(f"cli {{argv[0]}} raised {{type(exc).__name__}}: {{exc}}"[:300])
                return
        report["cli_runs"] += 1
        lines = err.getvalue().strip().splitlines()
        if code not in (0, 1, 2) or (code == 2 and len(lines) != 1):
            report["bad"].append(f"cli {{argv[0]}} exit {{code}}, stderr {{lines[:3]}}")

    for sample in ("prior_grid", "flow_warp", "volume_warp"):
        rng = random.Random("entry-" + sample)
        nprng = np.random.default_rng(len(sample))
        for trial, xml in enumerate(mutated_irs(samples / sample, work, trials, "entry-" + sample, (0, 2))):
            try:
                model = irgrid.read_model(xml)
                irgrid.check_model(model)
                compiled = irgrid.compile_model(model, threads=rng.choice([1, 2]))
                inputs = bad_inputs(compiled, rng, nprng)
                if inputs is not None:
                    compiled(inputs)
                report["ok"] += 1
            except irgrid.IRGridError:
                report["irgrid_errors"] += 1
            except BaseException as exc:
                report["bad"].append(f"{{sample}} {{trial}}: {{type(exc).__name__}}: {{exc}}"[:300])
            if trial % 4 == 0:
                cli("check", xml, "--json")
                cli("infer", xml, "-d", "irgrid", "-niter", "1", "-nthreads", "1")
    print(json.dumps(report))
""")


def test_entry_points_under_mutation(tmp_path):
    child = _CHILD.format(limit=ADDRESS_SPACE, tests=str(Path(__file__).parent), samples=str(SAMPLES),
                          work=str(tmp_path), trials=60)
    env = {k: v for k, v in os.environ.items() if k not in ("IRGRID_NUM_THREADS", "OMP_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["bad"] == []
    assert report["ok"] > 0 and report["irgrid_errors"] > 0 and report["cli_runs"] == 2 * 3 * 15
