# Warnings live in an INTERFACE target that gpuperf's own targets link PRIVATE; nothing edits
# global flags, so a parent project that adds gpuperf keeps its own settings.
add_library(gpuperf_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(gpuperf_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endif()
