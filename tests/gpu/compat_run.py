# tests/gpu/compat_run.py BUILD DIR: kernels written elsewhere (issue 23: Phobos's
# examples and the kernel blocks of its spec), compiled here unchanged by
#   bash tests/compat.sh --out DIR PATH...
# and run on the GPU machine through libphobos (ctypes), every variant pinned in
# turn, each checked against a float64 torch reference of the math the kernel
# states. The references are keyed by kernel name and parameter names (saxpy,
# gemm / matmul, flash_attention, kda, moba_attention, q8_matvec, quant_types);
# a kernel with none is reported as unchecked, never as passed. Inputs are fresh
# random draws, outputs poisoned with NaN first. Prints a line a variant and
# ends on "N passed, N failed, N unchecked".
import os, re, sys, ctypes, math
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import torch
import bench

TD = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
      "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32, "i64": torch.int64}


def parse_manifest(path):
    """kernels: name -> {params: [(name, kind, dtype, dims)], variants: [(entry, {const: value})]}"""
    ks, cur = {}, None
    for line in open(path):
        m = re.match(r"^- name: (\S+)", line)
        if m:
            cur = ks.setdefault(m.group(1), {"params": [], "variants": []})
            continue
        m = re.match(r"^\s+- \{name: (\w+), kind: (\w+), dtype: (\w+)(?:, dims: \[([^\]]*)\])?", line)
        if m and cur is not None:
            dims = [d.strip() for d in m.group(4).split(",")] if m.group(4) else []
            cur["params"].append((m.group(1), m.group(2), m.group(3), dims))
            continue
        m = re.match(r"^\s+- entry: (\S+)", line)
        if m and cur is not None:
            cur["variants"].append([m.group(1), {}])
            continue
        m = re.match(r"^\s+constants: \{(.*)\}", line)
        if m and cur is not None and cur["variants"]:
            for kv in m.group(1).split(","):
                if ":" in kv:
                    k, v = kv.split(":")
                    cur["variants"][-1][1][k.strip()] = int(v)
    return ks


g = torch.Generator(device="cuda")
g.manual_seed(23)


def rnd(*shape, scale=1.0):
    return torch.randn(*shape, device="cuda", generator=g, dtype=torch.float64) * scale


# Each reference: (dims, make(consts) -> (inputs by name, scalars by name), ref(inputs, scalars, consts) -> {out: f64})
def ref_saxpy(t, s, c):
    return {"out": s["alpha"] * t["x"].double() + t["y"].double()}


def ref_gemm(t, s, c):
    return {"C": s["alpha"] * (t["A"].double() @ t["B"].double()) + s["beta"] * t["C"].double()}


def ref_flash(t, s, c):
    sc = (t["Q"].double() @ t["K"].double().t()) * s["scale"]
    return {"O": torch.softmax(sc, -1) @ t["V"].double()}


def ref_moba(t, s, c):
    q, k, v = t["Q"].double(), t["K"].double(), t["V"].double()
    ch = c["CHUNK"]
    ksum = k.view(-1, ch, k.shape[1]).sum(1)                      # [Nk / CHUNK, D]
    gate = (q @ ksum.t()) * s["inv_chunk"]                         # [Nq, Nk / CHUNK]
    sc = (q @ k.t()) * s["scale"] + gate.repeat_interleave(ch, dim=1)
    return {"O": torch.softmax(sc, -1) @ v}


def ref_kda(t, s, c):
    # o_i = scale * sum_{j <= i} exp(B_i - B_j) (q_i . k_j) v_j, B the running sum of
    # the log-gates over all tokens: the chunked recurrence's closed form
    q, k, v, gl = t["Q"].double(), t["K"].double(), t["V"].double(), t["G"].double()
    b = torch.cumsum(gl[:, 0], 0)
    decay = torch.tril(torch.exp(b[:, None] - b[None, :]))
    return {"O": s["scale"] * ((q @ k.t()) * decay) @ v}


def ref_q8(t, s, c):
    w = t["W"].double() * t["S"].double().repeat_interleave(32, dim=0)[: t["W"].shape[0]]
    return {"C": t["A"].double() @ w}


def ref_quant(t, s, c):
    out = t["W"].double() * t["S"].double() + (t["H"].double() + t["S"].double())
    return {"C": out.float().to(torch.bfloat16).double()}


REFS = {  # name: (param names, dims, scalars, tolerance by output dtype, reference)
    "saxpy": (["x", "y", "out", "alpha"], {"N": 1 << 20}, {"alpha": 1.5}, ref_saxpy),
    "gemm": (["A", "B", "C", "alpha", "beta"], {"M": 512, "N": 512, "K": 512}, {"alpha": 0.75, "beta": 0.5}, ref_gemm),
    "matmul": (["A", "B", "C", "alpha", "beta"], {"M": 512, "N": 512, "K": 512}, {"alpha": 0.75, "beta": 0.5}, ref_gemm),
    "flash_attention": (["Q", "K", "V", "O", "scale"], {"Nq": 512, "Nk": 1024, "D": 64}, {"scale": 0.125}, ref_flash),
    "moba_attention": (["Q", "K", "V", "O", "scale", "inv_chunk"], {"Nq": 512, "Nk": 1024, "D": 64},
                       {"scale": 0.125, "inv_chunk": None}, ref_moba),
    "kda": (["Q", "K", "V", "G", "O", "scale"], {"N": 512, "D": 64}, {"scale": 0.125}, ref_kda),
    "q8_matvec": (["A", "W", "S", "C"], {"K": 4096, "N": 4096, "KB": 128}, {}, ref_q8),
    "quant_types": (["W", "S", "H", "C"], {"M": 256, "N": 256}, {}, ref_quant),
}
TOL = {"f32": 1e-4, "f16": 2e-2, "bf16": 2e-2}


