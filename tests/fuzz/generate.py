"""The fuzzer's program generator: `rustpython generate.py SEED` prints a random program,
the same for the same seed on any interpreter (its own generator of numbers, no `random`).

A program mixes tensor work with the Python a user writes: functions with every argument
form, closures, classes with methods and attributes, containers and their views, loops with
break, continue and else, try/except/finally and `with`, generators, side effects on
globals, attributes and containers, prints (graph breaks), deliberate errors, and shapes,
dtypes and values that change from call to call. `main()` calls every function several
times and prints everything it computes; an error is caught and printed. The program's
output is its meaning: run plain and under the plugin, it must be the same.
"""
import sys


class Rng:
    """splitmix64: small, and the same everywhere."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def chance(self, percent):
        return self.below(100) < percent

    def pick(self, items):
        return items[self.below(len(items))]

    def number(self):
        return self.pick(["0.5", "2.0", "1.5", "-1.0", "3.0", "0.25", "1", "2", "-3"])


UNARY = ["st.exp({})", "st.tanh({})", "st.relu({})", "st.sigmoid({})", "{}.abs()",
         "-{}", "({}).clamp(-1.0, 1.0)", "st.sin({})", "{}.relu()", "st.maximum({}, 0.0)"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "st.maximum({}, {})", "st.minimum({}, {})",
          "st.where({0} > {1}, {0}, {1})"]
REDUCE = ["{}.sum()", "{}.mean()", "{}.max()", "{}.sum(dim=0)", "{}.sum(dim=-1, keepdim=True)",
          "st.softmax({}, dim=-1)"]


class Gen:
    def __init__(self, seed):
        self.r = Rng(seed)
        self.lines = []
        self.functions = []  # (name, how to call it with x, y, data, obj)
        self.n = 0

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    # --- expressions over the tensors of a function: every tensor has the shape of x ---
    def tensor_expr(self, names, depth=0):
        r = self.r
        if depth > 2 or r.chance(30):
            base = r.pick(names)
            if r.chance(30):
                return f"({base} * {r.number()})"
            return base
        kind = r.below(10)
        if kind < 4:
            return r.pick(BINARY).format(self.tensor_expr(names, depth + 1), self.tensor_expr(names, depth + 1))
        if kind < 7:
            return r.pick(UNARY).format(self.tensor_expr(names, depth + 1))
        if kind < 8:
            return f"mm({self.tensor_expr(names, depth + 1)})"
        if kind < 9:
            return f"({self.tensor_expr(names, depth + 1)} + {r.number()})"
        return f"({self.tensor_expr(names, depth + 1)} * {r.pick(['n', 'k', 'scale'])})"

    def scalar_expr(self, names):
        r = self.r
        return r.pick(REDUCE).format(self.tensor_expr(names, 1))

    # --- statements ---
    def block(self, depth, names, budget, in_loop=False):
        """Statements that keep every name of `names` a tensor of x's shape."""
        for _ in range(budget):
            self.statement(depth, names, in_loop)

    def statement(self, depth, names, in_loop):
        r = self.r
        kind = r.below(100)
        if kind < 30:
            target = r.pick(names) if r.chance(50) else self.fresh("t")
            self.emit(depth, f"{target} = {self.tensor_expr(names)}")
            if target not in names:
                names.append(target)
        elif kind < 36:
            self.emit(depth, f"acc.append({self.scalar_expr(names)})")
        elif kind < 40:
            self.emit(depth, f"log[{r.pick(['0', '-1', '1'])}] = {r.pick(names)} * 2.0" if r.chance(50)
                      else f"data[{r.pick(repr_keys())}] = {self.tensor_expr(names)}")
        elif kind < 44:
            self.emit(depth, "calls += 1")
        elif kind < 48:
            self.emit(depth, f"obj.count += {r.pick(['1', '2'])}")
            self.emit(depth, f"obj.w = obj.w * {r.number()} + {r.pick(names)}.sum()")
        elif kind < 52 and depth < 3:
            var = self.fresh("i")
            iterable = r.pick(["range(n)", "range(2)", "[1, 2, 3]", "data", "data.items()",
                               "data.values()", "enumerate(list(acc))", "zip(log, [1, 2])", "gen(n)"])
            if iterable in ("data.items()", "enumerate(list(acc))", "zip(log, [1, 2])"):
                self.emit(depth, f"for {var}, {var}v in {iterable}:")
            else:
                self.emit(depth, f"for {var} in {iterable}:")
            self.block(depth + 1, names[:] if r.chance(50) else names, 1 + r.below(3), in_loop=True)
            if r.chance(30):
                self.emit(depth + 1, f"if {r.pick(['n > 2', 'k == 1', 'len(acc) > 3', 'scale < 0'])}:")
                self.emit(depth + 2, r.pick(["break", "continue", "acc.append(1)"]))
            if r.chance(20):
                self.emit(depth, "else:")
                self.emit(depth + 1, f"acc.append({var})" if r.chance(50) else "acc.append('done')")
        elif kind < 56 and depth < 3:
            cond = r.pick(["n > 1", "k == 0", "scale > 1.0", "'a' in data", "len(log) > 2",
                           "flag", "not flag", f"{r.pick(names)}.sum() > 0", "obj.count % 2 == 0"])
            self.emit(depth, f"if {cond}:")
            self.block(depth + 1, names, 1 + r.below(2), in_loop)
            self.emit(depth, "else:")
            self.block(depth + 1, names, 1 + r.below(2), in_loop)
        elif kind < 60 and depth < 3:
            self.emit(depth, "try:")
            self.block(depth + 1, names, 1, in_loop)
            error, caught = r.pick([("x.tolist()[99]", "IndexError"), ("data['missing']", "KeyError"),
                                    ("1 / (n - n)", "ZeroDivisionError"), ("log.pop(7)", "IndexError"),
                                    ("acc.append(2)", "KeyError"), ("int('seven')", "ValueError"),
                                    ("raise_if(n > 1)", "ValueError"), ("checked(x, k - 1)", "ValueError")])
            if r.chance(15):
                caught = r.pick(["IndexError", "KeyError", "ZeroDivisionError", "ValueError"])
            self.emit(depth + 1, error)
            self.emit(depth, f"except ({caught}, TypeError) as e:")
            self.emit(depth + 1, "acc.append(type(e).__name__)")
            if r.chance(50):
                self.emit(depth, "finally:")
                self.emit(depth + 1, "acc.append('finally')")
        elif kind < 63 and depth < 3:
            self.emit(depth, "with Recorder(acc) as rec:")
            self.block(depth + 1, names, 1 + r.below(2), in_loop)
        elif kind < 67:
            self.emit(depth, r.pick([f"print('  at', n, {r.pick(names)}.shape)",
                                     f"print('  value', round({r.pick(names)}.sum().item(), 6))",
                                     "print('  calls', calls)",
                                     f"LOGGER.info('at %d %s', n, {r.pick(names)}.sum())",
                                     f"LOGGER.warning('shape %s of %s', {r.pick(names)}.shape, k)",
                                     "LOGGER.debug('hidden %s', n)"]))
        elif kind < 71:
            t = r.pick(names)
            self.emit(depth, r.pick([f"{t} = helper({t}, {r.number()})",
                                     f"{t} = helper({t}, b={r.number()}, mode='{r.pick(['a', 'b'])}')",
                                     f"{t} = helper(*[{t}], **{{'b': {r.number()}}})",
                                     f"{t} = obj.step({t})",
                                     f"{t} = apply(obj.step, {t})",
                                     f"{t} = closure({t})",
                                     f"{t} = Model.twice({t})",
                                     f"{t} = sum(part for part in pieces({t}))"]))
        elif kind < 74:
            self.emit(depth, r.pick(["data.update({'z': n})", "data.setdefault('d', 0)",
                                     "keys = list(data.keys())", "acc.extend(list(data.values())[:1])",
                                     "log.insert(0, k)", "del data['a']", "log[1:2] = [k, k]",
                                     "acc.append(len(data))", "acc.append(list(data)[-2:])",
                                     # stores while iterated: of the keys it holds (or
                                     # another, which Python refuses)
                                     "for key in data: data[key] = n",
                                     "for key, v in data.items(): data[key] = (v, k)",
                                     "for key, v in data.items(): data['a'] = key"]))
        elif kind < 77:
            self.emit(depth, r.pick(["acc.append(f'{n}-{k}:{scale}')", "acc.append((n, k) in {(1, 0), (2, 1)})",
                                     "acc.append('ab' in str(n) + 'ab')", "acc.append(sorted([k, n, 3]))",
                                     "acc.append(max(n, k) // 2 - (n % 3))", "acc.append(divmod(n + 7, 3))",
                                     "acc.append(obj in {obj})", "acc.append(len({obj, obj, SPARE}))",
                                     # Functions of the numbers that change per call, some
                                     # scaling a tensor (graph inputs when deferred).
                                     "acc.append((pow(n, 2), divmod(n - 5, 3), n >> 1, ~k, int(n / 4)))",
                                     f"{r.pick(names)} = {r.pick(names)} * (int(n * 0.7) + round(k / 3))",
                                     f"{r.pick(names)} = {r.pick(names)} + ((n & 3) ^ (k | 1)) + (n << 2) - ~k",
                                     f"{r.pick(names)} = {r.pick(names)} * math.floor(n / 2.5) - math.ceil(k * 1.5) + n ** 2",
                                     f"{r.pick(names)} = {r.pick(names)} + min(n, 2, 4) * math.trunc(-n / 3) + max(k, 1, 0)",
                                     "acc.append(round(scale * n, 2) + math.log2(n + 1))",
                                     # negative int exponents (of k, 0 on some calls: raises)
                                     f"{r.pick(names)} = {r.pick(names)} * n ** -1 + (n + 1) ** -2",
                                     f"{r.pick(names)} = {r.pick(names)} * (k ** -1 if k else 0.5)",
                                     "acc.append(k ** -2)"]))
        elif kind < 80 and in_loop:
            self.emit(depth, r.pick(["continue", "break"]) if r.chance(30) else "pass")
        elif kind < 83:
            # In place, on a tensor of the function's own or on an argument (the caller's
            # tensor, written back after the graph; `y` is `x` on some calls).
            own = [t for t in names if t not in ("x", "y")]
            t = r.pick(own) if own and r.chance(60) else r.pick(names)
            self.emit(depth, r.pick([f"{t} += {r.pick(names)}", f"{t} *= {r.number()}",
                                     f"{t}[0] = {r.number()}", f"{t}[..., :1] = {r.pick(names)}[..., -1:]",
                                     f"{t}.add_({r.pick(names)}, alpha={r.number()})",
                                     f"{t}.clamp_(-1.0, 1.0)", f"acc.append({t}.mul_(2.0) is {t})",
                                     f"acc.append({t} is {r.pick(names)})",
                                     f"{t}[{t} > {r.number()}] = {r.number()}",
                                     f"{t}[..., [0, -1]] = {r.number()}"]))
            if r.chance(40):
                # Through a view, which shares the tensor's elements (written back into it,
                # or read again after it changed), at a place fixed or given by `n`.
                u = r.pick(names)
                self.emit(depth, r.pick([f"{t}[0].mul_({r.number()})",
                                         f"{t}.view(-1)[:1].add_({r.number()})",
                                         f"{t}.transpose(0, -1)[-1].fill_({r.number()})",
                                         f"{t}.detach().clamp_(-2.0, 2.0)",
                                         f"{t}.narrow(0, 0, 1).copy_({u}.narrow(0, 0, 1))",
                                         f"{t}[n % 2].zero_()",
                                         f"{t}.narrow(0, k % 2, 1).sub_({u}[:1])",
                                         f"seen = {t}[..., :1]; {t}.add_({r.number()}); acc.append(seen.sum())",
                                         # a detached tensor kept: a view of all the elements
                                         f"obj.kept = {t}.detach(); {t}.mul_({r.number()})",
                                         f"obj.kept = {t}.detach()[..., :1]; {t}.add_({r.number()})",
                                         # a view updated through itself, then kept
                                         f"obj.kept = {t}[..., 1:]; obj.kept.mul_({r.number()})",
                                         f"obj.kept = {t}.narrow(0, 0, 1).T; obj.kept.copy_({u}[:1].T)",
                                         # views of one tensor only the graph computes, kept
                                         # (the caller updates the first: seen by the others)
                                         f"w = {t} * {r.number()}; obj.kept = (w[..., :1], w[..., -1:], w.T)",
                                         f"obj.kept = tuple(({t} + {u}).chunk(2, 0))"]))
        elif kind < 85:
            # Raises, by a call or by an assert on a tensor's truth (checked by the graph).
            t = r.pick(names)
            self.emit(depth, r.pick(["raise_if(n == 3)", "raise_if(k > 5)", "raise_if(flag and n > 2)",
                                     f"assert {t}.sum() > {r.number()}, f'sum of {t} at {{n}}'",
                                     f"assert not {t}.isnan().any()",
                                     f"if ({t} > {r.number()}).all(): raise ValueError('all above')"]))
        elif kind < 87:
            # Slices that may hold no row (empty tensors), indexes by sizes.
            t = r.pick(names)
            self.emit(depth, r.pick([f"acc.append({t}[:n - 1].sum())", f"acc.append({t}[:k].shape)",
                                     f"acc.append(st.cat([{t}[:k], {t}]).mean())",
                                     # lists of ints among which a size, as indexes
                                     f"{t} = {t} + {t}[..., [0, {t}.shape[-1] - 1]].sum(-1, keepdim=True)",
                                     f"{t} = {t} + {t}[[0, len({t}) - 1]].sum(0)",
                                     # the truth of a global count that changes per call
                                     f"{t} = {t} * 2.0 if calls else {t} - 0.5"]))
        elif kind < 95 and depth < 3:
            self.more(depth, names, in_loop)
        else:
            self.emit(depth, f"acc.append({r.pick(names)}.shape)")

    def more(self, depth, names, in_loop):
        """The rarer constructs: while loops, comprehensions, closures made here, classes,
        tensor indexing and int tensors, globals, exceptions leaving a call."""
        r = self.r
        t = r.pick(names)
        kind = r.below(28)
        # Kinds 25 and 26: the library classes of kind 22 (slots, EasyDict, Mapping, tuple
        # classes, namespaces, weak references, running totals) three times as often.
        library = kind in (25, 26)
        if library:
            kind = 22
        if kind == 27:
            # a caller's sets, read by membership and length, changed (one becomes the
            # other from the third call on)
            self.emit(depth, r.pick([f"{t} = {t} * 2.0 if n in SEEN else {t} - 1.0",
                                     "SEEN.add(n); acc.append(len(SEEN))",
                                     f"obj.tags.discard(k); SEEN.update([k, n + 1]); {t} = {t} + (k in obj.tags)",
                                     "acc.append(('a' in SEEN, len(obj.tags), sorted(obj.tags, key=repr)))",
                                     f"{t} = {t} + len(obj.tags) if 'b' in obj.tags else {t}",
                                     f"for v in sorted(SEEN, key=repr): acc.append(v)"]))
            return
        if kind == 0:
            var = self.fresh("w")
            self.emit(depth, f"{var} = 0")
            self.emit(depth, f"while {var} < n:")
            self.emit(depth + 1, f"{var} += 1")
            self.block(depth + 1, names, 1 + r.below(2), in_loop=True)
            if r.chance(40):
                self.emit(depth + 1, f"if {var} == {r.pick(['1', '2'])}:")
                self.emit(depth + 2, r.pick(["break", "continue"]))
        elif kind == 1:
            self.emit(depth, r.pick([
                f"acc.append([v * 2 for v in range(n) if v % 2 == 0])",
                f"acc.append({{str(v): v for v in range(k + 2)}})",
                f"acc.append(sorted({{v % 3 for v in range(n + 3)}}))",
                f"{t} = sum([{t} * float(v) for v in range(1, n + 1)], {t} * 0.0)",
                f"acc.append(sum(v * v for v in range(n)))",
                f"acc.append([(a, b) for a in range(2) for b in 'xy'])"]))
        elif kind == 2:
            inner = self.fresh("g")
            self.emit(depth, f"def {inner}(u, c={r.number()}):")
            self.emit(depth + 1, f"return u * c + {r.pick(names)}")
            self.emit(depth, f"{t} = {inner}({t})" if r.chance(70) else f"{t} = {inner}(u={t}, c=n)")
        elif kind == 3:
            counter = self.fresh("c")
            self.emit(depth, f"{counter} = [0]")
            self.emit(depth, f"def bump{counter}():")
            self.emit(depth + 1, f"{counter}[0] += 1")
            self.emit(depth + 1, f"return {counter}[0]")
            self.emit(depth, f"acc.append(bump{counter}() + bump{counter}())")
        elif kind == 4:
            self.emit(depth, r.pick([f"{t} = Child(n).forward({t})", f"{t} = Child(k).scaled_by * {t}",
                                     f"{t} = Base(n).forward({t})", f"acc.append(Child(n).describe())",
                                     f"acc.append(isinstance(Child(1), Base))"]))
        elif kind == 5:
            self.emit(depth, r.pick([f"{t} = {t}[0] + {t}" if True else "",
                                     f"acc.append({t}[-1].tolist())",
                                     f"{t} = {t} + {t}[..., :1]",
                                     f"acc.append({t}.reshape(-1).shape)",
                                     f"acc.append(({t} > 0).sum().item())",
                                     f"{t} = {t} * ({t} > 0)",
                                     f"{t} = {t}.sort(-1).values + {t}.argsort(-1, descending=True)",
                                     f"{t} = {t} + {t}[..., [0, -1]].sum(-1, keepdim=True)",
                                     f"acc.append({t}.topk(1).indices.tolist())",
                                     # squeezes (a dimension of 1, or none), sizes returned
                                     f"{t} = {t} * {t}.sum(-1, keepdim=True).squeeze(-1).unsqueeze(-1)",
                                     f"{t} = {t}.unsqueeze(0).squeeze() if {t}.dim() > 1 else {t}",
                                     f"acc.append(({t}.shape[0] * 2, len({t}) - 1))",
                                     f"{t} = {t}.round() + {t}.sign() * {t}.frac()",
                                     # map/filter, an update in place of a value made here
                                     f"{t} = sum(map(lambda u: u * 0.5, [{t}, {t} + 1.0]))",
                                     f"acc.append(list(filter(lambda v: v > k, [n, k, 3])))",
                                     f"w = {t} * 2.0; w += {t}; w *= {t}.mean(); {t} = w"]))
        elif kind == 6:
            self.emit(depth, r.pick(["acc.append(st.arange(n).sum().item())",
                                     "acc.append((st.arange(6).reshape(2, 3) * k).tolist())",
                                     f"{t} = {t} + st.ones({t}.shape[-1], dtype={t}.dtype)",
                                     f"acc.append(st.tensor([n, k, 3]).max().item())"]))
        elif kind == 7:
            self.emit(depth, r.pick(["global SCALE", "global SCALE"]))
            self.emit(depth, r.pick([f"{t} = {t} * SCALE", "SCALE = SCALE + 0.5", "acc.append(SCALE)"]))
        elif kind == 8:
            self.emit(depth, "try:")
            self.emit(depth + 1, f"{t} = checked({t}, n - {r.pick(['1', '2', '3'])})")
            self.emit(depth, "except ValueError as e:")
            self.emit(depth + 1, "acc.append(str(e))")
        elif kind == 9:
            self.emit(depth, r.pick([f"acc.append('ab' in '{r.pick(['xaby', 'ab', 'ba', ''])}')",
                                     f"acc.append('{r.pick(['a', 'q', ''])}' not in 'cab')",
                                     "acc.append(list(data.keys())[-1])",
                                     "acc.append(len(data.items()))"]))
        elif kind == 10:
            view = self.fresh("view")
            self.emit(depth, f"local = {{'p': {t}, 'q': 1}}")
            self.emit(depth, f"{view} = local.{r.pick(['keys', 'values', 'items'])}()")
            self.emit(depth, f"local['r'] = {r.pick(names)} * 2.0")
            self.emit(depth, f"acc.append(len({view}))")
            self.emit(depth, f"acc.append('r' in local)")
        elif kind == 11:
            self.emit(depth, r.pick([f"obj.extra = {t}", "obj.__dict__.pop('extra', None)",
                                     "acc.append(hasattr(obj, 'extra'))",
                                     "acc.append(getattr(obj, 'count', -1))"]))
        elif kind == 12:
            tmp = self.fresh("d")
            self.emit(depth, f"{tmp} = {t}")
            self.emit(depth, f"del {tmp}")
            self.emit(depth, "try:")
            self.emit(depth + 1, f"acc.append({tmp})")
            self.emit(depth, "except NameError as e:")
            self.emit(depth + 1, "acc.append(type(e).__name__)")
        elif kind == 13:
            self.emit(depth, r.pick([f"{t} = {t}.to(st.float32)", f"{t} = {t}.double()",
                                     f"acc.append({t}.long().tolist())", f"acc.append({t}.dtype.name)"]))
        elif kind == 14:
            self.emit(depth, r.pick([f"{t} = st.cat([{t}, {t}], dim=0)[:{t}.shape[0]]",
                                     f"{t} = st.stack([{t}, {t}]).sum(dim=0)",
                                     f"{t} = {t}.T.T", f"{t} = {t}.unsqueeze(0).squeeze(0)"]))
        elif kind == 16:
            # modules written the way torch.nn is: parameters through __setattr__/__getattr__
            self.emit(depth, r.pick([f"{t} = affine({t})", f"{t} = chain({t})",
                                     f"acc.append(affine.training)", f"{t} = affine({t}) * affine.scale",
                                     f"acc.append(len(list(chain.parameters())))",
                                     f"{t} = st.compile(affine)({t})"]))
        elif kind == 17:
            # properties, __getattr__ with a default, cached properties, data descriptors
            self.emit(depth, r.pick([f"{t} = {t} * Child(n).doubled", f"acc.append(getattr(proxy, 'w{r.below(3)}', -1))",
                                     f"{t} = {t} + Lazy({t}).squared", f"acc.append(hasattr(proxy, 'w1'))",
                                     f"rec = Clamped(); rec.value = {r.number()}; acc.append(rec.value)"]))
        elif kind == 18:
            # dataclasses, named tuples, made in the frame and returned
            self.emit(depth, r.pick([f"p = Pair({t}, n); {t} = p.total()", f"q = Point(n, k); acc.append(q.u + q.v)",
                                     f"acc.append(Point(k, n))", f"acc.append(Pair(n, k))",
                                     f"u, v = Point({t}, n); {t} = u * v"]))
        elif kind == 19:
            # sets, partial, OrderedDict, defaultdict
            self.emit(depth, r.pick(["acc.append(sorted({n, k, 3} | {5}))", "acc.append({k} <= {0, 1, 2})",
                                     "acc.append(sorted([n, k, 3], key=lambda v: (v % 2, -v)))",
                                     "acc.append(max([Child(n), Child(k)], key=lambda c: c.scaled_by).scaled_by)",
                                     f"{t} = functools.partial(helper, b={r.number()})({t})",
                                     "od = collections.OrderedDict(a=n); od['b'] = k; acc.append(list(od.items()))",
                                     "dd = collections.defaultdict(list); dd['x'].append(n); acc.append(dict(dd))"]))
        elif kind == 20:
            # a list that grows while it is iterated; enumerate and zip over iterators
            self.emit(depth, "grow = [1, 2]")
            self.emit(depth, "for g in grow:")
            self.emit(depth + 1, "if len(grow) < 4:")
            self.emit(depth + 2, "grow.append(g + n)")
            self.emit(depth, r.pick(["acc.append(grow)", f"{t} = {t} * len(grow)",
                                     "acc.append(list(enumerate(gen(n))))", "acc.append(list(zip(gen(k + 1), 'ab')))"]))
        elif kind == 21:
            # bound methods stored and called later; a class method; super()
            self.emit(depth, r.pick([f"m = obj.step; {t} = m({t})", f"fs = [obj.step, Model.twice]; {t} = fs[n % 2]({t})",
                                     f"{t} = Child.make(n).forward({t})", f"acc.append(type(Child.make(k)).__name__)"]))
        elif kind == 22:
            # numbers that change per call: a float next to a tensor, branches on numbers,
            # counters stored back and read again
            c = r.pick(["0.0", "0.7", "1.5", "-1.0"])
            self.emit(depth, r.pick([f"{t} = {t} * scale if scale > {c} else {t} - scale",
                                     f"{t} = {t} + (scale if n {r.pick(['>', '==', '<=', '!='])} {r.pick(['1', '2', '3'])} else k)",
                                     f"{t} = scale * {t} + k * {t}",
                                     f"obj.count = obj.count * 2 - 1; acc.append(obj.count)",
                                     f"obj.count += k; {t} = {t} * obj.count",
                                     f"calls += 1; acc.append(calls)",
                                     # stores into classes: counters, a subclass shadowing
                                     # its base's, a tensor kept on a class
                                     "Base.hits += 1; acc.append(Base.hits)",
                                     f"Child.hits = Child.hits + k; {t} = {t} * Child.hits",
                                     "type(obj).seen += n; acc.append(obj.seen)",
                                     f"Model.last = {t}; acc.append(Model.last)",
                                     f"Child.scaled_by = Child.scaled_by * 0.5; {t} = Child.make(n).forward({t})",
                                     # items read at an index that changes per call, a set
                                     # iterated, a dict keyed by ints read whole
                                     f"{t} = {t} * SIGMAS[obj.count % 4] + SIGMAS[-n]",
                                     f"{t} = {t} + log[n % 3] * SIGMAS[n]",
                                     f"for v in {{n, k, 3}}: {t} = {t} + v",
                                     f"for key, w in TABLE.items(): {t} = {t} * w; acc.append(key)",
                                     # a caller's deque appended to and read back; a value
                                     # read from a container, then a container changed that
                                     # is the same one from the third call on
                                     f"obj.hist.append({t}.sum()); acc.append(len(obj.hist)); {t} = {t} + obj.hist[0]",
                                     f"obj.hist.appendleft(n); acc.append(list(obj.hist))",
                                     "v0 = obj.mirror[0]; log.insert(0, n); acc.append(v0)",
                                     "v0 = obj.mirror[-1]; log[0] = k; acc.append((v0, obj.mirror[0]))",
                                     # stores at an index or by a key that changes per call,
                                     # read back or not, into a list that becomes another's
                                     f"log[n % len(log)] = k; acc.append(len(log))",
                                     f"obj.mirror[n % len(obj.mirror)] += 0.5; acc.append(obj.mirror[0])",
                                     f"data[n] = k; acc.append(len(data))",
                                     f"data[obj.count] = {t}.sum(); acc.append('a' in data)",
                                     ] if r.below(3) and not library else [
                                     # (a third of the time) a caller's slotted object (a
                                     # slot made on first use, deleted, a tensor kept), an
                                     # EasyDict, a Mapping class, a slotted object made here
                                     f"SLOT.n += k; acc.append(SLOT.n); {t} = {t} * SLOT.n",
                                     f"SLOT.t = {t} * 0.5; {t} = {t} + SLOT.t",
                                     "try:\n" + "    " * (depth + 1) + "acc.append(SLOT.opt)\n" + "    " * depth
                                     + "except AttributeError as e:\n" + "    " * (depth + 1) + "SLOT.opt = n; acc.append(str(e))",
                                     "if hasattr(SLOT, 'opt'): del SLOT.opt",
                                     f"EASY.k = n; {t} = {t} * EASY.scale; acc.append(EASY.get('k'))",
                                     f"acc.append(sorted(MAPPING.items())); {t} = {t} * MAPPING['w'] + len(MAPPING)",
                                     f"p = Slotted(n); p.t = {t}; {t} = p.t + p.n; acc.append(type(p).__name__)",
                                     # classes on tuple with protocols of their own, a
                                     # namespace, a weak reference whose owner changes, a
                                     # running total that starts as a number
                                     f"acc.append((TTYPES[n % 3] in KEYWORD, 'q' in BAG, LOOSE == (n,), TTYPES[k] == KEYWORD))",
                                     f"NS.calls = getattr(NS, 'calls', 0) + 1; {t} = {t} * NS.scale; acc.append(NS.calls)",
                                     f"o = OWNER(); acc.append(None if o is None else o.count); {t} = {t} if o is None else {t} * o.w",
                                     f"TOTAL.v += {t}.sum(); acc.append(show(TOTAL.v))"]))
        elif kind == 23:
            # itertools, a context manager of contextlib, grad modes, a module's hooks, a
            # caller's dict by an int key or by its truth, the newer tensor ops
            form = r.below(4)
            if form == 0:
                self.emit(depth, f"for u in itertools.chain([{t}], ({t} * 0.5,)):")
                self.emit(depth + 1, f"{t} = {t} + u")
            elif form == 1:
                self.emit(depth, f"with scoped(n) as s:")
                self.emit(depth + 1, f"{t} = {t} * s")
            elif form == 2:
                self.emit(depth, "with st.no_grad():")
                self.emit(depth + 1, f"{t} = {t} + float(st.is_grad_enabled())")
            self.emit(depth, r.pick([f"{t} = sum(a * b for a, b in itertools.product([{t}, {t} * 0.5], [1.0, 2.0]))",
                                     "acc.append(list(itertools.islice(itertools.count(n), 3)))",
                                     "acc.append([a - b for a, b in itertools.pairwise([n, k, 3])])",
                                     "acc.append(list(itertools.accumulate([n, k, 2])))",
                                     "acc.append(list(itertools.combinations(range(n + 1), 2)))",
                                     # iterators read as far as Python reads them; a mapping
                                     # made in the call copied by its class
                                     "it0 = iter([n, k, 3, 4, 5]); acc.append((list(itertools.islice(it0, k, k + 2, 2)), list(it0)))",
                                     "it0 = iter(range(n + 3)); acc.append((k in it0, list(it0)))",
                                     "acc.append(dict(Bag(Bag({(n, k): 1}) + Bag({(k, n): 2}))))",
                                     # tensors an lru_cache holds: looked up, read, updated
                                     f"{t} = {t} + table(k % 3).sum() * table(n % 3)[-1]; acc.append(tuple(table.cache_info()))",
                                     "table(n % 2).add_(0.5); acc.append(table(n % 2).tolist())",
                                     f"{t} = hooked({t}); acc.append(len(hook_seen))",
                                     f"{t} = {t} * levels.get(k * 10, 1.0); acc.append(10 * n in levels)",
                                     "acc.append(1 if data else 0)",
                                     f"{t} = {t} + {t}.abs().log1p() - {t}.atan() * {t}.prod()",
                                     f"{t} = {t}.cumprod(-1) * 0.5 + {t}.expm1().sinh()",
                                     f"{t} = {t}.scatter_add(-1, ({t} * 0).long(), {t})",
                                     "acc.append(len(events))"]))
        elif kind == 24:
            # random draws, which a graph makes when it runs, in the program's order
            self.emit(depth, r.pick([f"{t} = nn.functional.dropout({t}, 0.25, training=True)",
                                     f"{t} = {t} + st.rand_like({t})",
                                     f"st.randn(n); {t} = {t} * st.rand(1, dtype={t}.dtype)",
                                     f"acc.append(st.multinomial(st.tensor([0.5, 0.0, 1.0]), 2).tolist())",
                                     f"{t} = {t} + st.randint(0, 3, (1,)).to({t}.dtype)"]))
        else:
            self.emit(depth, r.pick(["acc.append(next(iter(gen(n))))", "acc.append(list(gen(k + 1)))",
                                     "acc.append(any(v > 2 for v in gen(n)))",
                                     "acc.append(all(v < 5 for v in gen(n)))",
                                     "acc.append(max(gen(n + 1)))"]))

    def function(self):
        r = self.r
        name = self.fresh("f")
        form = r.below(4)
        if form == 0:
            self.emit(0, f"def {name}(x, y, data, log, obj, n, k=1, scale=2.0, flag=False):")
        elif form == 1:
            self.emit(0, f"def {name}(x, y, data, log, obj, *rest, n, k=0, scale=1.5, flag=True):")
        elif form == 2:
            self.emit(0, f"def {name}(x, y, data, log, obj, n, /, k=2, *, scale=0.5, flag=False, **extra):")
        else:
            self.emit(0, f"def {name}(x, y, data, log, obj, n=1, k=3, scale=-1.0, flag=True):")
        self.emit(1, "global calls")
        self.emit(1, "acc = []")
        names = ["x", "y"]
        self.block(1, names, 3 + r.below(6))
        result = r.pick([f"{r.pick(names)}", f"({r.pick(names)}, acc)", f"{{'t': {r.pick(names)}, 'acc': acc}}",
                         f"[{r.pick(names)}, n, k]", f"{self.scalar_expr(names)}"])
        self.emit(1, f"return {result}")
        self.emit(0, "")
        self.emit(0, "")
        call = {0: "{f}(x, y, data, log, obj, n, k=k, scale=scale)",
                1: "{f}(x, y, data, log, obj, 7, n=n, k=k, scale=scale)",
                2: "{f}(x, y, data, log, obj, n, k, scale=scale, extra=1)",
                3: "{f}(x, y, data, log, obj, n=n, k=k, scale=scale)"}[form]
        self.functions.append(call.replace("{f}", name))

    def program(self):
        r = self.r
        self.lines.append(PRELUDE)
        for _ in range(2 + r.below(3)):
            self.function()
        calls = ", ".join(f"lambda x, y, data, log, obj, n, k, scale: {c}" for c in self.functions)
        self.emit(0, f"FUNCTIONS = [{calls}]")
        shapes = r.pick(["[(2, 3), (2, 3), (3, 3)]", "[(4,), (4,), (5,)]", "[(2, 2), (3, 2), (2, 2)]",
                         "[(1, 3), (1, 3), (1, 3)]"])
        dtypes = r.pick(["['float64', 'float64', 'float64']", "['float64', 'float32', 'float64']",
                         "['float32', 'float32', 'float32']"])
        self.emit(0, f"main({shapes}, {dtypes}, {r.below(1000)})")
        return "\n".join(self.lines) + "\n"


