"""Seeded mutations of real IRs: whatever is wrong, irgrid raises an IRGridError (or works), never
another exception, a crash or a hang."""
import random
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

import irgrid
from irgrid.ir.element_types import numpy_dtype

TRIALS = 150
SAMPLES = ["prior_grid", "flow_warp", "volume_warp"]
VALUES = ["", "-1", "0", "1", "-7", "?", "1..3", "abc", "1e400", "nan", "99999999999999999999", "2.5",
          "true", "f32", "FP64", "u1", "zeros", "bilinear", "4, 4", "-0"]


def _mutate(tree: etree._ElementTree, rng: random.Random) -> None:
    elements = [e for e in tree.iter() if isinstance(e.tag, str)]
    element = rng.choice(elements)
    action = rng.randrange(5)
    if action == 0 and element.attrib:
        key = rng.choice(sorted(element.attrib))
        element.set(key, rng.choice(VALUES))
    elif action == 1 and element.attrib:
        del element.attrib[rng.choice(sorted(element.attrib))]
    elif action == 2 and element.getparent() is not None:
        element.getparent().remove(element)
    elif action == 3 and element.getparent() is not None:
        element.getparent().append(etree.fromstring(etree.tostring(element)))
    elif element.tag == "dim" or action == 4:
        element.text = rng.choice(VALUES)


def _inputs(compiled):
    rng = np.random.default_rng(0)
    arrays = {}
    for parameter, info in compiled.inputs:
        shape = tuple(2 if d is None else d for d in (info.shape or ()))
        if np.prod(shape) > 1 << 22:
            return None
        arrays[parameter.name] = rng.uniform(-1.5, 1.5, shape).astype(numpy_dtype(info.element_type))
    return arrays


def mutated_irs(sample_dir: Path, work: Path, trials: int, seed: str, mutations: tuple[int, int] = (1, 3)):
    """`trials` copies of a sample IR, each with a few seeded mutations and (one time in five or so) a
    truncated .bin; yields each .xml path, written under `work`."""
    original = etree.parse(str(sample_dir / "model.xml"))
    blob = (sample_dir / "model.bin").read_bytes()
    rng = random.Random(seed)
    for trial in range(trials):
        tree = etree.ElementTree(etree.fromstring(etree.tostring(original)))
        for _ in range(rng.randint(*mutations)):
            _mutate(tree, rng)
        xml = work / f"{sample_dir.name}{trial}.xml"
        tree.write(str(xml))
        xml.with_suffix(".bin").write_bytes(blob if rng.random() < 0.8 else blob[: rng.randrange(len(blob) + 1)])
        yield xml


@pytest.mark.parametrize("sample", SAMPLES)
def test_mutated_irs_raise_only_irgrid_errors(sample, tmp_path, request):
    outcomes = {"ok": 0, "error": 0}
    for xml in mutated_irs(request.config.rootpath / "samples" / sample, tmp_path, TRIALS, sample):
        try:
            model = irgrid.read_model(xml)
            irgrid.check_model(model)
            compiled = irgrid.compile_model(model)
            inputs = _inputs(compiled)
            if inputs is not None:
                compiled(inputs)
            outcomes["ok"] += 1
        except irgrid.IRGridError:
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and sum(outcomes.values()) == TRIALS
