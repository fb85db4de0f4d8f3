# gpuperf_nvidia_header_dirs(<out> <header>): the directories under the nvidia packages of
# `python3` (pip's nvidia-nccl-cu*, nvidia-cudnn-cu*, ...: site-packages/nvidia/**/<header>) that
# hold <header>, for find_path's HINTS. Empty without python3 or those packages. The PyTorch
# wheel's LibTorch loads its NCCL and cuDNN from there, so their headers match what runs.
function(gpuperf_nvidia_header_dirs out header)
  set(dirs "")
  find_program(GPUPERF_PYTHON3 python3)
  if(GPUPERF_PYTHON3)
    execute_process(
      COMMAND "${GPUPERF_PYTHON3}" -c "import nvidia, os; print(list(nvidia.__path__)[0])"
      OUTPUT_VARIABLE nvidia_dir OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND IS_DIRECTORY "${nvidia_dir}")
      file(GLOB_RECURSE headers "${nvidia_dir}/*/${header}")
      foreach(found IN LISTS headers)
        get_filename_component(dir "${found}" DIRECTORY)
        list(APPEND dirs "${dir}")
      endforeach()
    endif()
  endif()
  set(${out} "${dirs}" PARENT_SCOPE)
endfunction()

# Directories the compiler searches anyway come back empty (an explicit -I/usr/include breaks
# #include_next).
function(_gpuperf_include_dirs out dir)
  if("${dir}" IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    set(${out} "" PARENT_SCOPE)
  else()
    set(${out} "${dir}" PARENT_SCOPE)
  endif()
endfunction()
