# tests/gpu/views.py BUILD: general strides as a torch user passes them, through ctypes (on the GPU
# machine, after bash bench/build.sh BUILD): views whose last dim is not contiguous (a transpose,
# every other column, a stride-0 broadcast) into bench kernels, checked against float64 torch,
# timed beside the contiguous call (spec 16.3)
import sys, os, ctypes
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import torch, bench
from triton.testing import do_bench
build = sys.argv[1]
lib = bench.load_lib(build)
ph = bench.Phobos(lib)
D = {torch.float32: "f32", torch.bfloat16: "bf16"}

def view_arg(t):
    a = lib.phobos_tensor_arg(t.data_ptr(), bench.DTYPES[D[t.dtype]], t.dim(), (ctypes.c_int64 * bench.MAX_RANK)(*t.shape))
    for d in range(t.dim()):
        a.tensor.strides[d] = t.stride(d)
    return a

def launch(k, tensors, scalars=()):
    args = [view_arg(t) for t in tensors] + [lib.phobos_float_arg(float(s)) for s in scalars]
    arr = (bench.PhobosArg * len(args))(*args)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream or None)
    def go():
        st = lib.phobos_launch(k, arr, len(args), stream)
        if st != 0:
            raise RuntimeError(f"{ph.status(st)}: {ph.error()}")
    return go

def report(name, go, y, ref, keep, tol):
    y.fill_(float("nan"))
    go(); torch.cuda.synchronize()
    v = lib.phobos_kernel_last_variant(keep).decode()
    err = ((y.double() - ref).abs() / (ref.abs() + ref.abs().pow(2).mean().sqrt())).max().item()
    nan = torch.isnan(y).sum().item()
    us = do_bench(go, warmup=10, rep=50, return_mode="median") * 1e3
    ok = nan == 0 and err <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name:48s} [{v}] rel err {err:.1e}, NaN {nan}, {us:.1f} us", flush=True)
    return ok

allok = True
g = torch.Generator(device="cuda"); g.manual_seed(7)
# softmax over the rows of a transposed [1000, 4093] f32: rows of 1000 with stride 4093
x = torch.randn(1000, 4093, device="cuda", generator=g) * 2
k = ph.kernel(build, "softmax", "softmax_f32")
for name, xv in (("softmax_f32 on x.t() [4093, 1000]", x.t()), ("softmax_f32 contiguous [4093, 1000]", x.t().contiguous())):
    y = torch.empty(4093, 1000, device="cuda")
    allok &= report(name, launch(k, [xv, y]), y, torch.softmax(xv.double(), -1), k, 1e-4)
# every other column of a bf16 [2048, 8192] into a strided Y (layernorm: W, B broadcast rows)
xb = (torch.randn(2048, 8192, device="cuda", generator=g)).to(torch.bfloat16)
w = torch.randn(4096, device="cuda", generator=g).to(torch.bfloat16); b = torch.randn(4096, device="cuda", generator=g).to(torch.bfloat16)
k2 = ph.kernel(build, "layernorm", "layernorm")
yb = torch.empty(2048, 8192, device="cuda", dtype=torch.bfloat16)
xv, yv = xb[:, ::2], yb[:, 1::2]
ref = torch.nn.functional.layer_norm(xv.double(), (4096,), w.double(), b.double(), 1e-5)
yv.fill_(float("nan")); yb[:, ::2].fill_(7.0)
allok &= report("layernorm on x[:, ::2] into y[:, 1::2]", launch(k2, [xv, w, b, yv], [1e-5]), yv, ref, k2, 2e-2)
gap_ok = bool((yb[:, ::2] == 7.0).all().item())
print(f"{'ok  ' if gap_ok else 'FAIL'} layernorm: y[:, ::2] untouched", flush=True)
allok &= gap_ok
# a broadcast along the last dim (stride 0): each row one value repeated (softmax: 1/N everywhere)
col = torch.randn(4093, 1, device="cuda", generator=g)
xv = col.expand(4093, 1000)
y = torch.empty(4093, 1000, device="cuda")
allok &= report("softmax_f32 on col.expand(4093, 1000) (stride 0)", launch(k, [xv, y]), y, torch.softmax(xv.double(), -1), k, 1e-4)
print("views: all ok" if allok else "views: FAILED", flush=True)
