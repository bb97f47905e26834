#!/usr/bin/env python3
"""Random fusor programs and their NumPy twins, for differential testing.

    generate.py --seed S --programs N --out DIR [--name NAME]
                [--grad-every K] [--hessian-share P]

writes DIR/NAME.cpp (N doctest cases, one per program: each builds one
fusor::function from a random expression DAG and calls it several times) and
DIR/NAME.npz (every argument, every initial and set value, and what NumPy
computes for every call: outputs, updated shared variables, or a refusal).
The C++ side (harness.hpp) loads the .npz, runs the calls and checks values
and the memory model after each one; this script never runs fusor.

The same seed gives the same files. A program is generated as a pool of typed
nodes: leaves (symbolic inputs and shared variables), then random operations
whose operands are drawn from the pool when their dtypes, ranks and symbolic
shapes fit. Each node knows its C++ spelling and how NumPy computes it, and
carries, besides its value, a float64 error bound: to first order, how far
rounding in any order of evaluation, in the dtype of each operation, can move
it (each operation's own rounding, a few units in the last place for the
functions of a vector math library, n epsilons of the magnitudes for a sum
of n terms, and the operands' bounds times the derivatives). A float element
passes when it is within 8 such bounds of NumPy's value; NaN must meet NaN and
an infinity the same infinity; integers and bools are exact.
"""
import argparse
import collections
import os
import random
import re
import sys
import warnings

import numpy as np

# NumPy's mean of an empty slice is NaN, which is the value a program's
# reference should hold; it also warns, through Python's warnings rather than
# the floating-point state that np.errstate silences.
warnings.filterwarnings('ignore', message='Mean of empty slice', category=RuntimeWarning)

FLOATS = ('float32', 'float64')
INTS = ('int32', 'int64')
NUMERIC = FLOATS + INTS
DTYPES = NUMERIC + ('bool',)
CPP = {'float32': 'float', 'float64': 'double', 'int32': 'std::int32_t', 'int64': 'std::int64_t', 'bool': 'bool'}
TOL_BOUNDS = 8.0   # a float passes within this many first-order error bounds
GRAD_EVERY = 8     # every 8th program checks gradients instead (they take the most compiler memory)
HESSIAN_SHARE = 0.3  # the share of gradient programs that also check a second derivative (where it compiles)
MAX_RANK = 4


def promote(a, b):
    return str(np.promote_types(a, b))


def weak(dtype, scalar):
    """NEP 50: a C++ number takes the array's dtype unless it is of a higher kind."""
    if isinstance(scalar, float):
        return dtype if dtype in FLOATS else 'float64'
    return dtype if dtype != 'bool' else 'int64'


def float_of(dtype):
    """The dtype of a float function of `dtype` (true division, exp, ...)."""
    return dtype if dtype in FLOATS else 'float64'


def absf(x):
    return np.abs(x.astype(np.float64))


def clean(s):
    """An error bound: NaN (0 * inf: a derivative of zero met an infinite operand) is 0."""
    s = np.asarray(s, dtype=np.float64)
    return np.where(np.isnan(s), 0.0, s)


def eps(dtype):
    return float(np.finfo(dtype).eps) if dtype in FLOATS else 0.0


def converted(v, err, dtype):
    """v converted to dtype, and the error bound after it: converting an
    integer or a float64 to a narrower float rounds once."""
    out = v.astype(dtype)
    if dtype not in FLOATS:
        return out, None
    err = np.zeros(()) if err is None else err
    if v.dtype.kind in 'iub' or (v.dtype == np.float64 and dtype == 'float32'):
        with np.errstate(all='ignore'):
            err = err + eps(dtype) * absf(out)
    return out, clean(err)


def cpp_number(v, dtype):
    if dtype in FLOATS or isinstance(v, float):
        return repr(float(v))
    return str(int(v))


# ---- shapes ---------------------------------------------------------------
# A dim is 1 (broadcastable), another int (a literal length), a symbol ('A'
# fixed for the program, 'a' chosen per call) or a tuple naming how it was
# derived. The generator only combines dims that are equal or 1; NumPy decides
# at every call what the shapes really are.

def broadcast(sa, sb):
    n = max(len(sa), len(sb))
    a = (1,) * (n - len(sa)) + tuple(sa)
    b = (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


# ---- random streams: fusor's Philox4x32-10 and its keys, in NumPy ------------
RANDOM_SEED = 20261127
M64 = (1 << 64) - 1


def draw_key(seed, draw):
    """The key of draw `draw` of a stream of seed `seed` (SplitMix64's finaliser)."""
    z = (seed + 0x9E3779B97F4A7C15 * (draw + 1)) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def philox(key, call, n):
    """The four 32-bit words of elements 0..n-1 (counter (i, call), 64 bits each)."""
    m32 = np.uint64(0xFFFFFFFF)
    i = np.arange(n, dtype=np.uint64)
    c = [i & m32, i >> np.uint64(32), np.full(n, call & 0xFFFFFFFF, np.uint64), np.full(n, call >> 32, np.uint64)]
    k0, k1 = key & 0xFFFFFFFF, key >> 32
    for rnd in range(10):
        if rnd > 0:
            k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & m32, (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1),
             p0 & m32]
    return c


def unit_double(hi, lo):
    """A double in [0, 1) from 53 bits of two words (exact in NumPy too)."""
    return (((hi << np.uint64(32)) | lo) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


class Node:
    def __init__(self, dtype, shape, cpp, ev, kind, exact_order=False):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.cpp = cpp          # the C++ expression, over earlier nodes' names
        self.ev = ev            # ev(ctx) -> (value, scale)
        self.kind = kind
        # Its values do not depend on the order of rounding: integers, bools, and
        # floats moved or converted exactly. Only such nodes feed comparisons,
        # argmax and float-to-integer casts (a computed float one ulp off could
        # flip them, and that is no bug).
        self.exact_order = exact_order or dtype not in FLOATS
        self.name = None

    @property
    def rank(self):
        return len(self.shape)


class Context:
    """One call's values: the inputs, the shared variables, evaluated nodes."""

    def __init__(self, inputs, variables, rng, var_errs=None):
        self.inputs = inputs
        self.vars = variables
        self.var_errs = var_errs or {}
        self.input_errs = {}
        self.memo = {}
        self.rng = rng
        self.bad_index = False

    def __call__(self, node):
        key = id(node)
        if key not in self.memo:
            self.memo[key] = node.ev(self)
        return self.memo[key]


def random_values(rng, dtype, shape, specials):
    """Values with NaN, infinities, signed zeros and the integer extremes mixed in."""
    n = int(np.prod(shape)) if shape else 1
    if dtype == 'bool':
        return (rng.random(shape) < 0.5)
    if dtype in FLOATS:
        v = rng.normal(0.0, 2.0, n)
        big = rng.random(n) < 0.05
        v[big] *= 300.0
        if specials:
            pick = rng.random(n) < 0.08
            v[pick] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], pick.sum())
        return v.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    v = rng.integers(-20, 21, n).astype(dtype)
    if specials:
        pick = rng.random(n) < 0.05
        v[pick] = rng.choice(np.array([info.min, info.max, info.min + 1, -1, 0], dtype=dtype), pick.sum())
    return v.reshape(shape)


