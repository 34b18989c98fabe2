#!/usr/bin/env python3
"""plan_vs_ptx.py: checks that what --emit=plan-yaml says the code does is what
--emit=ptx emits, entry by entry (the plan decides, the backend spells):

  - the flat layout's chunk: `mul.lo.u32 %tidv_, %tid_, CHUNK`;
  - every register value's registers: its `.reg ... v<ID>_<REGS>` declaration;
  - the fragment layout: the fragment base registers (%fwg_) exactly where a
    value is planned in mma16x8x16.acc;
  - each dot's instruction: wgmma.m64nNk16 / mma.m16n8k16 / mma.m16n8k32 in the
    entry's PTX for each planned one, and no tensor-core instruction the plan
    did not name; the grouped block order (%bx_, %by_) exactly where the plan
    has raster_group;
  - a dot that accumulates in its var's registers (accumulates_in): wgmma's D
    registers are the var's; one whose wait is deferred: a wgmma.wait_group
    that leaves groups pending, and none without such a dot or one waited for
    at its first use (wait_at: a later group may still run then).

  tests/plan_vs_ptx.py PHOBOSC FILE.ph [phobosc options...]
Prints one line per disagreement and a last line "N entries, N checks, N
differ"; exits 1 when any differ."""
import re
import subprocess
import sys


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"plan_vs_ptx: {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def plans(text):
    """Each variant's entry, chunk, register values (id, regs, layout) and dots."""
    out, cur = [], None
    for line in text.splitlines():
        m = re.match(r"- kernel: (\S+)", line)
        if m:
            cur = {"kernel": m.group(1), "values": [], "dots": []}
            out.append(cur)
            continue
        m = re.match(r"  (entry|chunk|raster_group): (\S+)", line)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2)
            continue
        m = re.match(r"    - \{id: (\d+), op: (\w+),.*residence: reg, layout: \"([^\"]*)\", regs: (\d+)(.*)\}", line)
        if m and cur is not None:
            cur["values"].append((int(m.group(1)), m.group(2), m.group(3), int(m.group(4))))
            d = re.search(r", dot: ([\w.]+)", m.group(5))
            if d:
                cur["dots"].append((int(m.group(1)), d.group(1)))
            if re.search(r", wait_at: \d+", m.group(5)):
                cur["late"] = True
            acc = re.search(r", accumulates_in: (\d+), wait_deferred: (true|false)", m.group(5))
            if acc:
                cur.setdefault("accs", []).append((int(m.group(1)), int(acc.group(1)), acc.group(2) == "true"))
    return out


def entries(ptx):
    """The PTX text of each .entry, by name."""
    parts = re.split(r"^\.visible \.entry (\w+)\(", ptx, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    phobosc, src, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
    ps = plans(run([phobosc, "--emit=plan-yaml", *opts, src]))
    es = entries(run([phobosc, "--emit=ptx", *opts, src]))
    checks = differ = 0

    def check(ok, what):
        nonlocal checks, differ
        checks += 1
        if not ok:
            differ += 1
            print(f"differs: {src} {' '.join(opts)}: {what}")

    for p in ps:
        name = p.get("entry")
        body = es.get(name)
        check(body is not None, f"no PTX entry {name}")
        if body is None:
            continue
        check(f"mul.lo.u32 %tidv_, %tid_, {p['chunk']};" in body, f"{name}: chunk {p['chunk']}")
        frag = any(layout.startswith("mma16x8x16.acc") for _, _, layout, _ in p["values"])
        check(("%fwg_" in body) == frag, f"{name}: fragment base {'missing' if frag else 'without a fragment value'}")
        for vid, op, layout, regs in p["values"]:
            if op == "var" and f"v{vid}_<" not in body:
                continue  # a register var the code never touches declares nothing
            check(re.search(rf"%\w+v{vid}_<{regs}>;", body) is not None, f"{name}: %{vid} ({layout}) in {regs} registers")
        want = set()
        for vid, path in p["dots"]:
            m = re.match(r"wgmma\.m64n(\d+)k16", path)
            if m:
                want.add(f"wgmma.mma_async.sync.aligned.m64n{m.group(1)}k16")
            elif path in ("mma.m16n8k16", "mma.m16n8k32"):
                want.add("mma.sync.aligned." + path[4:])
        have = set(re.findall(r"(wgmma\.mma_async\.sync\.aligned\.m64n\d+k16|mma\.sync\.aligned\.m16n8k\d+)", body))
        check(have == want, f"{name}: tensor-core instructions {sorted(have)}, the plan says {sorted(want)}")
        grouped = "raster_group" in p
        check(("mov.u32 %bx_, %nctaid.x;" in body) == grouped,
              f"{name}: the grouped block order {'missing' if grouped else 'without raster_group'}")
        accs = p.get("accs", [])
        for did, slot, _ in accs:
            check(re.search(rf"wgmma\.mma_async\S* \{{%fv{slot}_0,", body) is not None,
                  f"{name}: dot %{did} accumulates in %{slot}'s registers")
        deferred = any(d for _, _, d in accs)
        pending = re.search(r"wgmma\.wait_group\.sync\.aligned [1-9]", body) is not None
        late = p.get("late", False)
        check(pending == deferred or (pending and late),
              f"{name}: a wgmma wait that leaves groups pending {'missing' if deferred else 'without a deferred or late-waited dot'}")
    print(f"{len(ps)} entries, {checks} checks, {differ} differ")
    sys.exit(1 if differ else 0)


main()
