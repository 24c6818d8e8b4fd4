# What the library was built from and with, for util/build_info.c
# (dcuda_build_info): the configuration, written into build_config.h at
# configure time, and the commit, written into build_commit.h at every
# build by cmake/DcudaGitInfo.cmake when it changed. dcuda_build_info(T V)
# makes target T wait for the commit and sets V to the folder of both.
function(dcuda_build_info target dir_var)
  set(DCUDA_GIT_DESCRIBE "" CACHE STRING
      "What the sources are when they are not a git checkout (a release's tag): reported as dcuda_build_info(\"describe\")")
  find_package(Git QUIET)
  set(dcuda_build_type "${CMAKE_BUILD_TYPE}")
  if(dcuda_build_type STREQUAL "")
    set(dcuda_build_type "none")
  endif()
  set(dcuda_build_backends "cpu")
  set(dcuda_build_cuda "none")
  set(dcuda_build_cuda_archs "none")
  if(DCUDA_HAVE_CUDA)
    string(APPEND dcuda_build_backends " cuda")
    set(dcuda_build_cuda "${CUDAToolkit_VERSION}")
    if(CMAKE_CUDA_ARCHITECTURES)
      string(REPLACE ";" " " dcuda_build_cuda_archs "${CMAKE_CUDA_ARCHITECTURES}")
    endif()
  endif()
  set(dcuda_build_managers "")
  if(DCUDA_HAVE_MPI)
    list(APPEND dcuda_build_managers mpi)
  endif()
  if(DCUDA_HAVE_UCX)
    list(APPEND dcuda_build_managers ucx)
  endif()
  string(REPLACE ";" " " dcuda_build_managers "${dcuda_build_managers}")
  if(dcuda_build_managers STREQUAL "")
    set(dcuda_build_managers "none")
  endif()
  set(dcuda_build_ucx "none")
  if(DCUDA_HAVE_UCX)
    set(dcuda_build_ucx "${DCUDA_UCX_VERSION}")
  endif()
  set(dcuda_build_sanitizer "${DCUDA_SANITIZE}")
  if(dcuda_build_sanitizer STREQUAL "")
    set(dcuda_build_sanitizer "none")
  endif()
  set(dcuda_build_trace off)
  if(DCUDA_PROXY_TRACE)
    set(dcuda_build_trace on)
  endif()
  include(GNUInstallDirs)
  set(dcuda_plugin_install_dir "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(dcuda_plugin_build_dir "${CMAKE_CURRENT_BINARY_DIR}")
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  configure_file(util/build_config.h.in ${dir}/build_config.h @ONLY)
  add_custom_target(dcuda_git_info
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DOUTPUT=${dir}/build_commit.h
            -DGIT_EXECUTABLE=${GIT_EXECUTABLE} -DDESCRIBE=${DCUDA_GIT_DESCRIBE}
            -P ${PROJECT_SOURCE_DIR}/cmake/DcudaGitInfo.cmake
    BYPRODUCTS ${dir}/build_commit.h
    COMMENT "dcuda: the commit built"
    VERBATIM)
  add_dependencies(${target} dcuda_git_info)
  set(${dir_var} ${dir} PARENT_SCOPE)
endfunction()
