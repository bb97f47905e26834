#!/usr/bin/env python3
"""A differential-testing campaign: random fusor programs against NumPy.

    campaign.py PROGRAMS [--per-unit 40] [--jobs N] [--first-seed S] [--dir DIR] [--compile-limit S]
                [--grad-every K] [--hessian-share P]

Generates PROGRAMS programs (generate.py), PER_UNIT to a translation unit,
compiles the units against fusor's compiled runtime (src/fusor.cpp, built
once), runs each and adds up what they report: programs tried, calls made,
values checked, mismatches. Units take turns between five builds so that
every kind of loop is checked: clang `-O0 -march=native` (the machine's widest
vectors), clang `-O0` for the baseline instruction set (SSE2 on x86-64), the
first with the shared variables on an emulated device (the device backend's
plans and kernels), g++ `-O1 -march=native` (an optimiser's code), and the
first again. Without clang, g++ takes its units.

A unit with a mismatch keeps its .cpp, .npz and output under DIR/failed/
(re-run it with the seed printed: generate.py --seed S --programs PER_UNIT,
and the campaign's --grad-every and --hessian-share where it set them);
the others are deleted. The exit status is 1 when anything mismatched or
failed to build.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# (compiler, flags). clang at -O0 compiles a unit in about half g++'s -O0 time
# and a third of its -O1 time, so most units use it; -march=native still
# selects the widest vector loops at -O0 (the instruction set, not the
# optimiser, decides them). One unit in five is g++ with its optimiser.
MODES = (('clang++', ['-O0', '-march=native']),
         ('clang++', ['-O0']),
         ('clang++', ['-O0', '-march=native', '-DDIFFTEST_DEVICE']),
         ('g++', ['-O1', '-march=native']),
         ('clang++', ['-O0', '-march=native']))


def compiler_of(mode):
    compiler = MODES[mode][0]
    return compiler if shutil.which(compiler) else 'g++'


def mode_name(mode):
    compiler, flags = compiler_of(mode), MODES[mode][1]
    return ' '.join([compiler] + flags)


def pkg_flags():
    try:
        out = subprocess.run(['pkg-config', '--cflags', '--libs', 'openblas', 'libzip'], check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = ['-lopenblas', '-lzip']
    cflags = [f.replace('-I', '-isystem', 1) if f.startswith('-I') else f for f in out if f.startswith('-I')]
    libs = [f for f in out if not f.startswith('-I')]
    return cflags, libs


def compile_args(mode, cflags):
    compiler, flags = compiler_of(mode), MODES[mode][1]
    return [compiler, '-std=c++20', '-g0', '-pthread', '-DFUSOR_SEPARATE_COMPILATION', '-I' + os.path.join(ROOT, 'include'),
            '-I' + HERE, '-I' + os.path.dirname(HERE), '-w'] + cflags + flags


def prepare(work, cflags):
    """The doctest main and the compiled runtime, once per build mode."""
    objs = {}
    main = os.path.join(work, 'main.cpp')
    with open(main, 'w') as f:
        f.write('#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n')
    for mode in range(len(MODES)):
        out = []
        for src, name in ((main, 'main'), (os.path.join(ROOT, 'src', 'fusor.cpp'), 'fusor')):
            obj = os.path.join(work, '%s.%d.o' % (name, mode))
            subprocess.run(compile_args(mode, cflags) + ['-c', src, '-o', obj], check=True)
            out.append(obj)
        objs[mode] = out
    return objs


def run_limited(cmd, limit_s):
    """Runs a compiler with a time limit. A program whose types explode (a
    second derivative can) is reported and kept, not waited for. The whole
    process group is killed: the driver's compiler proper (cc1plus, clang
    -cc1) would outlive the driver alone."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit_s)
        return subprocess.CompletedProcess(cmd, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return subprocess.CompletedProcess(cmd, 1, '', 'compile timed out after %d s' % limit_s)


def one_unit(seed, per_unit, work, objs, cflags, libs, compile_limit_s, shares):
    name = 'difftest_%d' % seed
    mode = seed % len(MODES)
    t0 = time.time()
    subprocess.run([sys.executable, os.path.join(HERE, 'generate.py'), '--seed', str(seed), '--programs',
                    str(per_unit), '--out', work, '--name', name] + shares, check=True)
    src, exe = os.path.join(work, name + '.cpp'), os.path.join(work, name)
    build = run_limited(compile_args(mode, cflags) + [src] + objs[mode] + libs + ['-o', exe], compile_limit_s)
    t1 = time.time()
    result = {'seed': seed, 'mode': mode_name(mode), 'compile_s': t1 - t0, 'programs': 0, 'gradients': 0,
              'hessians': 0, 'calls': 0,
              'refused': 0, 'values': 0, 'mismatches': 0, 'failed_cases': 0, 'ok': False, 'log': ''}
    if build.returncode != 0:
        result['log'] = build.stderr[-20000:]
        result['build_failed'] = True
        return result
    try:
        run = subprocess.run([exe], capture_output=True, text=True, timeout=600)
        log = run.stdout + run.stderr
    except subprocess.TimeoutExpired as e:
        log = 'timed out after 600 s\n' + (e.stdout or b'').decode(errors='replace')
        run = None
    result['run_s'] = time.time() - t1
    result['log'] = log
    m = re.search(r'difftest: (\d+) programs \((\d+) gradient checks, (\d+) second derivatives\), (\d+) calls '
                  r'\((\d+) refused[^)]*\), (\d+) values checked, (\d+) mismatches', log)
    if m:
        for k, v in zip(('programs', 'gradients', 'hessians', 'calls', 'refused', 'values', 'mismatches'), m.groups()):
            result[k] = int(v)
    c = re.search(r'test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed', log)
    if c:
        result['failed_cases'] = int(c.group(3))
    # A failed gradient check is a failed test case (verify_grad's CHECK), not a counted mismatch.
    result['ok'] = run is not None and run.returncode == 0 and m is not None and result['mismatches'] == 0 \
        and result['failed_cases'] == 0
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('programs', type=int)
    ap.add_argument('--per-unit', type=int, default=40)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    ap.add_argument('--first-seed', type=int, default=int(time.time()) % 1000000 * 1000)
    ap.add_argument('--dir', default=os.path.join(ROOT, 'build-difftest'))
    ap.add_argument('--compile-limit', type=int, default=900,
                    help='seconds a unit may compile before it is reported as failed to build (default 900)')
    ap.add_argument('--grad-every', type=int, default=None,
                    help="every K-th program checks gradients (generate.py's default: 8; 1: every program)")
    ap.add_argument('--hessian-share', type=float, default=None,
                    help="the share of gradient programs that also check a second derivative where it compiles "
                         "(generate.py's default: 0.3)")
    a = ap.parse_args()
    shares = (['--grad-every', str(a.grad_every)] if a.grad_every is not None else []) + \
        (['--hessian-share', str(a.hessian_share)] if a.hessian_share is not None else [])
    work = os.path.join(a.dir, 'work')
    failed_dir = os.path.join(a.dir, 'failed')
    os.makedirs(work, exist_ok=True)
    os.makedirs(failed_dir, exist_ok=True)
    cflags, libs = pkg_flags()
    objs = prepare(work, cflags)
    units = (a.programs + a.per_unit - 1) // a.per_unit
    seeds = [a.first_seed + i for i in range(units)]
    totals = dict(programs=0, gradients=0, hessians=0, calls=0, refused=0, values=0, mismatches=0)
    bad = []
    start = time.time()
    print('difftest campaign: %d programs in %d units of %d, seeds %d..%d, %d jobs%s' % (
        units * a.per_unit, units, a.per_unit, seeds[0], seeds[-1], a.jobs,
        ' (generate.py %s)' % ' '.join(shares) if shares else ''), flush=True)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(one_unit, s, a.per_unit, work, objs, cflags, libs, a.compile_limit, shares)
                   for s in seeds]
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            for k in totals:
                totals[k] += r[k]
            name = 'difftest_%d' % r['seed']
            status = 'ok' if r['ok'] else ('BUILD FAILED' if r.get('build_failed') else 'MISMATCH')
            print('  seed %d (%s): %s, %d programs, %d calls, %d mismatches, compiled in %.0f s' % (
                r['seed'], r['mode'], status, r['programs'], r['calls'], r['mismatches'], r['compile_s']), flush=True)
            if not r['ok']:
                bad.append(r['seed'])
                for ext in ('.cpp', '.npz'):
                    if os.path.exists(os.path.join(work, name + ext)):
                        shutil.copy(os.path.join(work, name + ext), failed_dir)
                with open(os.path.join(failed_dir, name + '.log'), 'w') as f:
                    f.write(r['log'])
            for ext in ('.cpp', '.npz', ''):
                try:
                    os.remove(os.path.join(work, name + ext))
                except OSError:
                    pass
    print('difftest campaign: %d programs tried (%d gradient checks, %d second derivatives), %d calls made '
          '(%d refused as NumPy refuses), %d values checked, %d mismatches, %d units failed%s; %.0f s' % (
              totals['programs'], totals['gradients'], totals['hessians'], totals['calls'], totals['refused'],
              totals['values'], totals['mismatches'], len(bad),
              (' (seeds %s; logs in %s)' % (', '.join(map(str, bad)), failed_dir)) if bad else '', time.time() - start))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
