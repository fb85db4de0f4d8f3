# Installed binaries find gpuperf's libraries and LibTorch without LD_LIBRARY_PATH.
#
#   gpuperf_install_rpath(<target> <install destination, relative to the prefix> [TORCH])
#
# sets the target's INSTALL_RPATH to $ORIGIN/<the way from its destination to the library
# directory>, so that the installed tree can move, and with TORCH adds LibTorch's library
# directory where find_package(Torch) found it (unless the linker searches it anyway).
# INSTALL_RPATH_USE_LINK_PATH adds the directories of the other libraries linked from outside
# the system's (cuDNN, NCCL). Libraries need their own: an executable's RUNPATH does not apply to
# the libraries that its libraries load.

set(GPUPERF_TORCH_LIBRARY_DIR "")
if(TORCH_LIBRARY)
  get_filename_component(GPUPERF_TORCH_LIBRARY_DIR "${TORCH_LIBRARY}" DIRECTORY)
  if(GPUPERF_TORCH_LIBRARY_DIR IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES OR
     GPUPERF_TORCH_LIBRARY_DIR IN_LIST CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES)
    set(GPUPERF_TORCH_LIBRARY_DIR "")
  endif()
endif()

function(gpuperf_install_rpath target destination)
  cmake_parse_arguments(ARG "TORCH" "" "" ${ARGN})
  file(RELATIVE_PATH _to_libdir "${CMAKE_INSTALL_PREFIX}/${destination}"
       "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(_rpath "$ORIGIN")
  if(_to_libdir)
    set(_rpath "$ORIGIN/${_to_libdir}")
  endif()
  if(ARG_TORCH AND GPUPERF_TORCH_LIBRARY_DIR)
    list(APPEND _rpath "${GPUPERF_TORCH_LIBRARY_DIR}")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${_rpath}"
                                             INSTALL_RPATH_USE_LINK_PATH ON)
endfunction()
