# Finds cuDNN's header and library for gpuperf's own cuDNN calls (the fused BatchNorm + add + ReLU
# of ResNet training), after GpuperfFindTorch, only with a CUDA LibTorch. The wheel's LibTorch
# loads cuDNN from pip's nvidia-cudnn-cu* package, and its CMake config does not export cuDNN, so
# cudnn.h and libcudnn.so.9 are searched in CUDNN_INCLUDE_DIR (cache or environment), then that
# package (the version LibTorch runs), then the CUDA toolkit and the system.
# Sets GPUPERF_WITH_CUDNN, GPUPERF_CUDNN_INCLUDE_DIRS, GPUPERF_CUDNN_LIBRARY.

include(GpuperfNvidiaPackages)

set(GPUPERF_WITH_CUDNN OFF)
if(GPUPERF_WITH_CUDA)
  set(CUDNN_INCLUDE_DIR "$ENV{CUDNN_INCLUDE_DIR}" CACHE PATH "Directory holding cudnn.h")
  gpuperf_nvidia_header_dirs(_gpuperf_cudnn_hints cudnn.h)
  find_path(GPUPERF_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDNN_INCLUDE_DIR} ${_gpuperf_cudnn_hints}
            PATHS "$ENV{CUDA_HOME}/include" /usr/local/cuda/include)
  if(GPUPERF_CUDNN_INCLUDE_DIR)
    get_filename_component(_gpuperf_cudnn_root "${GPUPERF_CUDNN_INCLUDE_DIR}" DIRECTORY)
    # NAMES_PER_DIR: the header's own package first (it ships only libcudnn.so.9), before any
    # other cuDNN on the system.
    find_library(GPUPERF_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
                 HINTS "${_gpuperf_cudnn_root}/lib" "${_gpuperf_cudnn_root}/lib64")
  endif()
  if(GPUPERF_CUDNN_INCLUDE_DIR AND GPUPERF_CUDNN_LIBRARY)
    set(GPUPERF_WITH_CUDNN ON)
    _gpuperf_include_dirs(GPUPERF_CUDNN_INCLUDE_DIRS "${GPUPERF_CUDNN_INCLUDE_DIR}")
    message(STATUS "gpuperf: cuDNN fused BatchNorm with ${GPUPERF_CUDNN_INCLUDE_DIR}/cudnn.h "
                   "(library: ${GPUPERF_CUDNN_LIBRARY})")
  else()
    message(STATUS "gpuperf: cudnn.h or libcudnn not found (set CUDNN_INCLUDE_DIR, or pip install "
                   "the nvidia-cudnn package matching the wheel); ResNet training runs BatchNorm "
                   "and ReLU as separate kernels")
  endif()
endif()
