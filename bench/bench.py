#!/usr/bin/env python3
"""The everyday-kernel benchmark: bench/*.ph through libphobos beside torch.

    bash bench/build.sh BUILD_DIR            # here: the cubins, into BUILD_DIR/bench
    python3 bench/bench.py BUILD_DIR [--quick] [--only NAME[,NAME]] [--shape 50257]   # on the GPU machine

For every kernel and shape: fresh random inputs (torch), outputs poisoned with
NaN, one launch through libphobos (ctypes; every status checked, the
runtime's message printed on failure), every output element checked against
a float64 torch reference, then both sides timed with triton's do_bench
(median; L2 flushed by its 256 MiB memset before each rep) in this process,
beside a 1 GiB device-to-device copy for the bandwidth ceiling. Prints a
table (ratio = torch / phobos, > 1: phobos faster) and writes it as JSON to
$OUT/bench.json when OUT is set. A kernel that fails to load, launch or
check prints one line and the run goes on; after a CUDA error that poisons
the process's context, the remaining kernels run in a fresh child process.

    python3 bench/bench.py BUILD_DIR --abi-check   # no GPU, no torch: the ctypes mirror
"""
import argparse
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback

# ---------------------------------------------------------------- libphobos
# runtime/include/phobos.h, mirrored. The sizes and offsets were checked with
# a C program compiled against the header (x86-64): phobos_tensor is 96 bytes
# (data 0, dtype 8, rank 12, shape 16, strides 56), phobos_arg 120 bytes
# (kind 0, tensor 8, i 104, f 112); the enums are 4-byte ints.
MAX_RANK = 5
STATUS = ["PHOBOS_OK", "PHOBOS_NO_DRIVER", "PHOBOS_NO_DEVICE", "PHOBOS_CUDA_ERROR", "PHOBOS_IO_ERROR",
          "PHOBOS_BAD_MANIFEST", "PHOBOS_BAD_CUBIN", "PHOBOS_NOT_FOUND", "PHOBOS_BAD_ARGUMENT",
          "PHOBOS_BAD_SHAPE", "PHOBOS_BAD_POINTER", "PHOBOS_NO_VARIANT", "PHOBOS_LAUNCH_LIMIT",
          "PHOBOS_CACHE_IGNORED", "PHOBOS_OUT_OF_MEMORY", "PHOBOS_INVALID"]
PHOBOS_OK, PHOBOS_CUDA_ERROR = 0, 3
DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i8": 4, "u8": 5, "i32": 6, "i64": 7, "bool": 8}
ARG_TENSOR, ARG_INT, ARG_FLOAT, ARG_BOOL = 0, 1, 2, 3


class PhobosTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_RANK), ("strides", ctypes.c_int64 * MAX_RANK)]


class PhobosArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", PhobosTensor), ("i", ctypes.c_int64), ("f", ctypes.c_double)]


LAYOUT = {"tensor": (96, {"data": 0, "dtype": 8, "rank": 12, "shape": 16, "strides": 56}),
          "arg": (120, {"kind": 0, "tensor": 8, "i": 104, "f": 112})}


def check_layout():
    for cls, key in ((PhobosTensor, "tensor"), (PhobosArg, "arg")):
        size, offs = LAYOUT[key]
        assert ctypes.sizeof(cls) == size, f"sizeof phobos_{key}: {ctypes.sizeof(cls)} != {size}"
        for f, o in offs.items():
            assert getattr(cls, f).offset == o, f"offsetof phobos_{key}.{f}: {getattr(cls, f).offset} != {o}"


