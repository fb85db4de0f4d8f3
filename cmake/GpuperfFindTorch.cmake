# Finds LibTorch, in this order:
#   1. what the user pointed CMake at (Torch_DIR, or CMAKE_PREFIX_PATH as a variable or in the
#      environment);
#   2. the torch package of `python3`, when it imports (the PyTorch wheel's LibTorch);
#   3. a system LibTorch such as Debian's libtorch-dev.
# Sets GPUPERF_WITH_CUDA when the LibTorch found has CUDA (target torch_cuda).
set(_gpuperf_user_torch FALSE)
if(DEFINED Torch_DIR OR DEFINED CMAKE_PREFIX_PATH OR DEFINED ENV{CMAKE_PREFIX_PATH}
   OR DEFINED ENV{Torch_DIR})
  find_package(Torch CONFIG QUIET)
  set(_gpuperf_user_torch ${Torch_FOUND})
endif()

if(NOT Torch_FOUND)
  find_program(GPUPERF_PYTHON3 python3)
  if(GPUPERF_PYTHON3)
    execute_process(
      COMMAND "${GPUPERF_PYTHON3}" -c "import torch, os; p = torch.utils.cmake_prefix_path; print(p if os.path.isdir(os.path.join(p, 'Torch')) else '')"
      OUTPUT_VARIABLE _gpuperf_py_torch OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE _gpuperf_py_rc)
    if(_gpuperf_py_rc EQUAL 0 AND _gpuperf_py_torch)
      find_package(Torch CONFIG QUIET PATHS "${_gpuperf_py_torch}" NO_DEFAULT_PATH)
    endif()
  endif()
endif()

if(NOT Torch_FOUND)
  find_package(Torch CONFIG REQUIRED)
endif()

if(TARGET torch_cuda)
  set(GPUPERF_WITH_CUDA ON)
else()
  set(GPUPERF_WITH_CUDA OFF)
endif()
message(STATUS "gpuperf: LibTorch ${Torch_VERSION} from ${Torch_DIR} (CUDA: ${GPUPERF_WITH_CUDA})")
