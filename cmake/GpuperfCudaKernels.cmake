# gpuperf's own CUDA kernels (libgpuperf/torch/src/**/*.cu), after GpuperfFindTorch: built where
# the LibTorch found has CUDA and a CUDA compiler is there (the PyTorch wheel's CMake package
# needs nvcc anyway). Without them the library runs ATen's or cuDNN's kernels in their place.
# Sets GPUPERF_WITH_CUDA_KERNELS, GPUPERF_WITH_NVJPEG and GPUPERF_CUDA_ARCHITECTURES (CMAKE_CUDA_ARCHITECTURES when
# given, else the GPUs gpuperf compares that the compiler still targets: T4 / RTX 20, A100,
# A10 / RTX 30, RTX 40 / L4, H100 / H200 and PTX for later ones; V100 where the compiler is older
# than CUDA 13, which dropped it).

set(GPUPERF_WITH_CUDA_KERNELS OFF)
set(GPUPERF_WITH_NVJPEG OFF)
if(GPUPERF_WITH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_gpuperf_user_cuda_architectures "${CMAKE_CUDA_ARCHITECTURES}")
    enable_language(CUDA)
    if(_gpuperf_user_cuda_architectures)
      set(GPUPERF_CUDA_ARCHITECTURES "${_gpuperf_user_cuda_architectures}")
    else()
      set(GPUPERF_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90)
      if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 13)
        list(PREPEND GPUPERF_CUDA_ARCHITECTURES 70-real)
      endif()
    endif()
    set(GPUPERF_WITH_CUDA_KERNELS ON)
    # nvJPEG (the CUDA Toolkit's JPEG decoder): the input pipeline's GPU path.
    find_package(CUDAToolkit QUIET)
    if(TARGET CUDA::nvjpeg)
      set(GPUPERF_WITH_NVJPEG ON)
      message(STATUS "gpuperf: JPEG decoding on the GPU with nvJPEG")
    endif()
    message(STATUS "gpuperf: own CUDA kernels with ${CMAKE_CUDA_COMPILER} "
                   "${CMAKE_CUDA_COMPILER_VERSION} for ${GPUPERF_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "gpuperf: no CUDA compiler found; max pooling runs on cuDNN or ATen")
  endif()
endif()
