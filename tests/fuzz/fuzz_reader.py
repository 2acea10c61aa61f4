"""Fuzz target: irgrid's IR reader (read + bind) on structure-aware mutations of the seed IRs.

Oracle: `irgrid.read_model` returns a model or raises an IRGridError; anything else (another exception,
a crash, more than libFuzzer's -timeout per input, more memory than harness.limit_memory allows) is a
finding. Run: see docs/fuzzing.md.
"""
import sys

import atheris

from harness import limit_memory, mutate_ir, pick_seed, run, scratch_dir, seed_inputs, seed_irs, unexpected, write_ir

with atheris.instrument_imports(include=["irgrid"]):
    import irgrid

SEEDS = seed_irs("samples", "saved", "layers")
WORK = scratch_dir()


def test_one_input(data: bytes) -> None:
    (_, xml, blob), rest = pick_seed(data, SEEDS)
    xml, blob = mutate_ir(atheris.FuzzedDataProvider(rest), xml, blob)
    path = write_ir(WORK, xml, blob)
    try:
        model = irgrid.read_model(path)
    except Exception as exc:
        if unexpected(exc):
            raise
        return
    for layer in model.layers.values():  # what a reader returns is usable: every layer names itself
        str(layer.type), str(layer.name), str(layer.id)


if __name__ == "__main__":
    limit_memory()
    run(test_one_input, seed_inputs(len(SEEDS)))