def repr_keys():
    return ["'a'", "'b'", "'c'"]


PRELUDE = '''import collections
import collections.abc
import contextlib
import dataclasses
import functools
import itertools
import logging
import math
import sys
import types
import weakref
from collections import namedtuple

import symtrace as st
import symtrace.nn as nn

calls = 0
LOGGER = logging.getLogger("fuzz")
LOGGER.addHandler(logging.StreamHandler(sys.stdout))
LOGGER.handlers[0].setFormatter(logging.Formatter("  log %(levelname)s %(funcName)s:%(lineno)d %(message)s"))
LOGGER.setLevel(logging.INFO)
LOGGER.propagate = False


def show(v):
    if isinstance(v, st.Tensor):
        return (v.dtype.name, v.shape, v.tolist())
    if isinstance(v, (list, tuple)):
        return type(v)([show(i) for i in v])
    if isinstance(v, dict):
        return {k: show(i) for k, i in v.items()}
    return v


def helper(a, b=1.0, *args, mode="a", **kw):
    if mode == "a":
        return a * b + len(args)
    return a - b


SCALE = 1.5
SIGMAS = [1.5, 0.75, -0.25, 2.0]
SEEN = {1, "a"}
TABLE = {0: 0.5, 3: -1.0, (1, 2): 2.0}


@functools.lru_cache(maxsize=2)
def table(m):
    return st.arange(m + 1.0) * 0.5


def checked(t, m):
    if m <= 0:
        raise ValueError(f"m is {m}")
    return t * m


class Base:
    scaled_by = 2.0
    hits = 0

    def __init__(self, n):
        self.n = n

    def forward(self, t):
        return t * self.scaled_by + self.n

    def describe(self):
        return f"{type(self).__name__}({self.n})"


class Child(Base):
    scaled_by = 3.0

    def forward(self, t):
        return super().forward(t) - 1.0

    @property
    def doubled(self):
        return self.n * 2

    @classmethod
    def make(cls, n):
        return cls(n + 1)


class Bag(dict):
    def __add__(self, other):
        out = self.__class__(self)
        for key, v in other.items():
            out[key] = out.get(key, 0) + v
        return out


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(st.tensor(1.5))
        self.shift = nn.Parameter(st.tensor(-0.25))

    def forward(self, t):
        return t * self.scale.to(t.dtype) + self.shift.to(t.dtype)


class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleList([Affine(), nn.ReLU(), Affine()])

    def forward(self, t):
        for part in self.parts:
            t = part(t)
        return t


affine = Affine().eval()
chain = Chain()
hooked = Affine()
hook_seen = []
hooked.register_forward_hook(lambda m, args, out: hook_seen.append(1))
hooked.register_forward_pre_hook(lambda m, args: (args[0] * 0.5,))
levels = {10: 1.5, 20: -0.5}
events = []


@contextlib.contextmanager
def scoped(n):
    events.append(n)
    try:
        yield n + 0.5
    finally:
        events.append(-n)


class Proxy:
    def __init__(self):
        self.known = {"w1": 1.0}

    def __getattr__(self, name):
        if name in self.known:
            return self.known[name]
        raise AttributeError(name)


proxy = Proxy()


class Lazy:
    def __init__(self, t):
        self.t = t

    @functools.cached_property
    def squared(self):
        return self.t * self.t


class Bounded:
    def __get__(self, obj, owner):
        return obj.__dict__.get("raw", 0.0)

    def __set__(self, obj, value):
        obj.__dict__["raw"] = max(-1.0, min(1.0, value))


class Clamped:
    value = Bounded()


@dataclasses.dataclass
class Pair:
    a: object
    b: int = 2

    def total(self):
        return self.a * self.b


Point = namedtuple("Point", "u v")


def mm(a):
    if a.ndim == 2:
        return a @ a.T @ a
    return a * 2.0


def apply(fn, t):
    return fn(t) + 1.0


def raise_if(cond):
    if cond:
        raise ValueError("asked to raise")


def pieces(t):
    yield t
    yield t * 2.0
    yield from [t + 1.0]


def gen(n):
    for i in range(n):
        yield i


def make_closure():
    factor = [1.5]

    def inner(t):
        factor[0] += 0.5
        return t * factor[0]
    return inner


closure = make_closure()


class Recorder:
    def __init__(self, acc):
        self.acc = acc

    def __enter__(self):
        self.acc.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.acc.append("exit")
        return False


class Model:
    seen = 0

    def __init__(self, w):
        self.w = w
        self.count = 0
        self.hist = collections.deque(maxlen=3)
        self.mirror = [0.25]
        self.tags = {0, "b"}

    def step(self, t):
        self.count += 1
        return t * 0.5 + self.w

    @staticmethod
    def twice(t):
        return t + t


class Slotted:
    __slots__ = ("n", "t", "opt")

    def __init__(self, n):
        self.n = n


class EasyDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class Weights(collections.abc.Mapping):
    def __init__(self, **entries):
        self._entries = entries

    def __getitem__(self, key):
        return self._entries[key]

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)


SLOT = Slotted(1)
EASY = EasyDict(scale=2.0)
MAPPING = Weights(w=0.5, b=1.5)


class TokenType(tuple):
    def __contains__(self, item):
        return item is not None and (self is item or item[:len(self)] == self)


class Anything(tuple):
    __contains__ = staticmethod(lambda item: True)


class Loose(tuple):
    def __eq__(self, other):
        return True

    __hash__ = tuple.__hash__


class Ratio(float):
    def __format__(self, spec):
        return "ratio " + format(float(self), spec)

    def __repr__(self):
        return f"Ratio({float(self)!r})"


class Label(str):
    def __repr__(self):
        return f"Label({str(self)!r})"


KEYWORD = TokenType(("Keyword",))
TTYPES = [TokenType(("Keyword", "DML")), TokenType(("Name",)), KEYWORD]
BAG = Anything(("a",))
LOOSE = Loose((1,))
NS = types.SimpleNamespace(scale=1.5)
TOTAL = types.SimpleNamespace(v=0.0)
OWNERS = [Model(3.0)]
OWNER = weakref.ref(OWNERS[0])


# Another Model in sets with `obj`; `obj` itself on the last call.
SPARE = Model(2.0)


def main(shapes, dtypes, seed):
    st.manual_seed(seed)
    data = {"a": 1, "b": 2.0, "c": "three"}
    log = [0, 1, 2]
    obj = Model(0.5)
    global SCALE, SPARE, OWNER
    for call in range(len(shapes)):
        if call == 1:
            SCALE = -0.5
            Child.scaled_by = 4.0
        if call == 1:
            OWNERS.clear()
        if call == 2:
            OWNER = weakref.ref(SPARE)
            TOTAL.v = 0.0
            Base.forward = lambda self, t: t - self.n
            SPARE = obj
            obj.mirror = log
            obj.tags = SEEN
            if "c" in data:
                data[Label("c")] = data.pop("c")
        dtype = getattr(st, dtypes[call])
        x = st.randn(*shapes[call], dtype=dtype)
        y = st.rand(*shapes[call], dtype=dtype)
        # The third call's scale equals the first's but is a float subclass's instance.
        n, k, scale = call + 1, call % 2, [2.0, -1.5, Ratio(2.0)][call]
        for i, fn in enumerate(FUNCTIONS):
            try:
                r = fn(x, x if call == 1 else y, data, log, obj, n, k, scale)
                print(call, i, "->", show(r))
            except Exception as e:
                print(call, i, "raised", type(e).__name__, e)
            if isinstance(getattr(obj, "kept", None), tuple):
                obj.kept[0].add_(1.0)
            print("   state", calls, obj.count, show(obj.w), show(data), show(log), show(list(obj.hist)),
                  show(getattr(obj, "kept", None)))
            print("   classes", Base.hits, Child.__dict__.get("hits"), Child.scaled_by, Model.seen,
                  show(Model.__dict__.get("last")))
            print("   slots", SLOT.n, show(getattr(SLOT, "t", None)), getattr(SLOT, "opt", None), sorted(EASY.items()))
            print("   namespaces", sorted(vars(NS).items()), show(TOTAL.v), sorted(SEEN, key=repr),
                  sorted(obj.tags, key=repr))


'''


if __name__ == "__main__":
    sys.stdout.write(Gen(int(sys.argv[1])).program())
