# tests/gpu/launch_cost.py BUILD: the CPU time of phobos_launch through the autotuner and pinned, and do_bench of softmax 4096 x 1000 (after bench/build.sh)
import sys, os, time, ctypes
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import torch, bench
from triton.testing import do_bench
build = sys.argv[1]
lib = bench.load_lib(build)
ph = bench.Phobos(lib)
for dt, tdt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
    x = (torch.randn(4096, 1000, device="cuda") * 2).to(tdt)
    y = torch.full_like(x, float("nan"))
    k = ph.kernel(build, "softmax", "softmax_" + dt)
    l = bench.Launch(ph, k, [(x, dt), (y, dt)])
    l(); torch.cuda.synchronize()
    v = l.variant()
    err = (y.double() - torch.softmax(x.double(), -1)).abs().max().item()
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n): l()
    t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
    enq = (t1 - t0) / n * 1e6; tot = (t2 - t0) / n * 1e6
    ms = [do_bench(l, warmup=25, rep=100, return_mode="median") * 1e3 for _ in range(3)]
    tm = do_bench(lambda: torch.softmax(x, -1), warmup=25, rep=100, return_mode="median") * 1e3
    # the same kernel pinned: no variant choice on the CPU
    lib.phobos_kernel_pin_variant(k, v.split()[0].replace("+l2", "").encode())
    t0 = time.perf_counter()
    for _ in range(n): l()
    t1 = time.perf_counter(); torch.cuda.synchronize()
    penq = (t1 - t0) / n * 1e6
    pms = do_bench(l, warmup=25, rep=100, return_mode="median") * 1e3
    lib.phobos_kernel_pin_variant(k, None)
    print(f"{build} softmax_{dt} 4096x1000 [{v}] err {err:.1e}: enqueue {enq:.1f} us/launch, back-to-back {tot:.1f} us; "
          f"do_bench {ms[0]:.1f} {ms[1]:.1f} {ms[2]:.1f} us; pinned enqueue {penq:.1f} do_bench {pms:.1f}; torch {tm:.1f}", flush=True)