def make_input(name, dtype, shape, kernel):
    if dtype in ("i8", "u8"):
        return torch.randint(-127 if dtype == "i8" else 0, 128, shape, device="cuda", generator=g, dtype=TD[dtype])
    if kernel == "kda" and name == "G":  # log-gates: small and negative (a decay)
        return (-torch.rand(*shape, device="cuda", generator=g, dtype=torch.float64) * 0.05).to(TD[dtype])
    if kernel == "q8_matvec" and name == "S":
        return (torch.rand(*shape, device="cuda", generator=g, dtype=torch.float64) * 0.01).to(TD[dtype])
    scale = 0.5 if kernel == "gemm" and dtype == "f16" else 1.0  # an f16 accumulator over K 512
    return rnd(*shape, scale=scale).to(TD[dtype])


def run_file(ph, lib, build_dir, stem, tally):
    man = parse_manifest(os.path.join(build_dir, stem + ".yaml"))
    mod = ctypes.c_void_p()
    st = lib.phobos_module_load(ph.ctx, os.path.join(build_dir, stem + ".cubin").encode(), ctypes.byref(mod))
    if st != 0:
        print(f"FAIL {stem}: phobos_module_load: {ph.status(st)}: {ph.error()}")
        tally["failed"] += 1
        return
    for kname, k in man.items():
        spec = REFS.get(kname)
        names = [p[0] for p in k["params"]]
        if not spec or spec[0] != names:
            print(f"---- {stem}: {kname}({', '.join(names)}): no reference here; unchecked")
            tally["unchecked"] += 1
            continue
        _, dims, scalars, reffn = spec
        kh = ctypes.c_void_p()
        st = lib.phobos_kernel_get(mod, kname.encode(), ctypes.byref(kh))
        if st != 0:
            print(f"FAIL {stem}: phobos_kernel_get({kname}): {ph.error()}")
            tally["failed"] += 1
            continue
        for entry, consts in k["variants"]:
            env = dict(dims)
            env.update({c: v for c, v in consts.items() if c in env})  # pinned dims (D 64)
            tens, outs, args, sc = {}, [], [], {}
            for pname, kind, dtype, pd in k["params"]:
                if kind == "tensor":
                    shape = [env[d] if d in env else int(d) for d in pd]
                    written = pname in ("C", "O", "out")
                    if written and not (kname in ("gemm", "matmul") and pname == "C"):
                        t = torch.full(shape, float("nan"), device="cuda", dtype=TD[dtype])
                    else:
                        t = make_input(pname, dtype, shape, kname)
                    tens[pname] = t
                    if written:
                        outs.append((pname, dtype))
                    args.append((t, dtype))
                else:
                    v = scalars[pname]
                    if v is None:  # moba's inv_chunk: the mean over the variant's chunk
                        v = 1.0 / consts["CHUNK"]
                    sc[pname] = v
                    args.append(float(v))
            before = {n: t.clone() for n, t in tens.items()}
            ref = reffn(before, sc, consts)
            st = lib.phobos_kernel_pin_variant(kh, entry.encode())
            if st != 0:
                print(f"FAIL {stem}: pin {entry}: {ph.error()}")
                tally["failed"] += 1
                continue
            try:
                bench.Launch(ph, kh, args)()
                torch.cuda.synchronize()
            except bench.PhobosError as e:
                print(f"FAIL {stem}: {entry} {consts}: {e}")
                tally["failed"] += 1
                continue
            worst, nan = 0.0, 0
            for oname, dtype in outs:
                got, want = tens[oname].double(), ref[oname]
                nan += int(torch.isnan(got).sum().item())
                rms = want.pow(2).mean().sqrt().item()
                err = ((got - want).abs() / (want.abs() + rms)).max().item()
                worst = max(worst, err if not math.isnan(err) else float("inf"))
            tol = max(TOL.get(d, 1e-4) for _, d in outs)
            if kname == "gemm" and outs and outs[0][1] == "f16":
                tol = 3e-2  # the f16 accumulator (acc: tile<f16>) rounds every step
            ok = nan == 0 and worst <= tol
            tally["passed" if ok else "failed"] += 1
            print(f"{'ok  ' if ok else 'FAIL'} {stem}: {entry} {consts}: rel err {worst:.2e} (tol {tol:g}), NaN {nan}",
                  flush=True)
        lib.phobos_kernel_pin_variant(kh, None)


def main():
    build, d = sys.argv[1], sys.argv[2]
    lib = bench.load_lib(build)
    ph = bench.Phobos(lib)
    tally = {"passed": 0, "failed": 0, "unchecked": 0}
    stems = sorted(f[:-6] for f in os.listdir(d) if f.endswith(".cubin"))
    for stem in stems:
        run_file(ph, lib, d, stem, tally)
    print(f"{tally['passed']} passed, {tally['failed']} failed, {tally['unchecked']} unchecked")
    sys.exit(1 if tally["failed"] else 0)


main()
