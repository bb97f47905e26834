#!/usr/bin/env python3
"""Writes the seed corpora of fusor's loader fuzzers: files numpy itself writes.

    python3 test/fuzz/make_corpus.py test/fuzz/corpus

corpus/npy: np.save of every dtype fusor reads, ranks 0..3, empty arrays,
Fortran order, big-endian, format versions 1.0 / 2.0 / 3.0, and a few that
fusor must refuse (complex, unicode, object-free structured). corpus/npz:
np.savez and np.savez_compressed archives with the entries the harness loads
('w.npy', 'b.npy'), with extra and missing entries. The output is committed:
CI fuzzes from it without needing numpy at that step.
"""
import io
import os
import sys
import zipfile

import numpy as np
from numpy.lib import format as npf


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a, allow_pickle=False)
    else:
        npf.write_array(buf, a, version=version, allow_pickle=False)
    return buf.getvalue()


def main(out):
    npy_dir = os.path.join(out, "npy")
    npz_dir = os.path.join(out, "npz")
    os.makedirs(npy_dir, exist_ok=True)
    os.makedirs(npz_dir, exist_ok=True)
    rng = np.random.default_rng(20261123)
    seeds = {}
    dtypes = ["?", "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"]
    for dt in dtypes:
        for shape in [(), (3,), (2, 3), (2, 1, 2), (0,), (0, 4)]:
            a = (rng.standard_normal(shape) * 10).astype(dt)
            name = "%s_%s" % (dt.replace("<", "le").replace("?", "bool"), "x".join(map(str, shape)) or "scalar")
            seeds[name + ".npy"] = npy_bytes(a)
    seeds["f8_fortran.npy"] = npy_bytes(np.asfortranarray(rng.standard_normal((3, 4))))
    seeds["f8_bigendian.npy"] = npy_bytes(rng.standard_normal((2, 2)).astype(">f8"))
    seeds["i4_bigendian.npy"] = npy_bytes(np.arange(6, dtype=">i4").reshape(2, 3))
    seeds["f8_v2.npy"] = npy_bytes(np.arange(4.0), version=(2, 0))
    seeds["f4_v3.npy"] = npy_bytes(np.arange(3, dtype="<f4"), version=(3, 0))
    seeds["nan_inf.npy"] = npy_bytes(np.array([np.nan, np.inf, -np.inf, -0.0]))
    # Refused by fusor (unsupported dtypes): the harness checks that nothing changes.
    seeds["c16.npy"] = npy_bytes(np.array([1 + 2j]))
    seeds["unicode.npy"] = npy_bytes(np.array(["ab", "c"]))
    seeds["f2.npy"] = npy_bytes(np.array([1.5], dtype="<f2"))
    for name, data in seeds.items():
        with open(os.path.join(npy_dir, name), "wb") as f:
            f.write(data)

    w = rng.standard_normal((3, 2))
    b = np.arange(2, dtype=np.float32)
    archives = {
        "savez.npz": lambda f: np.savez(f, w=w, b=b),
        "savez_compressed.npz": lambda f: np.savez_compressed(f, w=w, b=b),
        "extra_entry.npz": lambda f: np.savez(f, w=w, b=b, k=np.arange(3)),
        "missing_b.npz": lambda f: np.savez(f, w=w),
        "empty_arrays.npz": lambda f: np.savez(f, w=np.zeros((0, 2)), b=np.zeros((0,), dtype=np.float32)),
        "int_entries.npz": lambda f: np.savez_compressed(f, w=np.arange(6).reshape(3, 2), b=np.array([1, 2], dtype=np.int8)),
    }
    for name, write in archives.items():
        with open(os.path.join(npz_dir, name), "wb") as f:
            write(f)
    # A zip with a non-.npy entry, as another tool might write it.
    with zipfile.ZipFile(os.path.join(npz_dir, "text_entry.npz"), "w") as z:
        z.writestr("w.npy", npy_bytes(w))
        z.writestr("notes.txt", "not an array")
    print("wrote %d npy and %d npz seeds under %s" % (len(seeds), len(archives) + 1, out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus"))
