#!/usr/bin/env python3
"""fusor <-> NumPy interoperability for .npy and .npz.

Usage: numpy_interop.py PATH_TO_npy_interop_helper

1. fusor writes (helper `write`): numpy.load must read the same dtype, shape
   and values, bit for bit; headers are version 1.0, C order, 64-byte aligned;
   .npz keys are the variables' names and entries are stored.
2. numpy writes (np.save, np.lib.format.write_array v2.0/v3.0, np.savez,
   np.savez_compressed; C and Fortran order, little- and big-endian): fusor
   must load the same dtype, shape and values (helper `dump`, `dump-npz`).
3. numpy writes dtypes fusor has no type for (complex, unicode, float16,
   object, structured): fusor must refuse them with an io_error that names
   the file (and the entry) and says "unsupported dtype".

Prints one PASS/FAIL line per check; exits 1 if any check failed.
"""
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

FAILURES = []


def check(ok, what, detail=""):
    print(("PASS  " if ok else "FAIL  ") + what + ("" if ok or not detail else "\n      " + detail))
    if not ok:
        FAILURES.append(what)
    return ok


def run(helper, *args):
    proc = subprocess.run([helper, *args], capture_output=True, text=True, encoding="utf-8")
    return proc.returncode, proc.stdout, proc.stderr


def parse(stdout):
    """label -> (dtype name, shape tuple, little-endian C-order bytes)."""
    out = {}
    for row in stdout.splitlines():
        label, dtype, shape, hexdata = row.split("\t")
        out[label] = (dtype, tuple(int(e) for e in shape.split(",")) if shape else (), bytes.fromhex(hexdata))
    return out


def canonical(arr):
    """What the helper prints for an array: its dtype name, shape and C-order little-endian bytes."""
    arr = np.asarray(arr)
    little = arr.dtype.newbyteorder("<") if arr.dtype.itemsize > 1 else arr.dtype
    return arr.dtype.name, arr.shape, np.ascontiguousarray(arr, dtype=little).tobytes()


def describe(entry):
    dtype, shape, data = entry
    try:
        values = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
    except Exception:  # noqa: BLE001 - only for the message
        values = data.hex()
    return f"dtype={dtype} shape={shape} values={values!r}"


def same(got, want, what):
    return check(got == want, what, f"fusor: {describe(got)}\n      numpy: {describe(want)}")


# ---------------------------------------------------------------- fusor writes


def fusor_writes(helper, tmp):
    rc, out, err = run(helper, "write", tmp)
    if not check(rc == 0, "helper `write` ran", err):
        return
    written = parse(out)
    check(len(written) > 60, f"helper wrote {len(written)} arrays")
    npz = None
    for label, want in sorted(written.items()):
        if label.startswith("set.npz:"):
            continue
        path = os.path.join(tmp, label)
        arr = np.load(path)
        same(canonical(arr), want, f"numpy.load reads fusor's {label}")
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            data_offset = f.tell()
        check(version == (1, 0) and not fortran and shape == want[1] and data_offset % 64 == 0,
              f"{label}: header version 1.0, C order, data at a multiple of 64 ({data_offset})")
        expected_descr = {1: "|"}.get(dtype.itemsize, "<")
        check(dtype.str[0] == expected_descr, f"{label}: descr {dtype.str!r} has byte order {expected_descr!r}")

    path = os.path.join(tmp, "set.npz")
    with np.load(path) as npz:
        want_keys = sorted(k.split(":", 1)[1] for k in written if k.startswith("set.npz:"))
        check(sorted(npz.files) == want_keys, f"set.npz keys {sorted(npz.files)} == {want_keys}")
        for key in npz.files:
            same(canonical(npz[key]), written["set.npz:" + key], f"numpy.load(set.npz)[{key!r}]")
    with zipfile.ZipFile(path) as z:
        check(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()), "set.npz entries are stored, as np.savez does")
        check(z.testzip() is None, "set.npz passes zipfile's CRC check")


