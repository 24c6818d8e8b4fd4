# Install rules: the headers (all of include/dcuda: rank code is
# header-only), the shared and static libraries, the CMake package
# (find_package(dcuda): dcuda::dcuda, dcuda::dcuda_static and
# dcuda_add_rank_code), the pkg-config file dcuda.pc and the documents.
# Every installed path is relative to the prefix, so that
# `cmake --install <build> --prefix <dir>` works for any <dir>.
include(CMakePackageConfigHelpers)

set(dcuda_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dcuda)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dcuda DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
install(TARGETS dcuda dcuda_static EXPORT dcuda-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT dcuda-targets NAMESPACE dcuda:: DESTINATION ${dcuda_cmake_dir})
# The plugins beside the library, where it looks for them.
foreach(plugin IN ITEMS dcuda_mpi dcuda_ucx dcuda_pmix)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endforeach()

# As for the SONAME: while the major version is 0, a minor version is a new ABI.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(dcuda_compatibility SameMinorVersion)
else()
  set(dcuda_compatibility SameMajorVersion)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dcuda-config.cmake.in
  ${PROJECT_BINARY_DIR}/package/dcuda-config.cmake
  INSTALL_DESTINATION ${dcuda_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/dcuda-config-version.cmake
  COMPATIBILITY ${dcuda_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/package/dcuda-config.cmake
              ${PROJECT_BINARY_DIR}/package/dcuda-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/DcudaRankCode.cmake
        DESTINATION ${dcuda_cmake_dir})

# pkg-config: the prefix is found from the file's own place (${pcfiledir}).
# Libs carry the CUDA runtime when the library has the CUDA backend: GPU
# rank code objects call it directly. Libs.private are for static links.
set(dcuda_pc_up "..")
string(REGEX MATCHALL "[^/]+" dcuda_libdir_parts "${CMAKE_INSTALL_LIBDIR}")
foreach(part IN LISTS dcuda_libdir_parts)
  string(APPEND dcuda_pc_up "/..")
endforeach()
set(dcuda_pc_libs "")
set(dcuda_pc_private ${CMAKE_THREAD_LIBS_INIT})
if(DCUDA_HAVE_CUDA)
  set(dcuda_pc_libs "-L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
# MPI and UCX are the plugins' (loaded at run time): neither library
# links them, so neither needs their flags.
list(APPEND dcuda_pc_private ${CMAKE_DL_LIBS})
list(REMOVE_DUPLICATES dcuda_pc_private)
string(JOIN " " dcuda_pc_libs_private ${dcuda_pc_private})
configure_file(${PROJECT_SOURCE_DIR}/cmake/dcuda.pc.in ${PROJECT_BINARY_DIR}/package/dcuda.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/dcuda.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
