# dcuda_add_rank_code(<target> <file.c>...)
#
# Rank code is written once and compiled twice: as C11 for CPU ranks, and,
# when the CUDA backend is built, as CUDA for GPU ranks (through a generated
# .cu file that includes the C source). DCUDA_KERNEL gives the two forms
# different symbols; DCUDA_KERNEL_REF on the host finds whichever exist.
function(dcuda_add_rank_code target)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs ${src} ABSOLUTE)
    target_sources(${target} PRIVATE ${abs})
    if(DCUDA_HAVE_CUDA AND DCUDA_GPU_RANK_CODE)
      get_filename_component(name ${src} NAME)
      set(gen ${CMAKE_CURRENT_BINARY_DIR}/gpu/${target}/${name}.cu)
      file(GENERATE OUTPUT ${gen} CONTENT "/* GPU form of ${name} (generated). */\n#include \"${abs}\"\n")
      target_sources(${target} PRIVATE ${gen})
    endif()
  endforeach()
endfunction()
