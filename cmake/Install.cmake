# The installed package: `cmake --install build --prefix DIR` puts the library's layers, their
# headers and static libraries, in DIR with a CMake package, so that a project of a reader's own
# says find_package(attn REQUIRED) and links attn::math, attn::fast, attn::text, attn::numpy or
# attn::gpt.
# attn_layer() (lib/CMakeLists.txt) installs each layer into the export set attnTargets; this
# file installs that export and the package's config and version files. The test repo.install
# builds tests/install/consumer, a project of that kind, against a fresh install.
include(CMakePackageConfigHelpers)
set(ATTN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/attn)

install(EXPORT attnTargets NAMESPACE attn:: DESTINATION ${ATTN_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/attnConfig.cmake INSTALL_DESTINATION ${ATTN_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may change the interface, so only the same minor version will do.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/attnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/attnConfig.cmake ${PROJECT_BINARY_DIR}/attnConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/ArmadilloTarget.cmake DESTINATION ${ATTN_INSTALL_CMAKEDIR})
