"""The native targets' committed seeds: seeds/<target>.txt, one input a line in base64, sorted (a
campaign's minimised corpus of hundreds of small binary inputs, kept as one diffable file).

    <target> -merge=1 MINIMISED CORPUS                                  # libFuzzer: keep what adds coverage
    python tests/fuzz/native/seed_corpus.py pack fuzz_grid_sample MINIMISED   # -> seeds/fuzz_grid_sample.txt
    python tests/fuzz/native/seed_corpus.py unpack fuzz_grid_sample FOLDER    # one file an input
"""
from __future__ import annotations

import base64
import sys
from pathlib import Path

SEEDS = Path(__file__).resolve().parent / "seeds"


def unpack(name: str, folder: Path) -> int:
    """Writes target `name`'s seeds into FOLDER as seed-NNNN files; returns how many."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = (SEEDS / f"{name}.txt").read_text().split()
    for i, line in enumerate(lines):
        (folder / f"seed-{i:04d}").write_bytes(base64.b64decode(line))
    return len(lines)


def pack(name: str, corpus: Path) -> int:
    """Replaces target `name`'s seeds with the inputs in CORPUS; returns how many."""
    lines = sorted({base64.b64encode(path.read_bytes()).decode() for path in corpus.iterdir() if path.is_file()})
    (SEEDS / f"{name}.txt").write_text("".join(line + "\n" for line in lines))
    return len(lines)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("pack", "unpack"):
        sys.exit(__doc__)
    print({"pack": pack, "unpack": unpack}[sys.argv[1]](sys.argv[2], Path(sys.argv[3])))
