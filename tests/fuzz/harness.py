"""What the fuzz targets share: the seeds, the structure-aware IR mutator and the oracle's bounds.

A target's input is not an IR but the bytes a `FuzzedDataProvider` reads its choices from: which seed
IR to start from, then which mutations to apply (an attribute, a dim, a precision, an edge, a Const's
offset/size/shape/type, a layer's type or version, an element removed or duplicated, the .bin truncated or
overwritten). libFuzzer mutates those bytes; coverage guides it towards choices that reach new code.

The oracle's bounds (docs/fuzzing.md):
- exceptions: an `IRGridError` subclass, or nothing; anything else is a finding;
- time: libFuzzer's `-timeout` (per input, default here 10 s);
- memory: the process' address space is limited (`limit_memory`) and irgrid's allocation guard is told the
  machine has `FUZZ_MEMORY` bytes, so an IR asking for more must be refused by irgrid (a ShapeError) and a
  MemoryError means an allocation irgrid did not guard.
"""
from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEEDS = HERE / "seeds"

FUZZ_MEMORY = 256 << 20  # what irgrid's allocation guard believes the machine has
ADDRESS_SPACE = 6 << 30  # the process' hard bound (numpy, OpenMP stacks and OpenVINO's reservations fit)


def limit_memory(address_space: int = ADDRESS_SPACE) -> None:
    """Bound this process' address space, and make irgrid refuse any value over FUZZ_MEMORY bytes."""
    import irgrid.memory

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = address_space if hard == resource.RLIM_INFINITY else min(address_space, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    irgrid.memory.physical_memory = lambda: FUZZ_MEMORY


def scratch_dir() -> Path:
    """A private directory for the files a target writes (in memory where /dev/shm exists)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="irgrid-fuzz-", dir=base))


def seed_irs(*groups: str) -> list[tuple[str, bytes, bytes]]:
    """(name, xml, bin) of every committed seed IR in the named groups ('samples', 'saved', 'layers'),
    sorted by name so that a fuzzer input picks the same seed on every machine."""
    found = []
    for group in groups:
        if group == "samples":
            paths = sorted((ROOT / "samples").glob("*/model.xml"))
        else:
            paths = sorted((SEEDS / group).glob("*.xml"))
        for xml in paths:
            name = f"{group}/{xml.parent.name if group == 'samples' else xml.stem}"
            found.append((name, xml.read_bytes(), xml.with_suffix(".bin").read_bytes()))
    if not found:
        raise SystemExit(f"no seed IRs in {groups}: run tests/fuzz/make_seeds.py")
    return found


# ------------------------------------------------------------------------------------------------
# Structure-aware mutations of an IR
# ------------------------------------------------------------------------------------------------

INTS = ["0", "1", "-1", "2", "3", "7", "-7", "255", "65536", "2147483647", "2147483648", "-2147483649",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999"]
TEXTS = ["", " ", "?", "-", "1..3", "0..-1", "abc", "nan", "inf", "-inf", "1e400", "2.5", "-0", "0x10", "true",
         "false", "1,2", "1, 2, 3", "0,0,0,0", ",", "1,,2", "\u00e9", "\x00", "1 2", "+1", "01"]
PRECISIONS = ["FP32", "FP16", "FP64", "BF16", "I8", "U8", "I16", "U16", "I32", "I64", "U32", "U64", "BOOL", "U1",
              "I4", "U4", "NF4", "FP8", "STRING", "DYNAMIC", "UNSPECIFIED", "FP128", "", "fp32"]
ELEMENT_TYPES = ["f32", "f16", "f64", "bf16", "i8", "u8", "i16", "u16", "i32", "i64", "u32", "u64", "boolean",
                 "u1", "i4", "u4", "nf4", "f8e4m3", "string", "dynamic", "undefined", "f128", "", "F32"]
VERSIONS = ["opset1", "opset3", "opset4", "opset6", "opset7", "opset8", "opset9", "opset11", "opset13", "opset15",
            "opset99", "irgrid1", "irgrid7", "", "extension", "opset"]
TYPES = ["Add", "Multiply", "Convert", "Const", "Parameter", "Result", "GridSample", "DeformConv", "AffineGrid",
         "ExperimentalDetectronPriorGridGenerator", "DeformableConvolution", "Convolution", "Reshape", "Concat",
         "Gather", "Split", "Interpolate", "MaxPool", "FancyOp", "GridSampler", "gridsample", ""]
IR_VERSIONS = ["10", "11", "12", "9", "0", "", "x"]
SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, 1e30, -1e30, 1e-40,
                  3.4e38, 65504.0, 2.0 ** 31, -2.0 ** 31]


def _pick(fdp, items):
    return items[fdp.ConsumeIntInRange(0, len(items) - 1)] if items else None


def _value(fdp) -> str:
    """An attribute value: a boundary integer, a troublesome string, a small int, or fuzzer text."""
    kind = fdp.ConsumeIntInRange(0, 4)
    if kind == 0:
        return _pick(fdp, INTS)
    if kind == 1:
        return _pick(fdp, TEXTS)
    if kind == 2:
        return str(fdp.ConsumeIntInRange(-4, 16))
    if kind == 3:
        return ",".join(str(fdp.ConsumeIntInRange(-2, 8)) for _ in range(fdp.ConsumeIntInRange(0, 6)))
    return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 12))


def _dim(fdp) -> str:
    kind = fdp.ConsumeIntInRange(0, 3)
    if kind == 0:
        return str(fdp.ConsumeIntInRange(0, 9))
    if kind == 1:
        return _pick(fdp, ["-1", "?", "1..4", "0..", "..5", "4..2", "-2", "1e3", "2147483648", str(10 ** 12),
                           "9" * 40, "", "x"])
    return str(fdp.ConsumeIntInRange(-1, 64))


def mutate_ir(fdp, xml: bytes, blob: bytes) -> tuple[bytes, bytes]:
    """The seed IR `xml` + `blob` with up to 4 mutations chosen by `fdp`."""
    from lxml import etree

    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    blob = bytearray(blob)
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        try:
            _mutate_once(fdp, root, blob)
        except ValueError:  # text lxml cannot write (a control character): that mutation is skipped
            pass
    xml = etree.tostring(root)
    if fdp.ConsumeIntInRange(0, 15) == 0:  # raw bytes spliced into the XML text
        at = fdp.ConsumeIntInRange(0, len(xml))
        xml = xml[:at] + fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8)) + xml[at + fdp.ConsumeIntInRange(0, 8):]
    return xml, bytes(blob)


def _mutate_once(fdp, root, blob: bytearray) -> None:
    from lxml import etree

    layers = root.findall("./layers/layer")
    edges = root.findall("./edges/edge")
    kind = fdp.ConsumeIntInRange(0, 13)
    layer = _pick(fdp, layers)
    if kind == 0 and layer is not None:  # an attribute of the layer's <data>
        data = layer.find("data")
        if data is None:
            data = etree.SubElement(layer, "data")
        names = sorted(data.attrib) + ["axis", "mode", "shape", "offset", "size", "element_type", "auto_pad",
                                       "align_corners", "padding_mode", "group", "strides", "pads_begin"]
        data.set(_pick(fdp, names), _value(fdp))
    elif kind == 1 and layer is not None and layer.find("data") is not None and layer.find("data").attrib:
        del layer.find("data").attrib[_pick(fdp, sorted(layer.find("data").attrib))]
    elif kind == 2:  # a dim's text, or a dim added or removed (a rank change)
        dims = root.findall(".//port/dim")
        ports = root.findall(".//port")
        action = fdp.ConsumeIntInRange(0, 2)
        if action == 0 and dims:
            _pick(fdp, dims).text = _dim(fdp)
        elif action == 1 and dims:
            dim = _pick(fdp, dims)
            dim.getparent().remove(dim)
        elif ports:
            etree.SubElement(_pick(fdp, ports), "dim").text = _dim(fdp)
    elif kind == 3:  # a port's precision
        ports = root.findall(".//port")
        if ports:
            _pick(fdp, ports).set("precision", _pick(fdp, PRECISIONS))
    elif kind == 4 and edges:  # an edge's end
        edge = _pick(fdp, edges)
        key = _pick(fdp, ["from-layer", "from-port", "to-layer", "to-port"])
        ids = [l.get("id", "") for l in layers] + [p.get("id", "") for p in root.findall(".//port")]
        edge.set(key, _pick(fdp, ids) if ids and fdp.ConsumeBool() else _value(fdp))
    elif kind == 5 and edges:  # an edge removed or duplicated
        edge = _pick(fdp, edges)
        if fdp.ConsumeBool():
            edge.getparent().remove(edge)
        else:
            edge.getparent().append(etree.fromstring(etree.tostring(edge)))
    elif kind == 6:  # a Const's offset, size, shape or element_type
        consts = [l for l in layers if l.get("type") == "Const" and l.find("data") is not None]
        if consts:
            data = _pick(fdp, consts).find("data")
            key = _pick(fdp, ["offset", "size", "shape", "element_type"])
            if key == "element_type":
                data.set(key, _pick(fdp, ELEMENT_TYPES))
            elif key == "shape":
                data.set(key, ",".join(_dim(fdp) for _ in range(fdp.ConsumeIntInRange(0, 5))))
            else:
                delta = _pick(fdp, [-8, -4, -2, -1, 1, 2, 4, 8, 1 << 20, 1 << 40])
                data.set(key, str(int(data.get(key, "0") or 0) + delta) if fdp.ConsumeBool() else _value(fdp))
    elif kind == 7 and layer is not None:  # a layer's version
        if fdp.ConsumeIntInRange(0, 5) == 0:
            layer.attrib.pop("version", None)
        else:
            layer.set("version", _pick(fdp, VERSIONS))
    elif kind == 8 and layer is not None:  # a layer's type
        layer.set("type", _pick(fdp, TYPES) if fdp.ConsumeBool() else _pick(fdp, [l.get("type", "") for l in layers]))
    elif kind == 9:  # the IR's version
        root.set("version", _pick(fdp, IR_VERSIONS))
    elif kind == 10:  # an element (a layer, port, dim, data, edge) removed or duplicated
        elements = [e for e in root.iter() if isinstance(e.tag, str) and e.getparent() is not None]
        element = _pick(fdp, elements)
        if element is None:
            pass
        elif fdp.ConsumeBool():
            element.getparent().remove(element)
        else:
            element.getparent().append(etree.fromstring(etree.tostring(element)))
    elif kind == 11 and blob:  # the .bin truncated
        del blob[fdp.ConsumeIntInRange(0, len(blob)):]
    elif kind == 12 and blob:  # special values written into the .bin (as f32, f16 or raw bytes)
        import struct
        at = fdp.ConsumeIntInRange(0, len(blob) - 1)
        how = fdp.ConsumeIntInRange(0, 2)
        value = _pick(fdp, SPECIAL_FLOATS)
        raw = (struct.pack("<f", value) if how == 0 else
               struct.pack("<e", value) if how == 1 and abs(value) < 65504 or value != value else
               fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8)))
        blob[at:at + len(raw)] = raw
    elif kind == 13 and layer is not None:  # a layer's id or name
        layer.set(_pick(fdp, ["id", "name"]), _value(fdp))


def write_ir(directory: Path, xml: bytes, blob: bytes) -> Path:
    path = directory / "model.xml"
    path.write_bytes(xml)
    path.with_suffix(".bin").write_bytes(blob)
    return path


def unexpected(exc: BaseException) -> bool:
    """The oracle on exceptions: only IRGridErrors are expected (KeyboardInterrupt stops the fuzzer). A
    NotBuiltError is not: the target imported an un-built source folder and tests nothing."""
    import irgrid

    return isinstance(exc, irgrid.errors.NotBuiltError) or not isinstance(exc, (irgrid.IRGridError, KeyboardInterrupt))


def pick_seed(data: bytes, seeds: list) -> tuple[object, bytes]:
    """The seed a fuzzer input starts from (its first two bytes), and the bytes left for its choices."""
    return seeds[int.from_bytes(data[:2], "big") % len(seeds)], data[2:]


def seed_inputs(count: int) -> dict[str, bytes]:
    """One fuzzer input per seed IR: that seed, unmutated."""
    return {f"seed-{index:03d}": index.to_bytes(2, "big") for index in range(count)}


def run(test_one_input, inputs: dict[str, bytes]) -> None:
    """Fuzz `test_one_input` with libFuzzer's arguments from sys.argv; the first corpus directory given
    gets `inputs` (the seeds) when it lacks them, so a fresh directory starts from every seed."""
    import atheris

    corpora = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    if corpora and not Path(corpora[0]).is_file():  # files given: inputs to re-run, not a corpus
        first = Path(corpora[0])
        first.mkdir(parents=True, exist_ok=True)
        for name, data in inputs.items():
            if not (first / name).exists():
                (first / name).write_bytes(data)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
