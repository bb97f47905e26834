#!/usr/bin/env python3
"""`meson install` into a temporary prefix, then build and run a consumer
project that finds fusor with dependency('fusor') and dependency('fusor-runtime')
through the installed fusor.pc and fusor-runtime.pc."""
import glob
import os
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main(source_root):
    with tempfile.TemporaryDirectory(prefix="fusor-install-") as tmp:
        prefix = os.path.join(tmp, "prefix")
        # Without debug information (meson's default buildtype adds -g): what
        # is checked is that the installed files are found and link, and -g
        # made this, the longest test of the suite, a quarter slower.
        run(["meson", "setup", os.path.join(tmp, "lib"), source_root, "--prefix", prefix,
             "-Dtests=false", "-Dexamples=false", "-Dbenchmarks=disabled", "-Dgpu=disabled", "-Ddebug=false"],
            stdout=subprocess.DEVNULL)
        run(["meson", "install", "-C", os.path.join(tmp, "lib")], stdout=subprocess.DEVNULL)
        pcs = glob.glob(os.path.join(prefix, "**", "fusor.pc"), recursive=True)
        headers = glob.glob(os.path.join(prefix, "include", "fusor", "shared.hpp"))
        if not pcs or not headers:
            print(f"install is missing fusor.pc ({pcs}) or the headers ({headers})")
            return 1
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
        consumer = os.path.join(tmp, "consumer")
        run(["meson", "setup", consumer, os.path.join(source_root, "test", "consumer"), "-Ddebug=false"], env=env,
            stdout=subprocess.DEVNULL)
        run(["meson", "compile", "-C", consumer], env=env, stdout=subprocess.DEVNULL)
        run([os.path.join(consumer, "consumer")])
        libs = glob.glob(os.path.join(prefix, "**", "libfusor.so*"), recursive=True)
        if not libs:
            print("install is missing libfusor")
            return 1
        run([os.path.join(consumer, "consumer_runtime")],
            env=dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(libs[0])))
        print("installed headers, fusor.pc, libfusor and fusor-runtime.pc work from another meson project")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
