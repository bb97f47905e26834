#!/usr/bin/env python3
"""`meson install` into a temporary prefix, then build and run the consumer
project (test/consumer/) against it twice: with meson, finding fusor with
dependency('fusor') and dependency('fusor-runtime') through the installed
fusor.pc and fusor-runtime.pc, and with CMake, finding it with
find_package(fusor CONFIG) through the installed fusorConfig.cmake (targets
fusor::fusor and fusor::runtime). Any failing step fails the test, with its
output."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd, quiet=False, **kw):
    """Runs cmd; quiet: its output is shown only if it fails."""
    print("+ " + " ".join(cmd), flush=True)
    if not quiet:
        subprocess.run(cmd, check=True, **kw)
        return
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if done.returncode != 0:
        print(done.stdout, flush=True)
        raise subprocess.CalledProcessError(done.returncode, cmd)


def main(source_root):
    cmake = shutil.which("cmake")
    if cmake is None:
        print("cmake not found: the CMake package's check needs it (apt-get install cmake, "
              "or ./scripts/dev.sh, which does)")
        return 1
    with tempfile.TemporaryDirectory(prefix="fusor-install-") as tmp:
        prefix = os.path.join(tmp, "prefix")
        # Without debug information (meson's default buildtype adds -g) and
        # unoptimised: what is checked is that the installed files are found
        # and link. -g made this, the longest test of the suite, a quarter
        # slower; -O2 (fusor's default) 10-20 s of a core more than -O0 for
        # libfusor. (The consumers are unoptimised already: meson's and
        # CMake's defaults.)
        run(["meson", "setup", os.path.join(tmp, "lib"), source_root, "--prefix", prefix,
             "-Dtests=false", "-Dexamples=false", "-Dbenchmarks=disabled", "-Dgpu=disabled", "-Ddebug=false",
             "-Doptimization=0"],
            quiet=True)
        run(["meson", "install", "-C", os.path.join(tmp, "lib")], quiet=True)
        pcs = glob.glob(os.path.join(prefix, "**", "fusor.pc"), recursive=True)
        headers = glob.glob(os.path.join(prefix, "include", "fusor", "shared.hpp"))
        configs = glob.glob(os.path.join(prefix, "**", "cmake", "fusor", "fusorConfig*.cmake"), recursive=True)
        libs = glob.glob(os.path.join(prefix, "**", "libfusor.so*"), recursive=True)
        missing = [what for what, found in [("fusor.pc", pcs), ("the headers", headers), ("libfusor", libs),
                                            ("fusorConfig.cmake and fusorConfigVersion.cmake", len(configs) == 2)]
                   if not found]
        if missing:
            print(f"the installation in {prefix} is missing {', '.join(missing)}")
            return 1
        consumer_source = os.path.join(source_root, "test", "consumer")

        # meson: pkg-config finds fusor.pc and fusor-runtime.pc.
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
        consumer = os.path.join(tmp, "consumer")
        run(["meson", "setup", consumer, consumer_source, "-Ddebug=false"], env=env, quiet=True)
        run(["meson", "compile", "-C", consumer], env=env, quiet=True)
        run([os.path.join(consumer, "consumer")])
        run([os.path.join(consumer, "consumer_runtime")],
            env=dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(libs[0])))

        # CMake: find_package(fusor CONFIG) through CMAKE_PREFIX_PATH, and no
        # other place a fusor could be registered. No build type: no -g.
        cmake_consumer = os.path.join(tmp, "cmake-consumer")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        run([cmake, "-S", consumer_source, "-B", cmake_consumer, *generator, "-DCMAKE_PREFIX_PATH=" + prefix,
             "-DCMAKE_BUILD_TYPE=", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
             "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"], quiet=True)
        run([cmake, "--build", cmake_consumer], quiet=True)
        run([os.path.join(cmake_consumer, "consumer")])
        # (CMake's build tree records libfusor's directory in the program.)
        run([os.path.join(cmake_consumer, "consumer_runtime")])
        print("the installed headers, libfusor, fusor.pc, fusor-runtime.pc and the CMake package "
              "(fusor::fusor, fusor::runtime) work from other meson and CMake projects")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