class Program:
    def __init__(self, rng, index):
        self.r = random.Random(int(rng.integers(1 << 62)))
        self.rng = rng
        self.index = index
        self.nodes = []
        self.inputs = []      # (node, name, dtype, shape, broadcastable, index_of)
        self.vars = []        # (node, name, dtype, shape)
        self.fixed = {}
        self.free = []
        self.counter = 0

    # ---- helpers --------------------------------------------------------
    def add(self, node):
        node.name = 'e%d' % self.counter
        self.counter += 1
        self.nodes.append(node)
        return node

    def pick(self, pred, recent=True):
        c = [n for n in self.nodes if pred(n)]
        if not c:
            return None
        if recent and len(c) > 3 and self.r.random() < 0.6:
            c = c[len(c) // 2:]
        return self.r.choice(c)

    # ---- leaves ---------------------------------------------------------
    def make_leaves(self):
        r = self.r
        for s in 'AB':
            self.fixed[s] = r.choice([1, 2, 3, 4, 5, 7, 9, 17])
        self.free = ['a', 'b']
        symbols = list(self.fixed) + self.free
        for j in range(r.choice([0, 1, 1, 2, 2, 3])):
            dtype = r.choice(('float64', 'float64', 'float32', 'float32', 'int32', 'int64', 'bool'))
            shape = tuple(r.choice('AB') for _ in range(r.choice([1, 1, 2, 2, 3])))
            name = 'v%d' % j
            # A variable's value carries the error bound of the update that wrote it.
            # (A float variable is not "exact": an update may have left it rounded.)
            node = Node(dtype, shape, name, lambda ctx, name=name: (ctx.vars[name], ctx.var_errs.get(name)), 'var',
                        dtype not in FLOATS)
            node.name = name
            self.nodes.append(node)
            self.vars.append((node, name, dtype, shape))
        for j in range(r.choice([1, 1, 2, 2, 3])):
            dtype = r.choice(('float64', 'float64', 'float32', 'float32', 'int32', 'int64', 'bool'))
            rank = r.choice([0] + [1, 1, 2, 2, 3] * 2)  # rank 0: a scalar input
            shape = tuple(1 if r.random() < 0.15 else r.choice(symbols) for _ in range(rank))
            name = 'x%d' % j
            node = Node(dtype, shape, name, lambda ctx, name=name: self.input_value(ctx, name), 'input', True)
            node.name = name
            self.nodes.append(node)
            self.inputs.append({'node': node, 'name': name, 'dtype': dtype, 'shape': shape,
                                'broadcastable': [d == 1 for d in shape], 'index_for': None})

    @staticmethod
    def input_value(ctx, name):
        v = ctx.inputs[name]
        err = ctx.input_errs.get(name)  # a given's replacement carries its own
        if v.dtype.kind != 'f':
            return v, None
        return v, (np.zeros(v.shape) if err is None else err)

    # ---- operations -----------------------------------------------------
    def op_arith(self):
        r = self.r
        a = self.pick(lambda n: n.dtype in NUMERIC)
        if a is None:
            return None
        op = r.choice(['+', '-', '*', '*', '/', '%', 'pow', 'maximum', 'minimum', 'fmax', 'fmin'])
        if op == '%' and a.dtype not in INTS:
            op = '+'
        if op in ('fmax', 'fmin') and a.dtype not in FLOATS:
            op = 'maximum'
        use_scalar = r.random() < 0.35
        if use_scalar:
            if a.dtype in INTS and op not in ('/',) and r.random() < 0.7:
                s = r.choice([2, 3, -1, 5, 0] if op != '%' else [2, 3, -4, 0])
            else:
                s = r.choice([0.5, 2.0, -1.5, 3.0, 0.0, 1e-3])
            if op == '%' and isinstance(s, float):
                s = 3
            if op == 'pow':
                s = r.choice([2, 3]) if a.dtype in INTS else r.choice([2.0, 0.5, 3.0, -1.0])
            dt = weak(a.dtype, s)
            left = r.random() < 0.7 or op in ('pow',)
            return self.binary(op, a, None, s, left, dt)
        b = self.pick(lambda n: n.dtype in NUMERIC and broadcast(n.shape, a.shape) is not None
                      and max(n.rank, a.rank) <= MAX_RANK and (op != '%' or n.dtype in INTS)
                      and (op not in ('fmax', 'fmin') or n.dtype in FLOATS))
        if b is None:
            return None
        if op == 'pow' and (a.dtype in INTS) != (b.dtype in INTS):
            return None
        return self.binary(op, a, b, None, True, promote(a.dtype, b.dtype))

    def binary(self, op, a, b, s, scalar_right, dt):
        shape = a.shape if b is None else broadcast(a.shape, b.shape)
        out = dt
        if op == '/':
            out = float_of(dt)
        if op == 'pow' and b is not None and dt in INTS:
            bexpr = '(%s %% 5)' % b.name
        else:
            bexpr = None

        def spell():
            x = a.name
            y = b.name if b is not None else cpp_number(s, dt)
            if b is not None and bexpr:
                y = bexpr
            if b is None and not scalar_right:
                x, y = y, x
            if op in ('+', '-', '*', '/', '%'):
                return '(%s %s %s)' % (x, op, y)
            return 'fusor::%s(%s, %s)' % (op, x, y)

        def ev(ctx):
            av, asc = ctx(a)
            if b is not None:
                bv, bsc = ctx(b)
            else:
                bv, bsc = np.array(s, dtype=dt), np.zeros(())
            cdt = out if op == '/' else dt
            (x, asc), (y, bsc) = converted(av, asc, cdt), converted(bv, bsc, cdt)
            if b is not None and bexpr:
                y = np.mod(y, np.array(5, dtype=cdt))
            if b is None and not scalar_right:
                x, y = y, x
                asc, bsc = bsc, asc
            sa = asc if asc is not None else np.zeros(())
            sb = bsc if bsc is not None else np.zeros(())
            with np.errstate(all='ignore'):
                if op == '+':
                    v = x + y
                elif op == '-':
                    v = x - y
                elif op == '*':
                    v = x * y
                elif op == '/':
                    v = np.true_divide(x, y)
                elif op == '%':
                    v = np.mod(x, y)
                elif op == 'pow':
                    v = np.power(x, y)
                else:
                    v = getattr(np, op)(x, y)
                if out in INTS:
                    return v.astype(out), None
                fv, fx, fy = v.astype(np.float64), x.astype(np.float64), y.astype(np.float64)
                e = eps(out) * np.abs(fv)
                if op in ('+', '-'):
                    sc = sa + sb + e
                elif op == '*':
                    sc = clean(sa * np.abs(fy)) + clean(np.abs(fx) * sb) + e
                elif op == '/':
                    sc = clean((sa + clean(np.abs(fv) * sb)) / np.abs(fy)) + e
                elif op == 'pow':
                    sc = clean(np.abs(fy * np.power(fx, fy - 1)) * sa) + clean(np.abs(fv * np.log(np.abs(fx))) * sb) + 2 * e
                    # A negative base is defined at integer exponents only: where the
                    # exponent is inexact, NumPy's -1 ** -1 may be fusor's NaN (tanh(-19)
                    # one ulp above -1, on the emulated device; seed 200042): undecided.
                    sc = np.where((fx < 0) & (np.asarray(sb) > 0), np.inf, sc)
                else:
                    # The bound of the side chosen (np.where broadcasts; `sa + 0 * sb` made an
                    # infinite bound on the other side NaN, which clean() turns into 0).
                    sc = np.where(fv == fx, sa, sb)
                return v.astype(out), clean(sc)

        return self.add(Node(out, shape, spell(), ev, 'binary'))

    def op_compare(self):
        a = self.pick(lambda n: n.dtype in NUMERIC and n.exact_order)
        if a is None:
            return None
        op = self.r.choice(['<', '<=', '>', '>=', '==', '!='])
        if self.r.random() < 0.5:
            s = 0 if a.dtype in INTS else self.r.choice([0.0, 0.5, -1.0])
            dt = weak(a.dtype, s)
            cpp = '(%s %s %s)' % (a.name, op, cpp_number(s, dt))
            b = None
        else:
            b = self.pick(lambda n: n.dtype in NUMERIC and broadcast(n.shape, a.shape) is not None
                          and max(n.rank, a.rank) <= MAX_RANK and n.exact_order)
            if b is None:
                return None
            dt = promote(a.dtype, b.dtype)
            cpp = '(%s %s %s)' % (a.name, op, b.name)
        shape = a.shape if b is None else broadcast(a.shape, b.shape)
        fn = {'<': np.less, '<=': np.less_equal, '>': np.greater, '>=': np.greater_equal, '==': np.equal,
              '!=': np.not_equal}[op]

        def ev(ctx):
            x = ctx(a)[0].astype(dt)
            y = ctx(b)[0].astype(dt) if b is not None else np.array(s, dtype=dt)
            return fn(x, y), None
        return self.add(Node('bool', shape, cpp, ev, 'compare', True))

    def op_logical(self):
        a = self.pick(lambda n: n.dtype == 'bool')
        if a is None:
            return None
        op = self.r.choice(['and', 'or', 'not'])
        if op == 'not':
            return self.add(Node('bool', a.shape, 'fusor::logical_not(%s)' % a.name,
                                 lambda ctx: (np.logical_not(ctx(a)[0]), None), 'logical', True))
        b = self.pick(lambda n: n.dtype == 'bool' and broadcast(n.shape, a.shape) is not None
                      and max(n.rank, a.rank) <= MAX_RANK)
        if b is None:
            return None
        fn = np.logical_and if op == 'and' else np.logical_or
        return self.add(Node('bool', broadcast(a.shape, b.shape), 'fusor::logical_%s(%s, %s)' % (op, a.name, b.name),
                             lambda ctx: (fn(ctx(a)[0], ctx(b)[0]), None), 'logical', True))

    def op_where(self):
        c = self.pick(lambda n: n.dtype == 'bool')
        if c is None:
            return None
        a = self.pick(lambda n: broadcast(n.shape, c.shape) is not None)
        if a is None:
            return None
        b = self.pick(lambda n: broadcast(n.shape, broadcast(a.shape, c.shape)) is not None
                      and (n.dtype == 'bool') == (a.dtype == 'bool'))
        if b is None:
            return None
        shape = broadcast(broadcast(a.shape, c.shape), b.shape)
        if len(shape) > MAX_RANK:
            return None
        dt = promote(a.dtype, b.dtype)

        def ev(ctx):
            cv = ctx(c)[0]
            av, asc = ctx(a)
            bv, bsc = ctx(b)
            (x, sa), (y, sb) = converted(av, asc, dt), converted(bv, bsc, dt)
            v = np.where(cv, x, y)
            if dt not in FLOATS:
                return v, None
            return v, clean(np.broadcast_to(np.where(cv, sa, sb), v.shape))
        return self.add(Node(dt, shape, 'fusor::where(%s, %s, %s)' % (c.name, a.name, b.name), ev, 'where',
                             a.exact_order and b.exact_order))

    def op_unary(self):
        a = self.pick(lambda n: n.dtype in NUMERIC)
        if a is None:
            return None
        op = self.r.choice(['neg', 'abs', 'exp', 'expm1', 'log', 'log1p', 'sqrt', 'sin', 'cos', 'tan', 'tanh',
                            'sigmoid', 'softplus', 'clip'])
        if op in ('neg', 'abs', 'clip'):
            dt = a.dtype
            if op == 'clip':
                if dt in INTS:
                    lo, hi = sorted(self.r.sample([-5, -1, 0, 2, 7], 2))
                else:
                    lo, hi = sorted(self.r.sample([-1.5, -0.5, 0.0, 1.0, 2.5], 2))
                cpp = 'fusor::clip(%s, %s, %s)' % (a.name, cpp_number(lo, dt), cpp_number(hi, dt))
            else:
                cpp = '(-%s)' % a.name if op == 'neg' else 'fusor::abs(%s)' % a.name

            def ev(ctx):
                v, sc = ctx(a)
                with np.errstate(all='ignore'):
                    if op == 'neg':
                        out = -v
                    elif op == 'abs':
                        out = np.abs(v)
                    else:
                        out = np.clip(v, np.array(lo, dtype=dt), np.array(hi, dtype=dt))
                if sc is None:
                    return out, None
                if op == 'clip':
                    sc = np.where((v > lo) & (v < hi), sc, 0.0)
                return out, sc
            return self.add(Node(dt, a.shape, cpp, ev, op, a.exact_order))
        dt = float_of(a.dtype)

        def ev(ctx):
            v, sc = ctx(a)
            x, sc = converted(v, sc, dt)
            with np.errstate(all='ignore'):
                if op == 'sigmoid':
                    out = (1 / (1 + np.exp(-x))).astype(dt)
                elif op == 'softplus':
                    out = np.logaddexp(np.array(0, dtype=dt), x)
                else:
                    out = getattr(np, op)(x)
                fx = x.astype(np.float64)
                fo = out.astype(np.float64)
                d = {'exp': np.abs(fo), 'expm1': np.abs(fo) + 1, 'log': 1 / np.abs(fx), 'log1p': 1 / np.abs(1 + fx),
                     'sqrt': 0.5 / np.abs(fo), 'sin': np.ones_like(fx), 'cos': np.ones_like(fx),
                     'tan': 1 + fo * fo, 'tanh': np.ones_like(fx), 'sigmoid': 0.25 * np.ones_like(fx),
                     'softplus': np.ones_like(fx)}[op]
                s = clean(clean(d * sc) + 4 * eps(dt) * np.abs(fo))
                # Where the operand's bound reaches the edge of the domain, NaN
                # or not is undecided: no bound (any answer passes here).
                edge = {'log': 0.0, 'sqrt': 0.0, 'log1p': -1.0}.get(op)
                if edge is not None:
                    s = np.where(np.abs(fx - edge) <= TOL_BOUNDS * sc, np.inf, s)
            return out, s
        return self.add(Node(dt, a.shape, 'fusor::%s(%s)' % (op, a.name), ev, op))

    def op_cast(self):
        a = self.pick(lambda n: True)
        dt = self.r.choice(DTYPES)
        if dt == a.dtype or (dt not in FLOATS and not a.exact_order):
            return None

        def ev(ctx):
            v, sc = ctx(a)
            with np.errstate(all='ignore'):
                return converted(v, sc, dt)
        return self.add(Node(dt, a.shape, 'fusor::cast<%s>(%s)' % (CPP[dt], a.name), ev, 'cast',
                             a.exact_order and (dt not in FLOATS or a.dtype not in FLOATS or dt == 'float64')))

    def op_reduce(self):
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return None
        r = self.r
        op = r.choice(['sum', 'sum', 'mean', 'prod', 'max', 'min', 'argmax', 'argmin', 'nansum', 'nanmean',
                       'nanmax', 'nanmin'])
        if op.startswith('nan') and a.dtype not in FLOATS:
            op = op[3:]
        if op in ('argmax', 'argmin') and not a.exact_order:
            op = 'max'
        if a.dtype == 'bool' and op not in ('sum', 'max', 'min', 'mean'):
            op = 'sum'
        form = r.choice(['all', 'axis', 'axis', 'axis_keep', 'axes'])
        if op in ('argmax', 'argmin') and form in ('axis_keep', 'axes'):
            form = 'axis'
        if form == 'axes' and a.rank < 2:
            form = 'axis'
        if form == 'all':
            axes, keep, cpp_args, shape = None, False, '', ()
        elif form in ('axis', 'axis_keep'):
            ax = r.randrange(-a.rank, a.rank)
            keep = form == 'axis_keep'
            axes = ax
            cpp_args = ', %d' % ax + (', fusor::keepdims' if keep else '')
            pos = ax % a.rank
            shape = tuple(1 if i == pos else d for i, d in enumerate(a.shape)) if keep else \
                tuple(d for i, d in enumerate(a.shape) if i != pos)
        else:
            k = r.randrange(2, a.rank + 1) if a.rank > 2 else 2
            picked = sorted(r.sample(range(a.rank), k))
            axes = tuple(picked)
            keep = False
            cpp_args = ', {%s}' % ', '.join(str(x) for x in picked)
            shape = tuple(d for i, d in enumerate(a.shape) if i not in picked)
        if op in ('argmax', 'argmin'):
            dt = 'int64'
        elif op in ('sum', 'prod', 'nansum') and a.dtype in INTS + ('bool',):
            dt = 'int64'
        elif op in ('mean', 'nanmean') and a.dtype not in FLOATS:
            dt = 'float64'
        else:
            dt = a.dtype
        cpp = 'fusor::%s(%s%s)' % (op, a.name, cpp_args)

        def ev(ctx):
            v, sc = ctx(a)
            kw = {'axis': axes}
            if op not in ('argmax', 'argmin'):
                kw['keepdims'] = keep
            with np.errstate(all='ignore'):
                if op in ('sum', 'prod', 'nansum') and dt == 'int64':
                    out = getattr(np, op)(v, dtype=np.int64, **kw)
                elif op in ('mean', 'nanmean') and dt == 'float64' and v.dtype != np.float64:
                    out = getattr(np, op)(v, dtype=np.float64, **kw)
                else:
                    out = getattr(np, op)(v, **kw)
            out = np.asarray(out).astype(dt)
            if dt not in FLOATS:
                return out, None
            x, s0 = converted(v, sc, dt)
            s0 = np.broadcast_to(s0, x.shape)
            n = x.size // max(out.size, 1) if x.size else 0
            fo = np.abs(out.astype(np.float64))
            e = eps(dt)
            with np.errstate(all='ignore'):
                mag = np.where(np.isnan(x), 0, absf(x))
                if op in ('sum', 'nansum', 'mean', 'nanmean'):
                    s = np.sum(clean(s0), axis=axes, keepdims=keep) + e * (1 + n / 8) * np.sum(mag, axis=axes,
                                                                                               keepdims=keep)
                    if op in ('mean', 'nanmean'):
                        s = s / max(n, 1) + e * fo
                elif op == 'prod':
                    rel = np.where(mag > 0, s0 / mag, 0)
                    s = fo * (np.sum(rel, axis=axes, keepdims=keep) + e * (n + 1))
                    # Where the finite factors' partial products can leave the normal range in
                    # some order (exp of arguments far apart: some factors 1e264, some 1e-300),
                    # the product depends on the order of its multiplications, and so may its
                    # zeros' and infinities' meeting: NumPy's product, one factor after the
                    # other, came to 0 where a vector loop's lanes, multiplied together, made
                    # inf * 0 = NaN (seed 420033; the exact product was 5e-19). Undecided there.
                    logs = np.log(np.where(np.isfinite(mag) & (mag > 0), mag, 1.0))  # NaN's mag is 0
                    up = np.sum(np.maximum(logs, 0), axis=axes, keepdims=keep)
                    down = np.sum(np.minimum(logs, 0), axis=axes, keepdims=keep)
                    info = np.finfo(dt)
                    s = np.where((up >= np.log(float(info.max))) | (down <= np.log(float(info.tiny))), np.inf, s)
                else:
                    s = np.max(s0, axis=axes, keepdims=keep) if s0.size else np.zeros(out.shape)
            return out, clean(np.broadcast_to(s, out.shape))
        return self.add(Node(dt, shape, cpp, ev, 'reduce', op in ('argmax', 'argmin', 'max', 'min') or dt in INTS))

    def op_dot(self):
        a = self.pick(lambda n: n.rank in (1, 2) and n.dtype in NUMERIC)
        if a is None:
            return None
        k = a.shape[-1]
        b = self.pick(lambda n: n.rank in (1, 2) and n.dtype in NUMERIC and n.shape[0] == k and k != 1
                      and (n.dtype in FLOATS) == (a.dtype in FLOATS))
        if b is None:
            if a.rank == 2 and self.r.random() < 0.5:
                return self.add_transpose(a)
            return None
        dt = promote(a.dtype, b.dtype)
        shape = a.shape[:-1] + b.shape[1:]

        def ev(ctx):
            av, asc = ctx(a)
            bv, bsc = ctx(b)
            (x, sa), (y, sb) = converted(av, asc, dt), converted(bv, bsc, dt)
            with np.errstate(all='ignore'):
                out = np.dot(x, y)
                out = np.asarray(out).astype(dt)
                if dt not in FLOATS:
                    return out, None
                n = x.shape[-1]
                sa, sb = np.broadcast_to(sa, x.shape), np.broadcast_to(sb, y.shape)
                s = clean(np.dot(clean(sa), absf(y))) + clean(np.dot(absf(x), clean(sb))) + \
                    eps(dt) * (1 + n / 8) * np.dot(absf(x), absf(y))
            return out, clean(s)
        return self.add(Node(dt, shape, 'fusor::dot(%s, %s)' % (a.name, b.name), ev, 'dot'))

    def add_transpose(self, a):
        if a.rank < 2:
            return None
        if self.r.random() < 0.5 or a.rank == 2:
            perm = list(range(a.rank))[::-1]
            cpp = 'fusor::transpose(%s)' % a.name
        else:
            perm = list(range(a.rank))
            self.r.shuffle(perm)
            cpp = 'fusor::transpose(%s, {%s})' % (a.name, ', '.join(map(str, perm)))
        shape = tuple(a.shape[p] for p in perm)
        return self.add(Node(a.dtype, shape, cpp, lambda ctx: self.mapped(ctx(a), lambda x: np.transpose(x, perm)),
                             'transpose', a.exact_order))

    @staticmethod
    def mapped(vs, fn):
        v, s = vs
        return fn(v), (fn(s) if s is not None else None)

    def op_view(self):
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return None
        r = self.r
        kind = r.choice(['view', 'view', 'view', 'flip', 'transpose', 'diagonal'])
        if kind == 'transpose':
            return self.add_transpose(a)
        if kind == 'flip':
            if r.random() < 0.5:
                ax = r.randrange(-a.rank, a.rank)
                return self.add(Node(a.dtype, a.shape, 'fusor::flip(%s, %d)' % (a.name, ax),
                                     lambda ctx: self.mapped(ctx(a), lambda x: np.flip(x, ax)), 'flip', a.exact_order))
            return self.add(Node(a.dtype, a.shape, 'fusor::flip(%s)' % a.name,
                                 lambda ctx: self.mapped(ctx(a), np.flip), 'flip', a.exact_order))
        if kind == 'diagonal':
            if a.rank < 2:
                return None
            off = r.choice([0, 0, 1, -1])
            a1, a2 = r.sample(range(a.rank), 2)
            rest = tuple(d for i, d in enumerate(a.shape) if i not in (a1, a2))
            shape = rest + (('diag', a.shape[a1], a.shape[a2], off),)
            return self.add(Node(a.dtype, shape, 'fusor::diagonal(%s, %d, %d, %d)' % (a.name, off, a1, a2),
                                 lambda ctx: self.mapped(ctx(a), lambda x: np.diagonal(x, off, a1, a2).copy()),
                                 'diagonal', a.exact_order))
        items, cpp_items, shape = self.view_items(a, allow_newaxis=True)
        if items is None:
            return None
        return self.add(Node(a.dtype, shape, 'fusor::view(%s, %s)' % (a.name, ', '.join(cpp_items)),
                             lambda ctx: self.mapped(ctx(a), lambda x: x[tuple(items)]), 'view', a.exact_order))

    def view_items(self, a, allow_newaxis):
        r = self.r
        items, cpp, shape = [], [], []
        for d in a.shape:
            if allow_newaxis and r.random() < 0.15 and len(shape) < MAX_RANK:
                items.append(None)
                cpp.append('fusor::newaxis')
                shape.append(1)
            c = r.random()
            if c < 0.3:
                items.append(slice(None))
                cpp.append('fusor::all')
                shape.append(d)
            elif c < 0.45 and (len(a.shape) > 1 or allow_newaxis):
                i = r.choice([0, -1, 1])
                items.append(i)
                cpp.append(str(i))
            else:
                start = r.choice([None, None, 0, 1, -1, 2, -2])
                stop = r.choice([None, None, -1, 1, 3, -2])
                step = r.choice([None, 1, 2, -1, -1, -2, 3])
                items.append(slice(start, stop, step))

                def b(x):
                    return 'fusor::_' if x is None else str(x)
                cpp.append('fusor::range(%s, %s%s)' % (b(start), b(stop), '' if step is None else ', %d' % step))
                shape.append(('slice', d, start, stop, step))
        if len(shape) > MAX_RANK:
            return None, None, None
        return items, cpp, tuple(shape)

    def op_take(self):
        a = self.pick(lambda n: n.rank >= 1 and n.rank <= 3)
        if a is None:
            return None
        ax = self.r.randrange(-a.rank, a.rank)
        dt = self.r.choice(INTS)
        sym = self.r.choice(['a', 'b', 'A', 2])
        name = 'x%d' % len(self.inputs)
        idx = Node(dt, (sym,), name, None, 'input', True)
        idx.name = name
        info = {'node': idx, 'name': name, 'dtype': dt, 'shape': (sym,), 'broadcastable': [False],
                'index_for': None}
        self.inputs.append(info)
        pos = ax % a.rank
        shape = a.shape[:pos] + (sym,) + a.shape[pos + 1:]

        def index_values(ctx, n):
            if name not in ctx.inputs:
                m = ctx.sizes[sym] if isinstance(sym, str) else sym
                if n == 0:
                    v = ctx.rng.integers(-3, 3, m)
                else:
                    v = ctx.rng.integers(-n, n, m)
                    if m and ctx.rng.random() < 0.05:
                        v[ctx.rng.integers(0, m)] = ctx.rng.choice([n, -n - 1])
                ctx.inputs[name] = v.astype(dt)
            return ctx.inputs[name]
        info['index_for'] = index_values
        idx.ev = lambda ctx: (ctx.inputs[name], None)

        def ev(ctx):
            v, s = ctx(a)
            iv = index_values(ctx, v.shape[pos])
            return np.take(v, iv, axis=pos), (np.take(s, iv, axis=pos) if s is not None else None)
        return self.add(Node(a.dtype, shape, 'fusor::take(%s, %s, %d)' % (a.name, name, ax), ev, 'take', a.exact_order))

    def op_join(self):
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return None
        r = self.r
        kind = r.choice(['concatenate', 'stack', 'roll', 'pad', 'pad_edge'])
        if kind in ('concatenate', 'stack'):
            b = self.pick(lambda n: n.shape == a.shape and n.dtype == a.dtype)  # (the parts must share a dtype)
            if b is None:
                b = a
            dt = promote(a.dtype, b.dtype)
            if kind == 'concatenate':
                ax = r.randrange(-a.rank, a.rank)
                pos = ax % a.rank
                shape = a.shape[:pos] + (('cat', a.shape[pos], b.shape[pos]),) + a.shape[pos + 1:]
                fn = lambda x, y: np.concatenate((x, y), ax)
            else:
                if a.rank >= MAX_RANK:
                    return None
                ax = r.randrange(-a.rank - 1, a.rank + 1)
                pos = ax % (a.rank + 1)
                shape = a.shape[:pos] + (2,) + a.shape[pos:]
                fn = lambda x, y: np.stack((x, y), ax)

            def ev(ctx):
                av, asc = ctx(a)
                bv, bsc = ctx(b)
                (x, za), (y, zb) = converted(av, asc, dt), converted(bv, bsc, dt)
                v = fn(x, y)
                if dt not in FLOATS:
                    return v, None
                return v, fn(np.broadcast_to(za, av.shape), np.broadcast_to(zb, bv.shape))
            return self.add(Node(dt, shape, 'fusor::%s(std::tuple(%s, %s), %d)' % (kind, a.name, b.name, ax), ev,
                                 kind, a.exact_order and b.exact_order))
        if kind == 'roll':
            shift, ax = r.choice([1, -1, 2, 5, -7]), r.randrange(-a.rank, a.rank)
            return self.add(Node(a.dtype, a.shape, 'fusor::roll(%s, %d, %d)' % (a.name, shift, ax),
                                 lambda ctx: self.mapped(ctx(a), lambda x: np.roll(x, shift, ax)), 'roll',
                                 a.exact_order))
        widths = [(r.choice([0, 1, 2]), r.choice([0, 1])) for _ in range(a.rank)]
        shape = tuple(('pad', d, w) for d, w in zip(a.shape, widths))
        wcpp = '{%s}' % ', '.join('{%d, %d}' % w for w in widths)
        if kind == 'pad_edge':
            return self.add(Node(a.dtype, shape, 'fusor::pad(%s, %s, fusor::edge)' % (a.name, wcpp),
                                 lambda ctx: self.mapped(ctx(a), lambda x: np.pad(x, widths, mode='edge')), 'pad',
                                 a.exact_order))
        val = {'bool': True}.get(a.dtype, 3 if a.dtype in INTS else 1.5)
        vcpp = 'true' if a.dtype == 'bool' else cpp_number(val, a.dtype)

        def ev(ctx):
            v, s = ctx(a)
            out = np.pad(v, widths, constant_values=np.array(val, dtype=a.dtype))
            return out, (np.pad(np.broadcast_to(s, v.shape), widths) if s is not None else None)
        return self.add(Node(a.dtype, shape, 'fusor::pad(%s, %s, %s)' % (a.name, wcpp, vcpp), ev, 'pad',
                             a.exact_order))

    def op_like(self):
        a = self.pick(lambda n: True)
        kind = self.r.choice(['zeros_like', 'ones_like', 'full_like'])
        if kind == 'full_like':
            val = True if a.dtype == 'bool' else (-2 if a.dtype in INTS else 0.25)
            vcpp = 'true' if a.dtype == 'bool' else cpp_number(val, a.dtype)
            cpp = 'fusor::full_like(%s, %s)' % (a.name, vcpp)
        else:
            val = 0 if kind == 'zeros_like' else 1
            cpp = 'fusor::%s(%s)' % (kind, a.name)

        def ev(ctx):
            v = np.full(ctx(a)[0].shape, val, dtype=a.dtype)
            return v, (np.zeros(v.shape) if a.dtype in FLOATS else None)
        return self.add(Node(a.dtype, a.shape, cpp, ev, kind, True))

    # ---- constructors and random draws ----------------------------------
    def literal(self, sym):
        """A fixed symbol as a constructor's extent: a literal 1 is broadcastable
        in fusor's static type (an update of a variable whose extent is 1 there
        would change its type, R55), so the generator treats it as a 1."""
        return 1 if self.fixed[sym] == 1 else sym

    def const_shape(self, rank):
        """A literal shape over the program's fixed symbols (and broadcastable
        1s): the generator's shape, its C++ spelling, and its extents."""
        r = self.r
        shape = tuple(1 if r.random() < 0.15 else self.literal(r.choice('AB')) for _ in range(rank))
        dims = tuple(1 if d == 1 else self.fixed[d] for d in shape)
        return shape, '{%s}' % ', '.join(map(str, dims)), dims

    def op_ctor(self):
        r = self.r
        kind = r.choice(['arange', 'arange', 'linspace', 'eye', 'full', 'zeros', 'ones'])
        if kind == 'arange':
            dtype = r.choice(NUMERIC)
            sym = r.choice('AB')
            n = self.fixed[sym]
            start = r.choice([-3, 0, 2, 7])
            step = r.choice([1, 2, -1, -3] + ([0.5, -0.25] if dtype in FLOATS else []))
            stop = start + n * step
            cpp = 'fusor::arange<%s>(%s, %s, %s)' % (CPP[dtype], start, stop, step)
            ev_value = lambda: np.arange(start, stop, step, dtype=dtype)
            shape = (self.literal(sym),)
        elif kind == 'linspace':
            # computed in double and rounded (NumPy and fusor may differ by an
            # ulp): floats only, so that no truncation to an integer can flip
            dtype = r.choice(FLOATS)
            sym = r.choice('AB')
            n = self.fixed[sym]
            start, stop = r.choice([(0.0, 1.0), (-2.5, 3.0), (10.0, -1.0), (0.1, 0.7)])
            cpp = 'fusor::linspace<%s>(%r, %r, %d)' % (CPP[dtype], start, stop, n)
            shape = (self.literal(sym),)

            def ev(ctx):
                v = np.linspace(start, stop, n).astype(dtype)
                return v, np.full(v.shape, 4 * eps(dtype) * max(abs(start), abs(stop)))
            return self.add(Node(dtype, shape, cpp, ev, 'linspace'))
        elif kind == 'eye':
            dtype = r.choice(DTYPES)
            rows, cols = r.choice('AB'), r.choice('AB')
            k = r.choice([0, 0, 1, -1, 2, -3])
            cpp = 'fusor::eye<%s>(%d, %d, %d)' % (CPP[dtype], self.fixed[rows], self.fixed[cols], k)
            ev_value = lambda: np.eye(self.fixed[rows], self.fixed[cols], k, dtype=dtype)
            shape = (self.literal(rows), self.literal(cols))
        else:
            dtype = r.choice(DTYPES)
            shape, lit, dims = self.const_shape(r.choice([1, 2, 2, 3]))
            if kind == 'full':
                val = True if dtype == 'bool' else (-7 if dtype in INTS else -1.75)
                vcpp = 'true' if dtype == 'bool' else cpp_number(val, dtype)
                cpp = 'fusor::full<%s>(%s, %s)' % (CPP[dtype], lit, vcpp)
            else:
                val = 0 if kind == 'zeros' else 1
                cpp = 'fusor::%s<%s>(%s)' % (kind, CPP[dtype], lit)
            ev_value = lambda: np.full(dims, val, dtype=dtype)

        def ev(ctx):
            v = ev_value()
            return v, (np.zeros(v.shape) if dtype in FLOATS else None)
        return self.add(Node(dtype, shape, cpp, ev, kind, True))

    def op_random(self):
        """A draw of the program's random stream: element i is Philox(key of
        the draw, (i, call counter)); the twin computes the same bits."""
        r = self.r
        kind = r.choice(['uniform', 'uniform', 'normal', 'bernoulli'])
        shape, lit, dims = self.const_shape(r.choice([1, 1, 2, 2, 3]))
        if kind == 'bernoulli':
            dtype = 'bool'
            p = r.choice([0.0, 0.3, 0.5, 0.9, 1.0])
            cpp = 'rng.bernoulli(%r, %s)' % (p, lit)
        else:
            dtype = r.choice(FLOATS)
            a, b = r.choice([(-1.0, 1.0), (0.0, 1.0), (-2.5, 0.5), (2.0, 6.0)] if kind == 'uniform' else
                            [(0.0, 1.0), (1.5, 0.5), (-2.0, 3.0)])
            suffix = 'f' if dtype == 'float32' else ''
            cpp = 'rng.%s<%s>(%s, %r%s, %r%s)' % (kind, CPP[dtype], lit, a, suffix, b, suffix)
        node = None

        def ev(ctx):
            n = int(np.prod(dims))
            w = philox(draw_key(RANDOM_SEED, node.draw), ctx.random_calls, n)
            if kind == 'bernoulli':
                return (unit_double(w[0], w[1]) < p).reshape(dims), None
            if kind == 'uniform':
                if dtype == 'float32':
                    u = (w[0] >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
                else:
                    u = unit_double(w[0], w[1])
                v = a + (b - a) * u
                s = 2 * eps(dtype) * (abs(a) + abs(b - a))  # a product and a sum, maybe fused
            else:
                root = np.sqrt(-2.0 * np.log(1.0 - unit_double(w[0], w[1])))
                z = root * np.cos(6.283185307179586 * unit_double(w[2], w[3]))
                v = a + b * z
                s = abs(b) * 16 * eps('float64') * (root + 1) + eps(dtype) * (np.abs(v) + abs(a))
            s = np.asarray(s, dtype=np.float64)
            return v.astype(dtype).reshape(dims), np.broadcast_to(s.reshape(dims) if s.ndim else s, dims).copy()
        node = self.add(Node(dtype, shape, cpp, ev, 'random'))
        return node

    # ---- the program ----------------------------------------------------
    def build(self):
        r = self.r
        self.make_leaves()
        ops = [self.op_arith] * 6 + [self.op_unary] * 3 + [self.op_compare, self.op_logical, self.op_where,
                                                          self.op_cast, self.op_like, self.op_ctor,
                                                          self.op_random, self.op_random] + \
              [self.op_reduce] * 3 + [self.op_dot, self.op_view, self.op_view, self.op_take, self.op_join]
        target = r.randrange(3, 11)
        tries = 0
        while len([n for n in self.nodes if n.kind not in ('input', 'var')]) < target and tries < 200:
            tries += 1
            r.choice(ops)()
        inner = [n for n in self.nodes if n.kind not in ('input', 'var')]
        pool = inner or self.nodes
        self.outputs = []
        for _ in range(r.choice([1, 1, 2, 3] if self.vars else [1, 2, 3])):
            n = r.choice(pool[len(pool) // 2:] if r.random() < 0.7 else pool + [x['node'] for x in self.inputs
                                                                                  if x['index_for'] is None])
            self.outputs.append((n, r.random() < 0.4))
        if self.vars and r.random() < 0.2:
            self.outputs = []
        self.updates = []
        for vnode, name, dtype, shape in self.vars:
            if r.random() < 0.25:
                continue
            self.make_update(vnode, name, dtype, shape)
        for info in self.inputs:
            info['flag'] = r.choice(['plain', 'In', 'borrow', 'borrow'])

    def make_update(self, vnode, name, dtype, shape):
        r = self.r
        if r.random() < 0.2:
            # A whole swap with another variable of the same type.
            others = [v for v in self.vars if v[1] != name and v[2] == dtype and v[3] == shape
                      and not any(u['var'] == v[1] for u in self.updates)]
            if others and not any(u['var'] == name for u in self.updates):
                o = others[0]
                self.updates.append({'var': name, 'index': None, 'node': o[0], 'cpp': o[1]})
                self.updates.append({'var': o[1], 'index': None, 'node': vnode, 'cpp': name})
                return
        if any(u['var'] == name for u in self.updates):
            return
        fit = lambda n: n.rank <= len(shape) and broadcast(n.shape, shape) == shape and (
            dtype != 'bool' or n.dtype == 'bool')
        if r.random() < 0.25 and len(shape) >= 1:
            # An update of part of the variable (Theano's set_subtensor).
            items, cpp_items, vshape = self.view_items(vnode, allow_newaxis=False)
            if items is None:
                return
            src = self.pick(lambda n: n.rank <= len(vshape) and broadcast(n.shape, vshape) == vshape and
                            (dtype != 'bool' or n.dtype == 'bool'))
            if src is None:
                return
            val = self.cast_to(src, dtype)
            if val is None:
                return
            self.updates.append({'var': name, 'index': items, 'node': val,
                                 'target': 'fusor::view(%s, %s)' % (name, ', '.join(cpp_items)), 'cpp': val.name})
            return
        src = self.pick(lambda n: fit(n) and n is not vnode)
        if src is None or r.random() < 0.3:
            if dtype == 'bool':
                src = self.add(Node('bool', shape, 'fusor::logical_not(%s)' % name,
                                    lambda ctx: (np.logical_not(ctx(vnode)[0]), None), 'logical'))
            else:
                other = self.pick(lambda n: n.dtype in NUMERIC and fit(n))
                if other is None or other is vnode:
                    src = self.binary('*', vnode, None, 0.5 if dtype in FLOATS else 3, True, dtype)
                else:
                    src = self.binary('-', vnode, other, None, True, promote(dtype, other.dtype))
        elif src.shape != shape:
            if dtype == 'bool':
                return
            src = self.binary('+', vnode, src, None, True, promote(dtype, src.dtype)) if src.dtype != 'bool' else \
                self.binary('+', vnode, self.cast_to(src, dtype), None, True, dtype)
        val = self.cast_to(src, dtype)
        if val is None:  # a rounded float into an integer variable: an exact update instead
            val = self.binary('*', vnode, None, 3, True, dtype)
        self.updates.append({'var': name, 'index': None, 'node': val, 'cpp': val.name})

    def cast_to(self, n, dtype):
        """n as dtype; None for a float computed with rounding into an integer
        or bool (one ulp can flip the result: no bug)."""
        if n.dtype == dtype:
            return n
        if dtype not in FLOATS and not n.exact_order:
            return None

        def ev(ctx):
            v, s = ctx(n)
            with np.errstate(all='ignore'):
                return converted(v, s, dtype)
        return self.add(Node(dtype, n.shape, 'fusor::cast<%s>(%s)' % (CPP[dtype], n.name), ev, 'cast'))

    # ---- calls ----------------------------------------------------------
    def calls(self, store, prefix):
        """Plans the calls, runs the twin, stores everything; returns C++ for them."""
        r, rng = self.r, self.rng
        sizes = dict(self.fixed)
        values, errs = {}, {}
        for vnode, name, dtype, shape in self.vars:
            values[name] = random_values(rng, dtype, tuple(sizes[d] for d in shape), r.random() < 0.5)
            errs[name] = np.zeros(values[name].shape) if dtype in FLOATS else None
            store['%s.init.%s' % (prefix, name)] = values[name]
        code = []
        random_calls = 0
        for call in range(r.randrange(6, 21)):
            lines = []
            # Calls go to f, or from the second on, to its copy over a swapped variable.
            use_copy = self.swap is not None and call > 0 and r.random() < 0.5
            if call == 0 or r.random() < 0.4:
                for s in self.free:
                    sizes[s] = r.choice([0, 1, 2, 3, 3, 4, 5, 7, 16, 33]) if r.random() > 0.03 else 0
            # set_value between calls
            if self.vars and call > 0 and r.random() < 0.25:
                vnode, name, dtype, shape = r.choice(self.vars)
                v = random_values(rng, dtype, tuple(sizes[d] for d in shape), True)
                key = 'c%d.set.%s' % (call, name)
                store['%s.%s' % (prefix, key)] = v
                values[name] = v
                errs[name] = np.zeros(v.shape) if dtype in FLOATS else None
                load = 'P.array<%s, %d>("%s")' % (CPP[dtype], len(shape), key)
                if r.random() < 0.5:
                    lines.append('%s.set_value(%s);' % (name, load))
                else:
                    lines.append('{ auto& lent = P.hold(%s); %s.set_value(lent, fusor::borrow); P.check_lent(%s, lent); }'
                                 % (load, name, name))
            args, arg_lines, inputs = [], [], {}
            arg_errs = {}  # an argument that is a variable's buffer holds fusor's values, not NumPy's
            bad = r.random() < 0.06
            for j, info in enumerate(self.inputs):
                a = 'a%d' % j
                if info['index_for'] is not None or info['name'] == self.given_input:
                    continue
                shape = tuple(sizes[d] if isinstance(d, str) else d for d in info['shape'])
                if bad and j == 0 and shape and isinstance(info['shape'][-1], str):
                    shape = shape[:-1] + (shape[-1] + 1,)
                mode = r.choice(['fresh'] * 6 + ['alias', 'var', 'transposed'])
                same = [k for k in range(j) if self.inputs[k]['dtype'] == info['dtype'] and
                        self.inputs[k]['index_for'] is None and inputs['x%d' % k].shape == shape and
                        len(self.inputs[k]['shape']) == len(shape)]
                vars_same = [v for v in self.vars if v[2] == info['dtype'] and
                             tuple(sizes[d] for d in v[3]) == shape]
                if mode == 'alias' and same:
                    k = same[0]
                    inputs[info['name']] = inputs['x%d' % k]
                    if 'x%d' % k in arg_errs:
                        arg_errs[info['name']] = arg_errs['x%d' % k]
                    arg_lines.append('auto& %s = a%d;' % (a, k))
                elif mode == 'var' and vars_same:
                    v = r.choice(vars_same)
                    inputs[info['name']] = values[v[1]]
                    if errs[v[1]] is not None:
                        arg_errs[info['name']] = errs[v[1]]
                    arg_lines.append('auto %s = %s.get_value(fusor::borrow);' % (a, v[1]))
                elif mode == 'transposed' and len(shape) == 2:
                    base = random_values(rng, info['dtype'], shape[::-1], r.random() < 0.5)
                    key = 'c%d.a%d' % (call, j)
                    store['%s.%s' % (prefix, key)] = base
                    inputs[info['name']] = base.T
                    arg_lines.append('auto base%d = P.array<%s, 2>("%s"); P.argument(base%d, false); '
                                     'auto %s = xt::transpose(base%d);' % (j, CPP[info['dtype']], key, j, a, j))
                else:
                    v = random_values(rng, info['dtype'], shape, r.random() < 0.5)
                    key = 'c%d.a%d' % (call, j)
                    store['%s.%s' % (prefix, key)] = v
                    inputs[info['name']] = v
                    arg_lines.append('auto %s = P.array<%s, %d>("%s"); P.argument(%s, %s);' % (
                        a, CPP[info['dtype']], len(shape), key, a, 'true' if info['flag'] == 'borrow' else 'false'))
                args.append(a)
            seen, seen_errs = dict(values), dict(errs)
            if use_copy:
                a, b = self.swap
                seen[a], seen[b], seen_errs[a], seen_errs[b] = values[b], values[a], errs[b], errs[a]
            ctx = Context(inputs, seen, rng, seen_errs)
            ctx.random_calls = random_calls
            ctx.input_errs.update(arg_errs)
            if self.given_input:
                inputs[self.given_input] = seen[self.given_var]
                ctx.input_errs[self.given_input] = seen_errs[self.given_var]
            ctx.sizes = sizes
            error = None
            try:
                outs = [ctx(n)[0:2] for n, _ in self.outputs]
                ups = [(u, ctx(u['node'])) for u in self.updates]
                new = {}
                for u, (v, s) in ups:
                    cur = ctx.vars[u['var']]  # (the swapped variable's value in a copy's call)
                    if u['index'] is None:
                        new[u['var']] = (v, s)  # an update may change the variable's shape, as in Theano
                    else:
                        nv = cur.copy()
                        nv[tuple(u['index'])] = v
                        ns = np.zeros(cur.shape)
                        ns[tuple(u['index'])] = s if s is not None else 0
                        new[u['var']] = (nv, ns if cur.dtype.kind == 'f' else None)
            except (ValueError, IndexError) as e:
                error = str(e).replace('\n', ' ')[:200]
            # Index inputs never reached (an earlier refusal): any values.
            for j, info in enumerate(self.inputs):
                if info['index_for'] is None:
                    continue
                if info['name'] not in ctx.inputs:
                    sym = info['shape'][0]
                    m = sizes[sym] if isinstance(sym, str) else sym
                    ctx.inputs[info['name']] = rng.integers(0, 2, m).astype(info['dtype'])
                v = ctx.inputs[info['name']]
                key = 'c%d.a%d' % (call, j)
                store['%s.%s' % (prefix, key)] = v
                arg_lines.append('auto a%d = P.array<%s, 1>("%s"); P.argument(a%d, %s);' % (
                    j, CPP[info['dtype']], key, j, 'true' if info['flag'] == 'borrow' else 'false'))
            args = ['a%d' % j for j, info in enumerate(self.inputs) if info['name'] != self.given_input]
            if error is None:
                random_calls += 1
            if error is not None:
                store['%s.c%d.error' % (prefix, call)] = np.ones(1, dtype=np.int8)
                lines.append('// NumPy refuses: %s' % error)
            else:
                for k, (v, s) in enumerate(outs):
                    self.put(store, '%s.c%d.out%d' % (prefix, call, k), v, s)
                for name, (v, s) in new.items():
                    if use_copy:
                        name = {self.swap[0]: self.swap[1], self.swap[1]: self.swap[0]}.get(name, name)
                    j = [x[1] for x in self.vars].index(name)
                    self.put(store, '%s.c%d.v%d' % (prefix, call, j), v, s)
                    values[name] = v
                    errs[name] = None if s is None else np.broadcast_to(s, np.shape(v)).copy()
            var_names = ', '.join(['%d' % call] + [v[1] for v in self.vars])
            lines.append('P.begin(%s);' % var_names)
            lines.extend(arg_lines)
            lines.append('P.run([&] { return %s(%s); });' % ('g' if use_copy else 'f', ', '.join(args)))
            lines.append('P.end(%s);' % ', '.join(v[1] for v in self.vars))
            code.append('  {  // call %d\n%s\n  }' % (call, '\n'.join('    ' + l for l in lines)))
        return code

    @staticmethod
    def put(store, key, v, s):
        v = np.array(v, order="C")  # ascontiguousarray would make a 0-d value 1-d
        store[key] = v
        if v.dtype.kind == 'f':
            s = np.broadcast_to(s if s is not None else 0.0, v.shape)
            tol = TOL_BOUNDS * s + 8 * float(np.finfo(v.dtype).tiny)
            store[key + ".tol"] = np.array(tol, dtype=np.float64, order="C")

    def cpp(self, store, prefix, title, data_file):
        out = ['TEST_CASE("%s") {' % title, '  difftest::program P(%s, "%s");' % (data_file, prefix)]
        for vnode, name, dtype, shape in self.vars:
            out.append('  auto %s = fusor::shared(P.array<%s, %d>("init.%s"), {.name = "%s", .space = difftest::space});'
                       % (name, CPP[dtype], len(shape), name, name))
        for info in self.inputs:
            rank = len(info['shape'])
            pattern = ''
            if any(info['broadcastable']):
                pattern = ', {%s}' % ', '.join('true' if b else 'false' for b in info['broadcastable'])
            out.append('  fusor::tensor<%s, %d> %s{"%s"%s};' % (CPP[info['dtype']], rank, info['name'], info['name'],
                                                               pattern))
        used = self.reachable()
        # Draws are numbered in the order the program makes them (each takes the
        # stream's next key); the stream's call counter moves with every call
        # that succeeds.
        self.draws = 0
        for n in self.nodes:
            if n.kind in ('input', 'var') or id(n) not in used:
                continue
            if n.kind == 'random':
                if self.draws == 0:
                    out.append('  fusor::random_stream rng(%d, difftest::space);' % RANDOM_SEED)
                n.draw = self.draws
                self.draws += 1
            out.append('  auto %s = %s;' % (n.name, n.cpp))
        r = self.r
        # givens: an input read, replaced by a shared variable of its type and symbolic shape.
        self.given_input = self.given_var = None
        if r.random() < 0.25:
            pairs = [(info['name'], v[1]) for info in self.inputs for v in self.vars
                     if info['index_for'] is None and id(info['node']) in used and not any(info['broadcastable'])
                     and v[2] == info['dtype'] and v[3] == info['shape']]
            if pairs:
                self.given_input, self.given_var = r.choice(pairs)
        # f.copy(swap(v, vs)): the same function over another variable of v's type.
        self.swap = None
        if r.random() < 0.25:
            candidates = [v for v in self.vars if id(v[0]) in used or any(u['var'] == v[1] for u in self.updates)]
            if candidates:
                v = r.choice(candidates)
                self.vars.append((None, v[1] + 's', v[2], v[3]))
                self.swap = (v[1], v[1] + 's')
                out.insert(2, '  auto %s = fusor::shared(P.array<%s, %d>("init.%s"), {.name = "%s", .space = '
                              'difftest::space});' % (v[1] + 's', CPP[v[2]], len(v[3]), v[1] + 's', v[1] + 's'))

        def flag_in(info):
            if info['flag'] == 'plain':
                return info['name']
            if info['flag'] == 'In':
                return 'fusor::In(%s)' % info['name']
            return 'fusor::In(%s, fusor::borrow)' % info['name']
        parts = ['fusor::inputs(%s)' % ', '.join(flag_in(i) for i in self.inputs if i['name'] != self.given_input),
                 'fusor::outputs(%s)' % ', '.join('fusor::Out(%s, fusor::borrow)' % n.name if b else n.name
                                                  for n, b in self.outputs)]
        if self.updates:
            parts.append('fusor::updates(%s)' % ', '.join(
                'fusor::update(%s, %s)' % (u.get('target', u['var']), u['cpp']) for u in self.updates))
        if self.given_input:
            parts.append('fusor::givens(fusor::given(%s, %s))' % (self.given_input, self.given_var))
        out.append('  auto f = difftest::function(%s);' % ',\n                              '.join(parts))
        if self.swap:
            out.append('  auto g = f.copy(fusor::swap(%s, %s));' % self.swap)
        out.extend(self.calls(store, prefix))
        out.append('}')
        return '\n'.join(out)

    def reachable(self):
        seen = set()
        roots = [n for n, _ in self.outputs] + [u['node'] for u in self.updates]
        names = {n.name: n for n in self.nodes}
        stack = list(roots)
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            for tok in re.findall(r'\b[evx]\d+s?\b', n.cpp):
                if tok in names:
                    stack.append(names[tok])
        return seen


class GradProgram:
    """A random differentiable float64 program over shared variables, checked
    by verify_grad (fusor::grad against central differences of the cost; on
    some, a Hessian-vector product against differences of the gradient). No
    twin is needed: the cost's own values are the reference. Values are in
    (-1, 1) and every operation is smooth where it is evaluated, except on
    sets of measure zero (abs at 0, max at a tie, clip at a bound) that random
    values do not meet; divisions, logarithms and roots read a positive
    1.5 + a * a, exponentials a tanh."""

    def __init__(self, rng, index, hessian_share=HESSIAN_SHARE):
        self.r = random.Random(int(rng.integers(1 << 62)))
        self.rng = rng
        self.hessian_share = hessian_share
        self.nodes = []
        self.vars = []
        self.index_vars = []
        self.counter = 0

    def add(self, dtype, shape, cpp):
        n = Node(dtype, shape, cpp, None, 'op')
        n.name = 'e%d' % self.counter
        self.counter += 1
        self.nodes.append(n)
        return n

    def pick(self, pred=lambda n: True):
        c = [n for n in self.nodes if n.dtype == 'float64' and pred(n)]
        if not c:
            return None
        if len(c) > 3 and self.r.random() < 0.6:
            c = c[len(c) // 2:]
        return self.r.choice(c)

    def build(self, store, prefix):
        r = self.r
        self.fixed = {'A': r.choice([2, 3, 4, 5]), 'B': r.choice([2, 3, 4])}
        for j in range(r.choice([1, 2, 2, 3])):
            shape = tuple(r.choice('AB') for _ in range(r.choice([1, 2, 2, 3])))
            name = 'w%d' % j
            n = Node('float64', shape, name, None, 'var')
            n.name = name
            self.nodes.append(n)
            self.vars.append(n)
            store['%s.init.%s' % (prefix, name)] = self.rng.uniform(-1, 1, [self.fixed[d] for d in shape])
        ops = [self.binary] * 5 + [self.unary] * 4 + [self.reduce] * 2 + [self.where, self.dot, self.view,
                                                                          self.take, self.join]
        target = r.randrange(3, 8)
        tries = 0
        while self.counter < target and tries < 200:
            tries += 1
            r.choice(ops)()
        last = [n for n in self.nodes if n.kind == 'op'] or self.vars
        root = r.choice(last[len(last) // 2:])
        self.cost = 'fusor::%s(%s)' % (r.choice(['sum', 'sum', 'mean']), root.name)
        self.root = root

    def binary(self):
        r = self.r
        a = self.pick()
        if a is None:
            return
        if r.random() < 0.3:
            op = r.choice(['+', '-', '*', 'pow', '/'])
            if op == 'pow':
                return self.add('float64', a.shape, 'fusor::pow(%s, %d)' % (a.name, r.choice([2, 3])))
            if op == '/':
                return self.add('float64', a.shape, '(%s / (1.5 + (%s * %s)))' % (
                    r.choice(['0.5', '2.0', '-1.0']), a.name, a.name))
            return self.add('float64', a.shape, '(%s %s %s)' % (a.name, op, r.choice(['0.5', '2.0', '-1.5'])))
        b = self.pick(lambda n: broadcast(n.shape, a.shape) is not None and len(broadcast(n.shape, a.shape)) <= 4)
        if b is None:
            return
        shape = broadcast(a.shape, b.shape)
        op = r.choice(['+', '-', '*', '*', '/', 'maximum', 'minimum', 'pow'])
        if op == '/':
            cpp = '(%s / (1.5 + (%s * %s)))' % (a.name, b.name, b.name)
        elif op == 'pow':
            cpp = 'fusor::pow(1.5 + (%s * %s), %s)' % (a.name, a.name, b.name)
        elif op in ('maximum', 'minimum'):
            cpp = 'fusor::%s(%s, %s)' % (op, a.name, b.name)
        else:
            cpp = '(%s %s %s)' % (a.name, op, b.name)
        self.add('float64', shape, cpp)

    def unary(self):
        a = self.pick()
        if a is None:
            return
        x = a.name
        cpp = self.r.choice([
            '(-%s)' % x, 'fusor::abs(%s)' % x, 'fusor::sin(%s)' % x, 'fusor::cos(%s)' % x, 'fusor::tanh(%s)' % x,
            'fusor::sigmoid(%s)' % x, 'fusor::softplus(%s)' % x, 'fusor::exp(0.5 * fusor::tanh(%s))' % x,
            'fusor::expm1(fusor::tanh(%s))' % x, 'fusor::log(1.5 + (%s * %s))' % (x, x),
            'fusor::log1p(%s * %s)' % (x, x), 'fusor::sqrt(1.5 + (%s * %s))' % (x, x),
            'fusor::tan(0.5 * fusor::tanh(%s))' % x, 'fusor::clip(%s, -0.5, 0.5)' % x])
        self.add('float64', a.shape, cpp)

    def where(self):
        c = self.pick()
        a = self.pick(lambda n: c is not None and broadcast(n.shape, c.shape) is not None)
        if a is None:
            return
        b = self.pick(lambda n: broadcast(n.shape, broadcast(a.shape, c.shape)) is not None)
        if b is None:
            return
        shape = broadcast(broadcast(a.shape, c.shape), b.shape)
        if len(shape) <= 4:
            self.add('float64', shape, 'fusor::where(%s > 0.1, %s, %s)' % (c.name, a.name, b.name))

    def reduce(self):
        r = self.r
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return
        op = r.choice(['sum', 'sum', 'mean', 'prod', 'max', 'min', 'nansum', 'nanmax'])
        form = r.choice(['all', 'axis', 'axis_keep', 'axes'] if a.rank >= 2 else ['all', 'axis', 'axis_keep'])
        if form == 'all':
            return self.add('float64', (), 'fusor::%s(%s)' % (op, a.name))
        if form == 'axes':
            picked = sorted(r.sample(range(a.rank), 2))
            return self.add('float64', tuple(d for i, d in enumerate(a.shape) if i not in picked),
                            'fusor::%s(%s, {%d, %d})' % (op, a.name, picked[0], picked[1]))
        ax = r.randrange(-a.rank, a.rank)
        pos = ax % a.rank
        if form == 'axis_keep':
            return self.add('float64', tuple(1 if i == pos else d for i, d in enumerate(a.shape)),
                            'fusor::%s(%s, %d, fusor::keepdims)' % (op, a.name, ax))
        return self.add('float64', tuple(d for i, d in enumerate(a.shape) if i != pos),
                        'fusor::%s(%s, %d)' % (op, a.name, ax))

    def dot(self):
        a = self.pick(lambda n: n.rank in (1, 2))
        if a is None:
            return
        b = self.pick(lambda n: n.rank in (1, 2) and n.shape[0] == a.shape[-1] and a.shape[-1] != 1)
        if b is None:
            if a.rank == 2:
                self.add('float64', a.shape[::-1], 'fusor::transpose(%s)' % a.name)
            return
        self.add('float64', a.shape[:-1] + b.shape[1:], 'fusor::dot(%s, %s)' % (a.name, b.name))

    def view(self):
        r = self.r
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return
        kind = r.choice(['view', 'view', 'flip', 'transpose', 'diagonal'])
        if kind == 'flip':
            return self.add('float64', a.shape, 'fusor::flip(%s, %d)' % (a.name, r.randrange(a.rank)))
        if kind == 'transpose' and a.rank >= 2:
            return self.add('float64', a.shape[::-1], 'fusor::transpose(%s)' % a.name)
        if kind == 'diagonal' and a.rank >= 2:
            rest = a.shape[2:]
            return self.add('float64', rest + (('diag', a.shape[0], a.shape[1]),), 'fusor::diagonal(%s)' % a.name)
        items, shape = [], []
        for d in a.shape:
            c = r.random()
            if c < 0.15 and len(shape) < 4:
                items.append('fusor::newaxis')
                shape.append(1)
            if c < 0.4:
                items.append('fusor::all')
                shape.append(d)
            elif c < 0.55 and a.rank > 1:
                items.append(r.choice(['0', '-1']))
            else:
                start, step = r.choice([('fusor::_', -1), ('1', 1), ('fusor::_', 2), ('-2', -1)])
                items.append('fusor::range(%s, fusor::_, %d)' % (start, step))
                shape.append(('slice', d, start, step))
        if len(shape) <= 4:
            self.add('float64', tuple(shape), 'fusor::view(%s, %s)' % (a.name, ', '.join(items)))

    def take(self):
        a = self.pick(lambda n: any(d in self.fixed for d in n.shape) and n.rank <= 3)
        if a is None:
            return
        axes = [i for i, d in enumerate(a.shape) if d in self.fixed]
        pos = self.r.choice(axes)
        n = self.fixed[a.shape[pos]]
        name = 'k%d' % len(self.index_vars)
        count = self.r.choice([1, 2, 3, 5])
        self.index_vars.append((name, self.rng.integers(-n, n, count).astype(np.int64)))
        self.add('float64', a.shape[:pos] + (('take', count),) + a.shape[pos + 1:],
                 'fusor::take(%s, %s, %d)' % (a.name, name, pos))

    def join(self):
        r = self.r
        a = self.pick(lambda n: n.rank >= 1)
        if a is None:
            return
        kind = r.choice(['concatenate', 'stack', 'roll', 'pad'])  # (an edge pad is not differentiated)
        if kind in ('concatenate', 'stack'):
            b = self.pick(lambda n: n.shape == a.shape) or a
            if kind == 'concatenate':
                pos = r.randrange(a.rank)
                shape = a.shape[:pos] + (('cat', a.shape[pos]),) + a.shape[pos + 1:]
            else:
                if a.rank >= 4:
                    return
                pos = r.randrange(a.rank + 1)
                shape = a.shape[:pos] + (2,) + a.shape[pos:]
            return self.add('float64', shape, 'fusor::%s(std::tuple(%s, %s), %d)' % (kind, a.name, b.name, pos))
        if kind == 'roll':
            return self.add('float64', a.shape, 'fusor::roll(%s, %d, %d)' % (a.name, r.choice([1, -2]),
                                                                              r.randrange(a.rank)))
        pads = [(r.choice([0, 1]), r.choice([0, 2])) for _ in range(a.rank)]
        widths = ', '.join('{%d, %d}' % p for p in pads)
        # The widths are part of the symbolic extent: two axes of one extent
        # padded differently differ (without them, the dot of pad(w, {{1, 2},
        # {1, 0}}) with itself, w square, was taken for aligned; found by a
        # campaign, seed 200035).
        shape = tuple(('pad', d, lo, hi) for d, (lo, hi) in zip(a.shape, pads))
        tail = 'fusor::edge' if kind == 'pad_edge' else '0.25'
        self.add('float64', shape, 'fusor::pad(%s, {%s}, %s)' % (a.name, widths, tail))

    @staticmethod
    def read_names(n):
        """The operations (e<k>) and variables (w<k>) that n's C++ reads, in
        order, each as often as it is read."""
        return re.findall(r'\b[ew]\d+\b', n.cpp)

    def reachable_vars(self):
        """The variables the cost differentiates through (a where's condition
        does not count: a variable read only there does not compile as a
        target when no other leaf of its type is differentiable), and every
        node the cost reads."""
        names = {n.name: n for n in self.nodes}

        def walk(differentiable_only):
            seen, stack, found = set(), [self.root], []
            while stack:
                n = stack.pop()
                if n.name in seen:
                    continue
                seen.add(n.name)
                if n.kind == 'var':
                    found.append(n)
                toks = self.read_names(n)
                if differentiable_only and n.cpp.startswith('fusor::where('):
                    toks = toks[1:]
                for tok in toks:
                    if tok in names and tok != n.name:
                        stack.append(names[tok])
            return seen, found
        seen, _ = walk(False)
        _, found = walk(True)
        return [v for v in self.vars if v in found], seen

    def second_derivative_compiles(self, used):
        """Whether the cost's second derivative compiles in bounded time: the
        cost reads at most five operations (a dot and an operation whose
        derivative is a quotient or a power count two). An operation read
        more than once is a cut point of the gradient; since gradients and
        cut points' adjoints are named types (gradient_of, adjoint_of), a
        second derivative through one compiles in seconds (sum(e * e * e)
        with e = pad(w, ...), which took 121 s and 24 GB, in 12 s; see
        docs/compile-time.md), so such costs are checked too. (Until then
        they were not; the first units that checked them found two second
        derivatives that did not build, now test_grad_second*.cpp.)"""
        ops = [n for n in self.nodes if n.kind == 'op' and n.name in used]
        heavy = ('fusor::dot(', ' / (', 'fusor::pow(', 'fusor::log(', 'fusor::sqrt(', 'fusor::tan(')
        # A dot read more than once is left out: sum(log(1.5 + e2 * e2)) with
        # e2 = where(w > 0.1, e0, e0) and e0 = dot(w, w) did not compile in ten
        # minutes (2.3-2.9 GB, clang -O0, host and emulated device; seed 200042),
        # as sum(pow(-1 / (1.5 + dot(w0, w1) * dot(w0, w1)), 2)) did not before
        # the gradients were named (docs/differential-testing.md).
        reads = collections.Counter(tok for n in self.nodes if n.name in used
                                    for tok in self.read_names(n) if tok != n.name)
        if any('fusor::dot(' in n.cpp and reads[n.name] > 1 for n in ops):
            return False
        return sum(2 if any(h in n.cpp for h in heavy) else 1 for n in ops) <= 5

    def cpp(self, store, prefix, title, data_file):
        self.build(store, prefix)
        wrt, used = self.reachable_vars()
        if not wrt:
            raise KeyError('the cost reads no variable')
        out = ['TEST_CASE("%s") {' % title, '  difftest::program P(%s, "%s");' % (data_file, prefix)]
        for v in self.vars:
            out.append('  auto %s = fusor::shared(P.array<double, %d>("init.%s"), "%s");' % (
                v.name, v.rank, v.name, v.name))
        for name, values in self.index_vars:
            store['%s.init.%s' % (prefix, name)] = values
            out.append('  auto %s = fusor::shared(P.array<std::int64_t, 1>("init.%s"), "%s");' % (name, name, name))
        for n in self.nodes:
            if n.kind == 'op' and n.name in used:
                out.append('  auto %s = %s;' % (n.name, n.cpp))
        out.append('  auto cost = %s;' % self.cost)
        for v in wrt:
            # (A variable read only through comparisons has no gradient: refused, as documented;
            # the refusal is checked too: the cost does not move with it, nor, for a refused
            # second derivative, the gradient along d.)
            out.append('  try {')
            out.append('    grad_check::verify_grad(cost, %s);' % v.name)
            out.append('  } catch (const fusor::error& e) {')
            out.append('    P.disconnected(e.what());')
            out.append('    grad_check::verify_no_gradient(cost, %s);' % v.name)
            out.append('  }')
        if self.r.random() < self.hessian_share and self.second_derivative_compiles(used):
            v = self.r.choice(wrt)
            store['%s.init.d' % prefix] = self.rng.uniform(-1, 1, [self.fixed[d] for d in v.shape])
            out.append('  auto d = fusor::shared(P.array<double, %d>("init.d"), "d");' % v.rank)
            out.append('  try {')
            out.append('    grad_check::verify_hessian_vector(fusor::grad(cost, %s), %s, d);' % (v.name, v.name))
            out.append('    P.hessian_checked();')
            out.append('  } catch (const fusor::error& e) {')
            out.append('    P.disconnected(e.what());')
            out.append('    grad_check::verify_no_second_derivative(cost, %s, d);' % v.name)
            out.append('  }')
        out.append('  P.gradient_checked();')
        out.append('}')
        return '\n'.join(out)


def generate(seed, count, out_dir, name, ext='cpp', grad_every=GRAD_EVERY, hessian_share=HESSIAN_SHARE):
    """grad_every: every grad_every-th program is a gradient program (1: all
    of them); hessian_share: the share of those that also check a second
    derivative, where second_derivative_compiles allows one."""
    rng = np.random.default_rng(seed)
    store = {}
    data_file = os.path.abspath(os.path.join(out_dir, name + '.npz'))
    # Named after the unit: the suite compiles several generated units as one.
    data_name = name + '_data'
    cases = []
    for i in range(count):
        while True:
            grad = i % grad_every == grad_every - 1
            p = GradProgram(rng, i, hessian_share) if grad else Program(rng, i)
            try:
                if not grad:
                    p.build()
                text = p.cpp(store, 'p%d' % i, 'difftest seed %d program %d%s' % (
                    seed, i, ' (gradient)' if grad else ''), data_name)
                break
            except (TypeError, AttributeError, KeyError, ZeroDivisionError, np.AxisError):
                # a combination the generator cannot model: draw another program
                for k in [k for k in store if k.startswith('p%d.' % i)]:
                    del store[k]
        cases.append(text)
    head = ['// Generated by test/difftest/generate.py --seed %d --programs %d: do not edit.' % (seed, count),
            '#include <cstdint>', '#include <tuple>', '', '#include <xtensor/xmanipulation.hpp>', '',
            '#include "harness.hpp"', '#include "verify_grad.hpp"', '', 'namespace {', 'const char* const %s = "%s";' %
            (data_name, data_file.replace('\\', '/')), '}  // namespace', '']
    with open(os.path.join(out_dir, name + '.' + ext), 'w') as f:
        f.write('\n'.join(head) + '\n' + '\n\n'.join(cases) + '\n')
    np.savez(os.path.join(out_dir, name + '.npz'), **store)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--programs', type=int, default=10)
    ap.add_argument('--out', required=True)
    ap.add_argument('--name', default=None)
    ap.add_argument('--ext', default='cpp', help="the unit's extension: cu for nvcc (the GPU suite)")
    ap.add_argument('--grad-every', type=int, default=GRAD_EVERY,
                    help='every K-th program checks gradients (default %(default)s; 1: every program)')
    ap.add_argument('--hessian-share', type=float, default=HESSIAN_SHARE,
                    help='the share of gradient programs that also check a second derivative where it '
                         'compiles (default %(default)s)')
    a = ap.parse_args()
    if a.grad_every < 1 or not 0 <= a.hessian_share <= 1:
        ap.error('--grad-every must be at least 1 and --hessian-share within [0, 1]')
    os.makedirs(a.out, exist_ok=True)
    generate(a.seed, a.programs, a.out, a.name or 'difftest_%d' % a.seed, a.ext, a.grad_every, a.hessian_share)


if __name__ == '__main__':
    main()
