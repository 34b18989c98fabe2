# tests/gpu/l2_ab.py BUILD DIR LABEL [KINDS]: one build of tests/gpu/l2_ab.ph
# (DIR/bench/l2_ab.cubin and .yaml) over long-row softmax shapes, every variant
# pinned in turn and checked against float64 torch (outputs poisoned with NaN
# first), the fastest kept; the device copy of the same bytes and
# torch.softmax timed in the same process (do_bench: L2 flushed, median).
# KINDS: row,blk (default both). Run by tests/gpu/l2_ab.sh.
import sys, os, tempfile
os.environ["PHOBOS_CACHE_DIR"] = tempfile.mkdtemp(prefix="phc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import bench, torch
from triton.testing import do_bench
build, d, label = sys.argv[1], sys.argv[2], sys.argv[3]
kinds = sys.argv[4].split(",") if len(sys.argv) > 4 else ["row", "blk"]
lib = bench.load_lib(build)
ph = bench.Phobos(lib)
for R, N, dt in ((4096, 50257, "bf16"), (4096, 50257, "f32"), (4093, 128256, "bf16"), (4096, 128256, "f32")):
    tdt = torch.bfloat16 if dt == "bf16" else torch.float32
    torch.manual_seed(0)
    x = torch.randn(R, N, device="cuda", dtype=tdt)
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), 1)
    tc = do_bench(lambda: y.copy_(x), warmup=10, rep=60, return_mode="median")
    tt = do_bench(lambda: torch.softmax(x, 1), warmup=10, rep=60, return_mode="median")
    best = None
    for name in [k + "_" + dt for k in kinds]:
        k = ph.kernel(d, "l2_ab", name)
        L = bench.Launch(ph, k, [(x, dt), (y, dt)])
        for entry in bench.manifest_entries(os.path.join(d, "bench", "l2_ab.yaml"), name):
            if lib.phobos_kernel_pin_variant(k, entry.encode()) != 0:
                continue
            try:
                y.fill_(float("nan")); L(); torch.cuda.synchronize()
            except bench.PhobosError:
                continue
            err = ((y.double() - ref).abs().max()).item()
            if not err < (2e-2 if dt == "bf16" else 1e-5):
                print(f"  {label} {entry}: WRONG max abs err {err}", flush=True)
                continue
            t = do_bench(L, warmup=10, rep=60, return_mode="median")
            if best is None or t < best[0]:
                best = (t, entry)
    t, entry = best
    print(f"{label:7s} {R}x{N} {dt:5s}: {t*1e3:8.1f} us {tc/t*100:5.1f}% of copy {tt/t:5.2f}x torch ({entry}); copy {tc*1e3:.1f} torch {tt*1e3:.1f}", flush=True)
