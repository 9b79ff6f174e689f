# `cmake --install`: kiln's libraries, its public headers and a package config, so that another
# project can find_package(kiln 0.1 CONFIG) and link kiln::kiln (docs/decisions/012).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

install(TARGETS kiln kiln_tile kiln_tensor kiln_autotune kiln_runtime kiln_dsl kiln_passes kiln_backend_cpu kiln_backend_cuda kiln_common kiln_ir
        EXPORT kiln-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kiln-targets NAMESPACE kiln:: DESTINATION ${KILN_CONFIG_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kiln-config.cmake.in ${PROJECT_BINARY_DIR}/kiln-config.cmake
                              INSTALL_DESTINATION ${KILN_CONFIG_DIR})
# Before 1.0 a minor version may break the API: 0.1 accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kiln-config-version.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kiln-config.cmake ${PROJECT_BINARY_DIR}/kiln-config-version.cmake
        DESTINATION ${KILN_CONFIG_DIR})

# The kiln tool (`kiln info`, `kiln cache clear`, ...) when it is built.
if(KILN_BUILD_TOOLS)
  install(TARGETS kiln_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
