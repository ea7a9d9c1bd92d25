#!/usr/bin/env python3
"""Module cycles inside a crate: the strongly connected components of the graph whose edges
are a module's `crate::…` and `super::…` paths to another module (test modules left out).

    python3 .ci/modcycles.py [--max N] CRATE/src …

With `--max N` it fails when a cycle has more than N modules, and prints the cycle's edges.
A module's own submodules are not counted as dependencies of it (a folder module and its
children are one unit for its parent's purposes)."""
import os, re, sys
from collections import defaultdict

def modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.rs'): continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, src)[:-3].split(os.sep)
            if rel[-1] in ('mod',): rel = rel[:-1]
            if rel in (['lib'], ['main']): rel = []
            if 'tests' in rel or rel[-1:] == ['tests']: continue
            mods['::'.join(rel)] = p
    return mods

def strip_tests(text):
    # drop #[cfg(test)] mod blocks roughly: from '#[cfg(test)]' followed by 'mod' to end of file if at top level
    m = re.search(r'^#\[cfg\(test\)\]\s*\nmod \w+ \{', text, re.M)
    return text[:m.start()] if m else text

def resolve(path, mods):
    parts = path.split('::')
    while parts:
        k = '::'.join(parts)
        if k in mods: return k
        parts = parts[:-1]
    return None

def deps(mods):
    g = defaultdict(set)
    for m, p in mods.items():
        text = strip_tests(open(p).read())
        text = re.sub(r'//.*', '', text)
        refs = set()
        for u in re.finditer(r'\buse\s+crate::\{([^;]*)\};', text, re.S):
            for item in re.split(r',(?![^{]*\})', u.group(1)):
                item = item.strip()
                if not item: continue
                base = re.match(r'[\w:]+', item)
                if base: refs.add(base.group(0).rstrip(':'))
                inner = re.search(r'(\w+)::\{(.*)\}', item, re.S)
                if inner:
                    for sub in inner.group(2).split(','):
                        s = re.match(r'\s*([\w:]+)', sub)
                        if s: refs.add(inner.group(1) + '::' + s.group(1).rstrip(':'))
        for u in re.finditer(r'\bcrate::((?:\w+::)*\w+)', text):
            refs.add(u.group(1))
        # super:: references
        for u in re.finditer(r'\bsuper::((?:\w+::)*\w+)', text):
            base = m.split('::')[:-1] if m else []
            # file module: super is parent
            refs.add('::'.join(base + u.group(1).split('::')))
        for r in refs:
            t = resolve(r, mods)
            if t is not None and t != m and not m.startswith(t + '::') and t != '':
                g[m].add(t)
    return g

def sccs(g):
    index, low, stack, on, out, i = {}, {}, [], set(), [], [0]
    nodes = set(g) | {b for bs in g.values() for b in bs}
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
        for w in g.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index: visit(v)
    return out

def edges_in(src, comp):
    g = deps(modules(src))
    for a in comp:
        print('   ', a, '->', ' '.join(sorted(b for b in g.get(a, ()) if b in comp)))


if __name__ == '__main__':
    args = sys.argv[1:]
    limit = None
    if args[:1] == ['--max']:
        limit, args = int(args[1]), args[2:]
    worst = 0
    for src in args:
        cs = sorted(sccs(deps(modules(src))), key=len, reverse=True)
        print(f"{src}: {len(cs)} cycles, largest {len(cs[0]) if cs else 0}")
        for c in cs:
            print('  ', len(c), 'modules:', ' '.join(c))
            if limit is not None and len(c) > limit:
                edges_in(src, c)
        worst = max([worst] + [len(c) for c in cs])
    if limit is not None and worst > limit:
        sys.exit(f"a module cycle of {worst} modules; at most {limit} allowed (docs/ARCHITECTURE.md, Invariants)")
