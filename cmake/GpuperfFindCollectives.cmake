# Finds what the c10d collectives need beyond LibTorch, after GpuperfFindTorch:
#   Gloo (the CPU variant): its headers. ProcessGroupGloo.hpp includes <gloo/...>, which neither
#     Debian's libtorch-dev nor the PyTorch wheel ships; Debian's libgloo-dev has them. The
#     symbols are in libtorch_cpu, so nothing more is linked.
#   NCCL (only with a CUDA LibTorch): nccl.h, which ProcessGroupNCCL.hpp includes and the wheel's
#     include directory lacks. Searched in NCCL_INCLUDE_DIR (cache or environment), then the
#     nvidia packages of `python3` (pip's nvidia-nccl-cu*: site-packages/nvidia/**/nccl.h), then
#     the system. libnccl.so.2 is linked when found beside it; the wheel's libtorch_cuda depends
#     on it anyway.
# Sets GPUPERF_WITH_GLOO, GPUPERF_GLOO_INCLUDE_DIRS, GPUPERF_WITH_NCCL, GPUPERF_NCCL_INCLUDE_DIRS,
# GPUPERF_NCCL_LIBRARY, and says at configure time what is missing. The *_INCLUDE_DIRS are empty
# for the compiler's own directories (an explicit -I/usr/include breaks #include_next).

include(GpuperfNvidiaPackages)

option(GPUPERF_GLOO "Build the Gloo (CPU) collectives when Gloo's headers are found" ON)
if(GPUPERF_GLOO)
  find_path(GPUPERF_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
endif()
if(GPUPERF_GLOO AND GPUPERF_GLOO_INCLUDE_DIR)
  set(GPUPERF_WITH_GLOO ON)
  _gpuperf_include_dirs(GPUPERF_GLOO_INCLUDE_DIRS "${GPUPERF_GLOO_INCLUDE_DIR}")
  message(STATUS "gpuperf: Gloo collectives (CPU variant) with ${GPUPERF_GLOO_INCLUDE_DIR}/gloo")
else()
  set(GPUPERF_WITH_GLOO OFF)
  if(GPUPERF_GLOO)
    message(STATUS "gpuperf: no Gloo headers (gloo/algorithm.h); the CPU collectives are not "
                   "built (on Debian: apt-get install libgloo-dev)")
  else()
    message(STATUS "gpuperf: GPUPERF_GLOO=OFF; the CPU collectives are not built")
  endif()
endif()

set(GPUPERF_WITH_NCCL OFF)
if(GPUPERF_WITH_CUDA)
  set(NCCL_INCLUDE_DIR "$ENV{NCCL_INCLUDE_DIR}" CACHE PATH "Directory holding nccl.h")
  set(_gpuperf_nccl_hints "")
  if(NCCL_INCLUDE_DIR)
    list(APPEND _gpuperf_nccl_hints "${NCCL_INCLUDE_DIR}")
  endif()
  gpuperf_nvidia_header_dirs(_gpuperf_nccl_wheel_dirs nccl.h)
  list(APPEND _gpuperf_nccl_hints ${_gpuperf_nccl_wheel_dirs})
  find_path(GPUPERF_NCCL_INCLUDE_DIR nccl.h HINTS ${_gpuperf_nccl_hints}
            PATHS "$ENV{CUDA_HOME}/include" /usr/local/cuda/include)
  if(GPUPERF_NCCL_INCLUDE_DIR)
    set(GPUPERF_WITH_NCCL ON)
    _gpuperf_include_dirs(GPUPERF_NCCL_INCLUDE_DIRS "${GPUPERF_NCCL_INCLUDE_DIR}")
    get_filename_component(_gpuperf_nccl_root "${GPUPERF_NCCL_INCLUDE_DIR}" DIRECTORY)
    find_library(GPUPERF_NCCL_LIBRARY NAMES nccl libnccl.so.2
                 HINTS "${_gpuperf_nccl_root}/lib" "${_gpuperf_nccl_root}/lib64" NO_DEFAULT_PATH)
    message(STATUS "gpuperf: NCCL collectives with ${GPUPERF_NCCL_INCLUDE_DIR}/nccl.h "
                   "(library: ${GPUPERF_NCCL_LIBRARY})")
  else()
    message(STATUS "gpuperf: nccl.h not found (set NCCL_INCLUDE_DIR, or pip install the "
                   "nvidia-nccl package matching the wheel); NCCL collectives are not built")
  endif()
endif()
