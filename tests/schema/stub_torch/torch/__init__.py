"""A stand-in for torch: just enough of its API for the Python peers (benchmarks/python) to run
their CPU path on a machine without PyTorch, so that tests/schema/test_peer_record.py can check
the record a peer writes. Nothing is computed: tensors are placeholders, a step costs a few
Python calls, so the "throughput" it yields measures nothing. Never install or import it anywhere
else. With STUB_TORCH_CUDA=1 it also pretends to have one CUDA device ("Stub GPU"), whose events
read the host's clock."""
import contextlib
import os
import time
import types

__version__ = "0.0.0+stub"
float32, float16, bfloat16 = "float32", "float16", "bfloat16"
contiguous_format, channels_last = "contiguous_format", "channels_last"


class Tensor:
    """A placeholder tensor: every operation returns a placeholder; its value reads as 0.25."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self

    def __float__(self):
        return 0.25

    def item(self):
        return 0.25


class device:  # noqa: N801 - torch's spelling
    def __init__(self, spec, index=None):
        self.type, _, number = str(spec).partition(":")
        self.index = int(number) if number else index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


def manual_seed(seed):
    return None


def get_num_threads():
    return 1


def randn(*shape, **kwargs):
    return Tensor()


def randint(low, high, size, **kwargs):
    return Tensor()


def flatten(x, start_dim=0):
    return x


@contextlib.contextmanager
def autocast(device_type, dtype=None, enabled=True, cache_enabled=True):
    yield


@contextlib.contextmanager
def inference_mode():
    yield


@contextlib.contextmanager
def no_grad():
    yield


class _Optimizer:
    def __init__(self, params, **options):
        self.options = options

    def zero_grad(self, set_to_none=True):
        return None

    def step(self):
        return None


class _GradScaler:
    def __init__(self, device_type="cuda", enabled=True, init_scale=65536.0,
                 growth_interval=2000):
        self.enabled = enabled
        self.init_scale = init_scale

    def scale(self, loss):
        return loss

    def step(self, optimizer):
        optimizer.step()

    def update(self):
        return None

    def get_scale(self):
        return self.init_scale if self.enabled else 1.0


optim = types.SimpleNamespace(SGD=_Optimizer, Adam=_Optimizer, AdamW=_Optimizer)
amp = types.SimpleNamespace(GradScaler=_GradScaler)
_CUDA = os.environ.get("STUB_TORCH_CUDA") == "1"


class _Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self, stream=None):
        self.at = time.perf_counter()

    def synchronize(self):
        return None

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3  # milliseconds, as CUDA events say it


class _Graph:
    def replay(self):
        return None


@contextlib.contextmanager
def _context(*args, **kwargs):
    yield


version = types.SimpleNamespace(cuda="13.0" if _CUDA else None)
backends = types.SimpleNamespace(
    cudnn=types.SimpleNamespace(benchmark=False, allow_tf32=True, is_available=lambda: _CUDA,
                                version=lambda: 91900 if _CUDA else None),
    cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))
# The peak grows by 1 MiB with each reset_peak_memory_stats(), so a test can tell which
# reset a reading followed.
_peak_resets = [0]


def _reset_peak_memory_stats(device=None):
    _peak_resets[0] += 1


cuda = types.SimpleNamespace(
    is_available=lambda: _CUDA, current_device=lambda: 0, device_count=lambda: int(_CUDA),
    get_device_name=lambda device=None: "Stub GPU",
    get_device_properties=lambda index=0: types.SimpleNamespace(
        name="Stub GPU", multi_processor_count=132, major=9, minor=0, total_memory=150 << 30),
    max_memory_allocated=lambda device=None: ((1 << 30) + (_peak_resets[0] << 20)) if _CUDA else 0,
    reset_peak_memory_stats=_reset_peak_memory_stats,
    Event=_Event, Stream=lambda *args, **kwargs: Tensor(), current_stream=lambda *args: Tensor(),
    stream=_context, graph=_context, CUDAGraph=_Graph, synchronize=lambda *args: None,
    empty_cache=lambda: None, amp=types.SimpleNamespace(GradScaler=_GradScaler))
jit = types.SimpleNamespace(trace=lambda model, example: model, freeze=lambda model: model,
                            optimize_for_inference=lambda model: model)
_C = types.SimpleNamespace(_cuda_getDriverVersion=lambda: 13000)

from . import nn  # noqa: E402,F401 - torch.nn is an attribute of torch
