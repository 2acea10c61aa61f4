"""Fuzz target: compile and run small models on irgrid's runtime (and, with FUZZ_OPENVINO=1, on OpenVINO's
CPU plugin with irgrid's extension), from structure-aware mutations of the seed IRs and fuzzed input values
(NaN, Inf, -0, huge, denormal, exact .5 among them).

Oracle: compiling and running return outputs or raise an IRGridError (on the OpenVINO device its
OpenVINOError, or an InputError); a model compiled for 1 thread and for 2 threads gives the same outputs bit
for bit, or the same error (thread-count independence, README); anything else, a hang past -timeout or
memory past harness.limit_memory (irgrid must refuse any value over harness.FUZZ_MEMORY) is a finding.
"""
import os
import sys

import atheris

from harness import (SPECIAL_FLOATS, limit_memory, mutate_ir, pick_seed, run, scratch_dir, seed_inputs, seed_irs,
                     unexpected, write_ir)

with atheris.instrument_imports(include=["irgrid"]):
    import numpy as np

    import irgrid
    from irgrid.ir import element_types
    if os.environ.get("FUZZ_OPENVINO") == "1":
        from irgrid.openvino.runner import OpenVINOModel
    else:
        OpenVINOModel = None

SEEDS = seed_irs("layers", "saved", "samples")
WORK = scratch_dir()
MAX_ELEMENTS = 1 << 18  # all inputs together


def _inputs(fdp, compiled) -> dict | None:
    rng = np.random.default_rng(fdp.ConsumeIntInRange(0, 1 << 16))
    arrays, total = {}, 0
    for parameter, info in compiled.inputs:
        if info.shape is None:
            shape = tuple(fdp.ConsumeIntInRange(0, 4) for _ in range(fdp.ConsumeIntInRange(0, 4)))
        else:
            shape = tuple(fdp.ConsumeIntInRange(0, 5) if d is None else d for d in info.shape)
        total += int(np.prod(shape))
        if total > MAX_ELEMENTS:
            return None
        try:
            dtype = element_types.numpy_dtype(info.element_type)
        except Exception as exc:
            if unexpected(exc):
                raise
            return None
        if dtype.kind == "b":
            value = rng.integers(0, 2, shape).astype(bool)
        elif dtype.kind in "iu":
            value = rng.integers(-3 if dtype.kind == "i" else 0, 8, shape).astype(dtype)
        else:
            scale = [1.0, 1.5, 10.0, 1e4][fdp.ConsumeIntInRange(0, 3)]
            value = (rng.uniform(-scale, scale, shape) if fdp.ConsumeBool()
                     else np.round(rng.uniform(-scale, scale, shape) * 2) / 2).astype(dtype)
            flat = value.reshape(-1)
            for _ in range(fdp.ConsumeIntInRange(0, 6) if flat.size else 0):
                with np.errstate(over="ignore"):
                    flat[fdp.ConsumeIntInRange(0, flat.size - 1)] = SPECIAL_FLOATS[
                        fdp.ConsumeIntInRange(0, len(SPECIAL_FLOATS) - 1)]
        arrays[parameter.name] = value
    return arrays


def _outcome(call):
    """('ok', outputs) or ('error', the IRGridError's type and message)."""
    try:
        return "ok", call()
    except Exception as exc:
        if unexpected(exc):
            raise
        return "error", f"{type(exc).__name__}: {exc}"


def _bits(outputs) -> dict:
    return {name: (a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes()) for name, a in outputs.items()}


def test_one_input(data: bytes) -> None:
    (_, xml, blob), rest = pick_seed(data, SEEDS)
    fdp = atheris.FuzzedDataProvider(rest)
    xml, blob = mutate_ir(fdp, xml, blob)
    path = write_ir(WORK, xml, blob)
    try:
        one = irgrid.compile_model(path, threads=1)
        two = irgrid.compile_model(path, threads=2)
    except Exception as exc:
        if unexpected(exc):
            raise
        return
    inputs = _inputs(fdp, one)
    if inputs is None:
        return
    first, second = _outcome(lambda: _bits(one(inputs))), _outcome(lambda: _bits(two(inputs)))
    assert first == second, f"1 thread: {str(first)[:300]}\n2 threads: {str(second)[:300]}"
    if OpenVINOModel is not None:
        _outcome(lambda: OpenVINOModel(path, threads=1)(inputs))


if __name__ == "__main__":
    limit_memory()
    run(test_one_input, seed_inputs(len(SEEDS)))