def load_lib(build):
    """BUILD/runtime/libphobos.so (meson's; it dlopens libcuda). It links
    libyaml-0.so.2, which bench/build.sh copies into BUILD/bench for a device
    image that lacks it: preloaded globally when the plain load fails."""
    path = os.path.join(build, "runtime", "libphobos.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        yaml = os.path.join(build, "bench", "libyaml-0.so.2")
        if not os.path.exists(yaml):
            raise
        ctypes.CDLL(yaml, mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(path)
    vp, cp, i32, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int64
    protos = {
        "phobos_context_create": (i32, [i32, ctypes.POINTER(vp)]),
        "phobos_context_destroy": (None, [vp]),
        "phobos_last_error": (cp, [vp]),
        "phobos_status_name": (cp, [i32]),
        "phobos_module_load": (i32, [vp, cp, ctypes.POINTER(vp)]),
        "phobos_module_unload": (None, [vp]),
        "phobos_kernel_get": (i32, [vp, cp, ctypes.POINTER(vp)]),
        "phobos_launch": (i32, [vp, ctypes.POINTER(PhobosArg), i32, vp]),
        "phobos_cache_status": (i32, [vp]),
        "phobos_launch_grid": (i32, [vp, ctypes.POINTER(PhobosArg), i32, ctypes.POINTER(i64), vp]),
        "phobos_kernel_last_variant": (cp, [vp]),
        "phobos_kernel_pin_variant": (i32, [vp, cp]),
        "phobos_kernel_last_tensor_maps": (i32, [vp, ctypes.POINTER(i32)]),
        "phobos_tensor_arg": (PhobosArg, [ctypes.c_uint64, i32, i32, ctypes.POINTER(i64)]),
        "phobos_int_arg": (PhobosArg, [i64]),
        "phobos_float_arg": (PhobosArg, [ctypes.c_double]),
        "phobos_bool_arg": (PhobosArg, [i32]),
    }
    for name, (res, args) in protos.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


class PhobosError(Exception):
    def __init__(self, msg, status=None):
        super().__init__(msg)
        self.status = status


class Phobos:
    def __init__(self, lib):
        self.lib = lib
        self.ctx = ctypes.c_void_p()
        st = lib.phobos_context_create(0, ctypes.byref(self.ctx))
        if st != PHOBOS_OK:
            raise PhobosError(f"phobos_context_create: {self.status(st)}: {self.error()}", st)
        self.modules = {}
        self.entries = {}  # by kernel handle: its variants' entries (--variants)

    def status(self, st):
        return self.lib.phobos_status_name(st).decode()

    def error(self):
        e = self.lib.phobos_last_error(self.ctx)
        return e.decode(errors="replace") if e else ""

    def kernel(self, build, file, name):
        if file not in self.modules:
            path = os.path.join(build, "bench", file + ".cubin")
            if not os.path.exists(path):
                raise PhobosError(f"no {path}: bench/build.sh did not build it")
            mod = ctypes.c_void_p()
            st = self.lib.phobos_module_load(self.ctx, path.encode(), ctypes.byref(mod))
            if st != PHOBOS_OK:
                raise PhobosError(f"phobos_module_load({path}): {self.status(st)}: {self.error()}", st)
            self.modules[file] = mod
        k = ctypes.c_void_p()
        st = self.lib.phobos_kernel_get(self.modules[file], name.encode(), ctypes.byref(k))
        if st != PHOBOS_OK:
            raise PhobosError(f"phobos_kernel_get({name}): {self.status(st)}: {self.error()}", st)
        self.entries[k.value] = manifest_entries(os.path.join(build, "bench", file + ".yaml"), name)
        return k


def manifest_entries(path, kernel):
    """The variants' entries of one kernel, in manifest order (--variants)."""
    out, mine = [], False
    for line in open(path):
        if re.match(r"^- name: ", line):
            mine = line.split(":", 1)[1].strip() == kernel
        m = re.match(r"^\s+- entry: (\S+)", line)
        if m and mine:
            out.append(m.group(1))
    return out


def tensor_arg(lib, t, dtype):
    assert t.is_contiguous(), "libphobos takes contiguous row-major tensors"
    shape = (ctypes.c_int64 * MAX_RANK)(*t.shape)
    return lib.phobos_tensor_arg(t.data_ptr(), DTYPES[dtype], t.dim(), shape)


class Launch:
    """One kernel with its arguments packed once; __call__ launches it on
    torch's current stream and raises PhobosError on a failed status."""

    def __init__(self, ph, k, args, grid=None):
        self.ph, self.lib, self.k = ph, ph.lib, k
        self.keep = args  # the tensors stay alive while the packed pointers are in use
        packed = []
        for a in args:
            if isinstance(a, tuple):
                packed.append(tensor_arg(self.lib, a[0], a[1]))
            elif isinstance(a, bool):
                packed.append(self.lib.phobos_bool_arg(int(a)))
            elif isinstance(a, int):
                packed.append(self.lib.phobos_int_arg(a))
            else:
                packed.append(self.lib.phobos_float_arg(float(a)))
        self.n = len(packed)
        self.args = (PhobosArg * self.n)(*packed)
        self.grid = (ctypes.c_int64 * 3)(*grid) if grid else None
        import torch
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream or None)

    def __call__(self):
        if self.grid is None:
            st = self.lib.phobos_launch(self.k, self.args, self.n, self.stream)
        else:
            st = self.lib.phobos_launch_grid(self.k, self.args, self.n, self.grid, self.stream)
        if st != PHOBOS_OK:
            raise PhobosError(f"phobos_launch: {self.ph.status(st)}: {self.ph.error()}", st)

    def variant(self):
        v = self.lib.phobos_kernel_last_variant(self.k)
        built = ctypes.c_int(0)
        maps = self.lib.phobos_kernel_last_tensor_maps(self.k, ctypes.byref(built))
        return (v.decode() if v else "?") + (f" maps {built.value}/{maps}" if maps else "")


# ---------------------------------------------------------------- the kernels
# Each case: (kernel label, shape label, setup) where setup(ph) returns a dict
#   launch:  Launch, outs: [(name, tensor, reference)], torch: callable,
#   bytes or flops: for the rate, rtol: by output dtype
RTOL = {"f32": 1e-4, "bf16": 2e-2}


def cases(torch, F, build):
    dev = "cuda"
    bf16, f32 = torch.bfloat16, torch.float32
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)

    def randn(*shape, dtype=f32, scale=1.0):
        return (torch.randn(*shape, device=dev, generator=gen) * scale).to(dtype)

    def nan(*shape, dtype=f32):
        return torch.full(shape, float("nan"), device=dev, dtype=dtype)

    # the references every kernel of a kind shares (bench/ and bench/ports/)
    def rms_ref(x, w, eps):
        xd = x.double()
        return xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + eps) * w.double()

    def gelu_ref(xx):
        return 0.5 * xx * (1 + torch.tanh(0.7978845608028654 * (xx + 0.044715 * xx ** 3)))

    def softmax(dt, file="softmax", name=None):
        name = name or "softmax_" + dt
        tdt = f32 if dt == "f32" else bf16

        def make(R, N):
            def setup(ph):
                x = randn(R, N, dtype=tdt, scale=2.0)
                y = nan(R, N, dtype=tdt)
                return dict(launch=Launch(ph, ph.kernel(build, file, name), [(x, dt), (y, dt)]),
                            outs=[("Y", y, lambda: torch.softmax(x.double(), -1))],
                            torch=lambda: torch.softmax(x, -1), bytes=2 * R * N * x.element_size(), rtol=RTOL[dt])
            return setup
        return make

    def layernorm(R, N, file="layernorm", name="layernorm", y_second=False):
        def setup(ph):
            x, w, b = randn(R, N, dtype=bf16), randn(N, dtype=bf16), randn(N, dtype=bf16)
            y, eps = nan(R, N, dtype=bf16), 1e-5

            def ref():
                xd = x.double()
                mu = xd.mean(-1, keepdim=True)
                var = ((xd - mu) ** 2).mean(-1, keepdim=True)
                return (xd - mu) / torch.sqrt(var + eps) * w.double() + b.double()
            args = [(x, "bf16"), (y, "bf16"), (w, "bf16"), (b, "bf16"), eps] if y_second else \
                [(x, "bf16"), (w, "bf16"), (b, "bf16"), (y, "bf16"), eps]
            return dict(launch=Launch(ph, ph.kernel(build, file, name), args),
                        outs=[("Y", y, ref)], torch=lambda: F.layer_norm(x, (N,), w, b, eps),
                        bytes=2 * R * N * 2 + 2 * N * 2, rtol=RTOL["bf16"])
        return setup

    def rmsnorm(R, N):
        def setup(ph):
            x, r0, w = randn(R, N, dtype=bf16), randn(R, N, dtype=bf16), randn(N, dtype=bf16)
            res, y, eps = r0.clone(), nan(R, N, dtype=bf16), 1e-6
            h = (x + r0)  # bf16, as the unfused torch code rounds it

            def torch_fn():  # unfused: the add, then the norm
                hh = x + r0
                return F.rms_norm(hh, (N,), w, eps), hh
            return dict(launch=Launch(ph, ph.kernel(build, "rmsnorm", "rmsnorm_residual"),
                                      [(x, "bf16"), (res, "bf16"), (w, "bf16"), (y, "bf16"), eps]),
                        outs=[("Y", y, lambda: rms_ref(h, w, eps)), ("Res", res, lambda: h.double())], torch=torch_fn,
                        bytes=4 * R * N * 2 + N * 2, rtol=RTOL["bf16"])
        return setup

    def rope(T, H, D=128):
        def setup(ph):
            x, o = randn(T, H, D, dtype=bf16), nan(T, H, D, dtype=bf16)
            inv = 10000.0 ** (-torch.arange(0, D, 2, device=dev, dtype=torch.float64) / D)
            ang = torch.arange(T, device=dev, dtype=torch.float64)[:, None] * inv[None, :]
            cos, sin = torch.cos(ang).float().contiguous(), torch.sin(ang).float().contiguous()

            def ref():
                xd = x.double()
                x1, x2 = xd[..., :D // 2], xd[..., D // 2:]
                c, s = cos.double()[:, None, :], sin.double()[:, None, :]
                return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)

            def torch_fn():
                x1, x2 = x[..., :D // 2], x[..., D // 2:]
                c, s = cos[:, None, :], sin[:, None, :]
                return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).to(bf16)
            return dict(launch=Launch(ph, ph.kernel(build, "rope", "rope"),
                                      [(x, "bf16"), (cos, "f32"), (sin, "f32"), (o, "bf16")]),
                        outs=[("O", o, ref)], torch=torch_fn, bytes=2 * T * H * D * 2 + 2 * T * (D // 2) * 4,
                        rtol=RTOL["bf16"])
        return setup

    def silu_mul(M, N, file="silu_mul", name="silu_mul"):
        def setup(ph):
            g, u, o = randn(M, N, dtype=bf16), randn(M, N, dtype=bf16), nan(M, N, dtype=bf16)

            def ref():
                gd = g.double()
                return gd / (1 + torch.exp(-gd)) * u.double()
            return dict(launch=Launch(ph, ph.kernel(build, file, name), [(g, "bf16"), (u, "bf16"), (o, "bf16")]),
                        outs=[("O", o, ref)], torch=lambda: F.silu(g) * u, bytes=3 * M * N * 2, rtol=RTOL["bf16"])
        return setup

    def cross_entropy(R, V, file="cross_entropy"):
        def setup(ph):
            x = randn(R, V, dtype=bf16, scale=2.0)
            lab = torch.randint(0, V, (R,), device=dev, generator=gen, dtype=torch.int64)
            loss = nan(R)

            def ref():
                xd = x.double()
                return torch.logsumexp(xd, -1) - xd.gather(1, lab[:, None])[:, 0]
            return dict(launch=Launch(ph, ph.kernel(build, file, "cross_entropy"),
                                      [(x, "bf16"), (lab, "i64"), (loss, "f32")]),
                        outs=[("Loss", loss, ref)], torch=lambda: F.cross_entropy(x, lab, reduction="none"),
                        bytes=R * V * 2 + R * 8 + R * 4, rtol=RTOL["f32"])
        return setup

    def sum_all(N):
        def setup(ph):
            x = randn(N)
            nb = max(1, min(2048, -(-N // 65536)))  # the host's choice of partial sums
            p, cnt, out = nan(nb), torch.zeros(1, device=dev, dtype=torch.int32), nan(1)
            return dict(launch=Launch(ph, ph.kernel(build, "sum", "sum_all"),
                                      [(x, "f32"), (p, "f32"), (cnt, "i32"), (out, "f32")]),
                        outs=[("Out", out, lambda: x.double().sum().reshape(1))], torch=lambda: x.sum(),
                        bytes=N * 4, rtol=RTOL["f32"], note=f"NB {nb}")
        return setup

    def transpose(M, N):
        def setup(ph):
            x, y = randn(M, N), nan(N, M)
            return dict(launch=Launch(ph, ph.kernel(build, "transpose", "transpose"), [(x, "f32"), (y, "f32")]),
                        outs=[("Y", y, lambda: x.double().t())], torch=lambda: x.t().contiguous(),
                        bytes=2 * M * N * 4, rtol=RTOL["f32"])
        return setup

    def gemm(M, N, K, gelu):
        def setup(ph):
            a, b = randn(M, K, dtype=bf16), randn(K, N, dtype=bf16)
            c = nan(M, N, dtype=bf16)
            if gelu:
                bias = randn(N, dtype=bf16)

                def ref():
                    return gelu_ref(a.double() @ b.double() + bias.double())
                args = [(a, "bf16"), (b, "bf16"), (bias, "bf16"), (c, "bf16")]
                tfn = lambda: F.gelu(torch.mm(a, b) + bias, approximate="tanh")
            else:
                ref = lambda: a.double() @ b.double()
                args = [(a, "bf16"), (b, "bf16"), (c, "bf16")]
                tfn = lambda: torch.mm(a, b)
            return dict(launch=Launch(ph, ph.kernel(build, "gemm", "gemm_bias_gelu" if gelu else "gemm"), args),
                        outs=[("C", c, ref)], torch=tfn, flops=2 * M * N * K, rtol=RTOL["bf16"])
        return setup

    def gemm_i8(M, N, K):
        def setup(ph):
            a = torch.randint(-127, 128, (M, K), device=dev, generator=gen, dtype=torch.int8)
            b = torch.randint(-127, 128, (N, K), device=dev, generator=gen, dtype=torch.int8)
            sa = (torch.rand(M, 1, device=dev, generator=gen) * 0.01 + 1e-3).contiguous()
            sb = (torch.rand(1, N, device=dev, generator=gen) * 0.01 + 1e-3).contiguous()
            c = nan(M, N)
            ref = lambda: (a.double() @ b.double().t()) * sa.double() * sb.double()
            bt = b.t()
            try:  # torch's int8 GEMM (cuBLASLt), else the float emulation a user falls back to
                torch._int_mm(a, bt)
                tfn, tname = (lambda: torch._int_mm(a, bt).float() * sa * sb), "torch._int_mm"
            except Exception:  # noqa
                af, btf = a.to(bf16), bt.to(bf16)
                tfn, tname = (lambda: (af @ btf).float() * sa * sb), "bf16 mm emulation"
            return dict(launch=Launch(ph, ph.kernel(build, "gemm_i8", "gemm_i8"),
                                      [(a, "i8"), (b, "i8"), (sa, "f32"), (sb, "f32"), (c, "f32")]),
                        outs=[("C", c, ref)], torch=tfn, flops=2 * M * N * K, rtol=RTOL["f32"], note=tname)
        return setup

    # bench/ports/: kernels ported from other languages' tutorials and libraries
    def next_pow2(n):
        return 1 << (n - 1).bit_length()

    def port_softmax(R, N):
        return softmax("f32", f"ports/softmax_row.BN{next_pow2(N)}", "softmax")(R, N)

    def port_vector_add(N):
        def setup(ph):
            x, y, z = randn(N), randn(N), nan(N)
            return dict(launch=Launch(ph, ph.kernel(build, "ports/vector_add", "add"), [(x, "f32"), (y, "f32"), (z, "f32")]),
                        outs=[("Z", z, lambda: x.double() + y.double())], torch=lambda: x + y,
                        bytes=3 * N * 4, rtol=RTOL["f32"])
        return setup

    def port_layer_norm(R, N):
        return layernorm(R, N, "ports/layer_norm", "layer_norm", y_second=True)

    def port_rms(shape, file, name):  # a row's RMS norm over the last dim, with a weight
        def setup(ph):
            n = shape[-1]
            x, w, y, eps = randn(*shape, dtype=bf16), randn(n, dtype=bf16), nan(*shape, dtype=bf16), 1e-6
            k = ph.kernel(build, file, name)
            return dict(launch=Launch(ph, k, [(x, "bf16"), (w, "bf16"), (y, "bf16"), eps]),
                        outs=[("Y", y, lambda: rms_ref(x, w, eps))], torch=lambda: F.rms_norm(x, (n,), w, eps),
                        bytes=2 * x.numel() * 2 + n * 2, rtol=RTOL["bf16"])
        return setup

    def port_rms_norm(R, N):
        return port_rms((R, N), f"ports/rms_norm.BN{next_pow2(N)}", "rms_norm")

    def port_qk_norm(T, H, D=128):
        return port_rms((T, H, D), f"ports/qk_norm.BH{next_pow2(H)}", "qk_norm")

    def port_swiglu(R, N):
        return silu_mul(R, N, f"ports/swiglu.BN{next_pow2(N)}", "swiglu")

    def port_cross_entropy(R, V):
        return cross_entropy(R, V, "ports/cross_entropy")

    def port_gelu(M, N):
        def setup(ph):
            x, y = randn(M, N, dtype=bf16), nan(M, N, dtype=bf16)
            return dict(launch=Launch(ph, ph.kernel(build, "ports/gelu", "gelu"), [(x, "bf16"), (y, "bf16")]),
                        outs=[("Y", y, lambda: gelu_ref(x.double()))], torch=lambda: F.gelu(x, approximate="tanh"),
                        bytes=2 * M * N * 2, rtol=RTOL["bf16"])
        return setup

    def port_matmul(M, N, K):
        def setup(ph):
            a, b, c = randn(M, K, dtype=torch.float16), randn(K, N, dtype=torch.float16), nan(M, N, dtype=torch.float16)
            return dict(launch=Launch(ph, ph.kernel(build, "ports/matmul", "matmul"),
                                      [(a, "f16"), (b, "f16"), (c, "f16")]),
                        outs=[("C", c, lambda: a.double() @ b.double())], torch=lambda: torch.mm(a, b),
                        flops=2 * M * N * K, rtol=RTOL["bf16"])
        return setup

    sm32, sm16 = softmax("f32"), softmax("bf16")
    # (kernel, shape label, setup, in --quick)
    return [
        ("softmax_f32", "4096x1000", sm32(4096, 1000), True),
        ("softmax_f32", "4093x4096", sm32(4093, 4096), False),
        ("softmax_f32", "4096x50257", sm32(4096, 50257), False),
        ("softmax_f32", "4096x128256", sm32(4096, 128256), False),
        ("softmax_bf16", "4096x50257", sm16(4096, 50257), True),
        ("softmax_bf16", "4096x1000", sm16(4096, 1000), False),
        ("softmax_bf16", "4096x4096", sm16(4096, 4096), False),
        ("softmax_bf16", "4093x128256", sm16(4093, 128256), False),
        ("layernorm", "8192x4096", layernorm(8192, 4096), True),
        ("layernorm", "4093x5120", layernorm(4093, 5120), False),
        ("rmsnorm_residual", "16384x5120", rmsnorm(16384, 5120), True),
        ("rmsnorm_residual", "4093x4096", rmsnorm(4093, 4096), False),
        ("rope", "8192x32x128", rope(8192, 32), True),
        ("rope", "4093x28x128", rope(4093, 28), False),
        ("silu_mul", "4096x14336", silu_mul(4096, 14336), True),
        ("silu_mul", "4093x11008", silu_mul(4093, 11008), False),
        ("cross_entropy", "4096x50257", cross_entropy(4096, 50257), True),
        ("cross_entropy", "2048x128256", cross_entropy(2048, 128256), False),
        ("sum", "67108867", sum_all(67108867), True),
        ("sum", "268435456", sum_all(268435456), False),
        ("transpose", "8192x8192", transpose(8192, 8192), True),
        ("transpose", "4093x8191", transpose(4093, 8191), False),
        ("gemm", "4096^3", gemm(4096, 4096, 4096, False), True),
        ("gemm", "8192^3", gemm(8192, 8192, 8192, False), False),
        ("gemm", "4093x4096x4000", gemm(4093, 4096, 4000, False), False),
        ("gemm", "4096x14336x4096", gemm(4096, 14336, 4096, False), False),
        ("gemm_bias_gelu", "4096^3", gemm(4096, 4096, 4096, True), True),
        ("gemm_bias_gelu", "4093x11008x4096", gemm(4093, 11008, 4096, True), False),
        ("gemm_i8", "4096^3", gemm_i8(4096, 4096, 4096), True),
        ("gemm_i8", "8192^3", gemm_i8(8192, 8192, 8192), False),
        ("gemm_i8", "4093x4096x4000", gemm_i8(4093, 4096, 4000), False),
        ("port_vector_add", "2^28", port_vector_add(1 << 28), True),
        ("port_vector_add", "10^8+3", port_vector_add(10 ** 8 + 3), False),
        ("port_softmax", "4096x1000", port_softmax(4096, 1000), False),
        ("port_softmax", "4096x4096", port_softmax(4096, 4096), True),
        ("port_softmax", "4096x50257", port_softmax(4096, 50257), False),
        ("port_layer_norm", "8192x4096", port_layer_norm(8192, 4096), True),
        ("port_layer_norm", "4093x5120", port_layer_norm(4093, 5120), False),
        ("port_rms_norm", "16384x5120", port_rms_norm(16384, 5120), True),
        ("port_rms_norm", "4096x4096", port_rms_norm(4096, 4096), False),
        ("port_swiglu", "4096x14336", port_swiglu(4096, 14336), True),
        ("port_swiglu", "4093x5000", port_swiglu(4093, 5000), False),
        ("port_cross_entropy", "4096x50257", port_cross_entropy(4096, 50257), True),
        ("port_cross_entropy", "2048x128256", port_cross_entropy(2048, 128256), False),
        ("port_gelu", "8192x8192", port_gelu(8192, 8192), True),
        ("port_gelu", "4093x11008", port_gelu(4093, 11008), False),
        ("port_qk_norm", "8192x32x128", port_qk_norm(8192, 32), True),
        ("port_qk_norm", "4093x28x128", port_qk_norm(4093, 28), False),
        ("port_matmul", "4096^3", port_matmul(4096, 4096, 4096), True),
        ("port_matmul", "8192^3", port_matmul(8192, 8192, 8192), False),
        ("port_matmul", "4093x4096x4000", port_matmul(4093, 4096, 4000), False),
    ]


# ---------------------------------------------------------------- checking
def check(torch, outs, rtol):
    """Every element: |got - ref| <= rtol (|ref| + rms(ref)), ref in float64.
    Returns (ok, max abs error, max rel error, NaNs in the output)."""
    ok, max_abs, max_rel, nans = True, 0.0, 0.0, 0
    for _, got, ref_fn in outs:
        ref = ref_fn().double()
        g = got.double().reshape(ref.shape)
        bad_nan = torch.isnan(g) & ~torch.isnan(ref)
        n = int(bad_nan.sum())
        nans += n
        fin = ~torch.isnan(ref)
        err = (g - ref).abs()
        err = torch.where(fin, err, torch.zeros_like(err))
        rms = float(ref[fin].pow(2).mean().sqrt()) if bool(fin.any()) else 0.0
        denom = ref.abs() + (rms if rms > 0 else 1.0)
        rel = err / denom
        ma = float(torch.nan_to_num(err, nan=float("inf")).max())
        mr = float(torch.nan_to_num(rel, nan=float("inf")).max())
        max_abs, max_rel = max(max_abs, ma), max(max_rel, mr)
        if n or not (mr <= rtol):
            ok = False
        del ref, g, err, rel, denom
    return ok, max_abs, max_rel, nans


def is_cuda_error(e):
    s = str(e)
    return (isinstance(e, PhobosError) and e.status == PHOBOS_CUDA_ERROR) or "CUDA error" in s or \
        "cudaError" in s or "CUDA_ERROR" in s or "illegal memory access" in s


# ---------------------------------------------------------------- main
def fmt_row(r):
    if r.get("error"):
        return f"{r['kernel']:18s} {r['shape']:18s} ERROR {r['error']}"
    ph = f"{r['phobos_us']:10.1f}" if r.get("phobos_us") is not None else f"{'-':>10s}"
    to = f"{r['torch_us']:10.1f}" if r.get("torch_us") is not None else f"{'-':>10s}"
    ratio = f"{r['ratio']:6.2f}" if r.get("ratio") else f"{'-':>6s}"
    if "tflops" in r:
        rate = f"{r['tflops']:7.1f} TFLOP/s"
        pct = f"{'':>7s}"
    else:
        rate = f"{r.get('gbps', 0):7.0f} GB/s   "
        pct = f"{r.get('pct_copy', 0):6.1f}%"
    chk = "ok" if r["check"]["ok"] else "FAIL"
    chk += f" abs {r['check']['max_abs']:.1e} rel {r['check']['max_rel']:.1e}"
    if r["check"]["nans"]:
        chk += f" NaN {r['check']['nans']}"
    return f"{r['kernel']:18s} {r['shape']:18s} {ph} {to} {ratio} {rate} {pct}  {chk}  [{r.get('variant', '')}]"


HEADER = (f"{'kernel':18s} {'shape':18s} {'phobos us':>10s} {'torch us':>10s} {'ratio':>6s} {'rate':>15s} "
          f"{'%copy':>7s}  check  [variant]")


def run_child(argv_build, names, args, copy_gbps):
    """The kernels in `names` in a fresh process (after a CUDA error here)."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), argv_build, "--only", ",".join(names),
           "--child-json", path, "--copy-gbps", str(copy_gbps)]
    if args.quick:
        cmd.append("--quick")
    for t in args.shape:
        cmd += ["--shape", t]
    print(f"# restarting in a fresh process for: {', '.join(names)}", flush=True)
    subprocess.run(cmd)
    try:
        return json.load(open(path))["rows"]
    except Exception:  # noqa
        return [{"kernel": n, "shape": "-", "error": "child process gave no results"} for n in names]
    finally:
        os.unlink(path)


def abi_check(build):
    check_layout()
    lib = load_lib(build)
    shape = (ctypes.c_int64 * MAX_RANK)(7, 9, 11)
    a = lib.phobos_tensor_arg(0x1000, DTYPES["bf16"], 3, shape)
    assert a.kind == ARG_TENSOR and a.tensor.data == 0x1000 and a.tensor.dtype == 1 and a.tensor.rank == 3
    assert list(a.tensor.shape[:3]) == [7, 9, 11] and list(a.tensor.strides) == [0] * 5
    assert lib.phobos_int_arg(-5).kind == ARG_INT and lib.phobos_int_arg(-5).i == -5
    assert lib.phobos_float_arg(2.5).kind == ARG_FLOAT and lib.phobos_float_arg(2.5).f == 2.5
    assert lib.phobos_bool_arg(1).kind == ARG_BOOL and lib.phobos_bool_arg(1).i == 1
    for i, s in enumerate(STATUS):
        assert lib.phobos_status_name(i).decode() == s, (i, s)
    ctx = ctypes.c_void_p()
    st = lib.phobos_context_create(0, ctypes.byref(ctx))
    print(f"abi ok: phobos_tensor {ctypes.sizeof(PhobosTensor)} B, phobos_arg {ctypes.sizeof(PhobosArg)} B; "
          f"phobos_context_create: {STATUS[st]}: {lib.phobos_last_error(ctx).decode()}")
    lib.phobos_context_destroy(ctx)


def time_variants(ph, launch, do_bench, args, won_ms):
    """Every variant the shape takes, pinned in turn and timed as the
    winner was (--variants): what the autotuner chose among."""
    out = {}
    for entry in ph.entries.get(launch.k.value, []):
        if ph.lib.phobos_kernel_pin_variant(launch.k, entry.encode()) != PHOBOS_OK:
            continue
        try:
            launch()
            ms = do_bench(launch, warmup=args.warmup, rep=args.rep, return_mode="median")
            out[entry] = ms * 1e3
            print(f"    {entry:36s} {ms * 1e3:9.1f} us  {won_ms / ms:5.2f}x the autotuner's", flush=True)
        except PhobosError:
            pass  # the shape or the arguments do not fit it
    ph.lib.phobos_kernel_pin_variant(launch.k, None)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build", help="the build folder (BUILD/bench holds the cubins)")
    ap.add_argument("--quick", action="store_true", help="one shape per kernel")
    ap.add_argument("--only", action="append", default=[], help="kernel names (comma-separated or repeated)")
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warmup, ms")
    ap.add_argument("--rep", type=int, default=100, help="do_bench rep, ms")
    ap.add_argument("--shape", action="append", default=[],
                    help="only the shapes whose name contains this text (e.g. 50257; repeatable)")
    ap.add_argument("--variants", action="store_true", help="also time every variant each shape takes (pinned)")
    ap.add_argument("--abi-check", action="store_true", help="check the ctypes mirror against libphobos; no GPU")
    ap.add_argument("--child-json", help=argparse.SUPPRESS)
    ap.add_argument("--copy-gbps", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    build = args.build
    if args.abi_check:
        abi_check(build)
        return 0
    check_layout()
    only = {n for o in args.only for n in o.split(",") if n}

    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    torch.backends.cuda.matmul.allow_tf32 = False
    all_cases = cases(torch, F, build)
    known = {c[0] for c in all_cases}
    for n in only - known:
        print(f"# --only {n}: no such kernel (have: {', '.join(sorted(known))})")
    todo = [c for c in all_cases if (not only or c[0] in only) and (c[3] or not args.quick)
            and (not args.shape or any(t in c[1] for t in args.shape))]
    t_start = time.time()
    dev_name = torch.cuda.get_device_name()
    rows = []

    if args.copy_gbps:
        copy_gbps = args.copy_gbps
    else:
        n = 1 << 30
        x = torch.empty(n, dtype=torch.uint8, device="cuda")
        y = torch.empty_like(x)
        ms = do_bench(lambda: y.copy_(x), warmup=args.warmup, rep=args.rep, return_mode="median")
        copy_gbps = 2 * n / (ms * 1e-3) / 1e9
        del x, y
        print(f"# {dev_name}, torch {torch.__version__}; device copy 1 GiB: {ms * 1e3:.1f} us, "
              f"{copy_gbps:.0f} GB/s (read + write)", flush=True)

    lib = load_lib(build)
    try:
        ph = Phobos(lib)
    except PhobosError as e:
        print(f"# libphobos: {e}")
        return 1
    print(HEADER, flush=True)

    failed = False
    for i, (kname, shape, setup, _) in enumerate(todo):
        row = {"kernel": kname, "shape": shape}
        s = None
        try:
            s = setup(ph)
            launch = s["launch"]
            launch()
            torch.cuda.synchronize()
            row["variant"] = launch.variant()
            ok, ma, mr, nans = check(torch, s["outs"], s["rtol"])
            row["check"] = {"ok": ok, "max_abs": ma, "max_rel": mr, "nans": nans, "rtol": s["rtol"]}
            failed |= not ok
            p_ms = do_bench(launch, warmup=args.warmup, rep=args.rep, return_mode="median")
            t_ms = None
            try:
                t_ms = do_bench(s["torch"], warmup=args.warmup, rep=args.rep, return_mode="median")
            except Exception as e:  # noqa
                row["torch_error"] = str(e).splitlines()[0][:120]
            row["phobos_us"] = p_ms * 1e3
            row["torch_us"] = t_ms * 1e3 if t_ms else None
            row["ratio"] = (t_ms / p_ms) if t_ms else None
            if "flops" in s:
                row["tflops"] = s["flops"] / (p_ms * 1e-3) / 1e12
                if t_ms:
                    row["torch_tflops"] = s["flops"] / (t_ms * 1e-3) / 1e12
            else:
                row["bytes"] = s["bytes"]
                row["gbps"] = s["bytes"] / (p_ms * 1e-3) / 1e9
                row["pct_copy"] = 100 * row["gbps"] / copy_gbps
            if s.get("note"):
                row["note"] = s["note"]
            print(fmt_row(row), flush=True)
            if args.variants:
                row["variants"] = time_variants(ph, launch, do_bench, args, p_ms)
        except Exception as e:  # noqa
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            row["error"] = msg[:300]
            failed = True
            print(fmt_row(row), flush=True)
            if not isinstance(e, PhobosError):
                traceback.print_exc(limit=2)
            if is_cuda_error(e):
                rows.append(row)
                rest = []
                for c in todo[i + 1:]:
                    if c[0] not in rest and c[0] != kname:
                        rest.append(c[0])
                # the rest of this kernel's shapes are dropped with it; the other kernels go on elsewhere
                if rest:
                    rows.extend(run_child(build, rest, args, copy_gbps))
                break
        rows.append(row)
        del s
        torch.cuda.empty_cache()

    res = {"gpu": dev_name, "torch": torch.__version__, "copy_GBps": copy_gbps, "rows": rows,
           "seconds": time.time() - t_start}
    if args.child_json:
        json.dump(res, open(args.child_json, "w"), indent=1)
        return 1 if failed else 0
    print("\n==== bench: phobos against torch (ratio = torch us / phobos us; > 1: phobos faster)")
    print(f"# {dev_name}; device copy {copy_gbps:.0f} GB/s; {time.time() - t_start:.0f} s")
    print(HEADER)
    for r in rows:
        print(fmt_row(r))
    if os.environ.get("OUT"):
        path = os.path.join(os.environ["OUT"], "bench.json")
        json.dump(res, open(path, "w"), indent=1)
        print(f"# wrote {path}")
    return 1 if failed or any(r.get("error") or not r.get("check", {}).get("ok", False) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