# ---------------------------------------------------------------- numpy writes

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]
SHAPES = [(), (5,), (2, 3), (2, 3, 4), (0, 3), (3, 0, 2)]


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        if n >= 2:
            flat[0], flat[1] = info.min, info.max
    else:
        flat = (rng.standard_normal(n) * 1e3).astype(dt)
        specials = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).max, np.finfo(dt).tiny]
        for i, v in enumerate(specials[: n // 2]):
            flat[i] = v
    return flat.reshape(shape)


def numpy_writes(helper, tmp):
    arrays = {}  # file name -> array as numpy wrote it
    for i, dtype in enumerate(DTYPES):
        for j, shape in enumerate(SHAPES):
            arrays[f"np_{dtype}_{j}.npy"] = sample(dtype, shape, 100 * i + j)
        base = sample(dtype, (3, 4, 2), 7 + i)
        arrays[f"np_{dtype}_fortran.npy"] = np.asfortranarray(base)
        arrays[f"np_{dtype}_fortran2d.npy"] = np.asfortranarray(base[:, :, 0])
        if np.dtype(dtype).itemsize > 1:
            big = np.dtype(dtype).newbyteorder(">")
            arrays[f"np_{dtype}_big.npy"] = base.astype(big)
            arrays[f"np_{dtype}_bigfortran.npy"] = np.asfortranarray(base.astype(big))
    for name, arr in arrays.items():
        np.save(os.path.join(tmp, name), arr)
    # Format versions 2.0 and 3.0 (4-byte header length).
    for version in [(2, 0), (3, 0)]:
        name = f"np_v{version[0]}.npy"
        arrays[name] = sample("float64", (4, 5), 99)
        with open(os.path.join(tmp, name), "wb") as f:
            np.lib.format.write_array(f, arrays[name], version=version)

    # Sanity: numpy really wrote Fortran order and big-endian descrs.
    with open(os.path.join(tmp, "np_int32_bigfortran.npy"), "rb") as f:
        np.lib.format.read_magic(f)
        _, fortran, dt = np.lib.format.read_array_header_1_0(f)
    check(fortran and dt.str == ">i4", f"numpy wrote np_int32_bigfortran.npy as fortran_order={fortran}, descr={dt.str!r}")

    names = sorted(arrays)
    rc, out, err = run(helper, "dump", *[os.path.join(tmp, n) for n in names])
    if not check(rc == 0, f"helper `dump` loaded {len(names)} numpy files", err):
        return
    loaded = parse(out)
    for name in names:
        if check(name in loaded, f"fusor loaded {name}"):
            same(loaded[name], canonical(arrays[name]), f"fusor.load of numpy's {name}")

    # .npz, stored and compressed, mixing orders and byte orders.
    contents = {
        "W": sample("float32", (3, 4), 1),
        "b": sample("int64", (4,), 2),
        "step": np.array(17, dtype=np.uint32),
        "mask": sample("bool", (2, 2), 3),
        "F": np.asfortranarray(sample("float64", (2, 3, 4), 4)),
        "big": sample("int16", (5,), 5).astype(">i2"),
        "bigF": np.asfortranarray(sample("uint64", (3, 2), 6).astype(">u8")),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "größe": np.array([1, -2], dtype=np.int8),
    }
    for writer in (np.savez, np.savez_compressed):
        path = os.path.join(tmp, f"{writer.__name__}.npz")
        writer(path, **contents)
        rc, out, err = run(helper, "dump-npz", path)
        if not check(rc == 0, f"helper `dump-npz` read {writer.__name__} output", err):
            continue
        got = parse(out)
        check(sorted(k[4:] for k in got if k.startswith("raw:")) == sorted(contents),
              f"{writer.__name__}: read_npz keys are the names given to numpy")
        for key, arr in contents.items():
            for how in ("raw", "var"):
                label = f"{how}:{key}"
                if check(label in got, f"{writer.__name__}: fusor has {label}"):
                    same(got[label], canonical(arr),
                         f"{writer.__name__}[{key!r}] via {'read_npz' if how == 'raw' else 'load(file, var)'}")


# ---------------------------------------------------------------- refusals


def numpy_writes_unsupported(helper, tmp):
    unsupported = {
        "complex.npy": np.array([1 + 2j, 3 - 4j]),
        "unicode.npy": np.array(["abc", "de"]),
        "float16.npy": np.array([1.5, 2.5], dtype=np.float16),
        "object.npy": np.array([{"a": 1}, None], dtype=object),
        "structured.npy": np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]),
        "bytes.npy": np.array([b"xy", b"z"]),
        "datetime.npy": np.array(["2024-01-01"], dtype="datetime64[D]"),
    }
    for name, arr in unsupported.items():
        path = os.path.join(tmp, name)
        np.save(path, arr, allow_pickle=True)
        rc, out, _ = run(helper, "expect-error", path)
        check(rc == 0 and "unsupported dtype" in out and path in out,
              f"fusor refuses numpy's {name} ({arr.dtype.str}) with an io_error naming the file", out.strip())

    path = os.path.join(tmp, "mixed.npz")
    np.savez(path, good=np.arange(3), bad=np.array([1j]))
    rc, out, _ = run(helper, "expect-error", path)
    check(rc == 0 and "entry 'bad.npy'" in out and path in out and "unsupported dtype '<c16'" in out,
          "fusor refuses an .npz with a complex entry, naming the entry and the file", out.strip())


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    helper = sys.argv[1]
    # Entry names may be non-ASCII; never fail on printing them.
    sys.stdout.reconfigure(errors="backslashreplace")
    print(f"numpy {np.__version__}, helper {helper}")
    with tempfile.TemporaryDirectory(prefix="fusor-interop-") as tmp:
        fusor_writes(helper, tmp)
        numpy_writes(helper, tmp)
        numpy_writes_unsupported(helper, tmp)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed:")
        for f in FAILURES:
            print("  " + f)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
