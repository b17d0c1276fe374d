# Installs libkiln, its headers (as <kiln/...>) and a CMake package config so that an outside
# project can find_package(kiln CONFIG REQUIRED) and link kiln::kiln.
include(CMakePackageConfigHelpers)

install(TARGETS kiln EXPORT kilnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kiln_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The LLVM code generator libkiln opens on its first compile, from its own directory.
install(TARGETS kiln_llvm kiln_onednn LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(layer IN LISTS KILN_ALL_LAYERS)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln/${layer}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
endforeach()
# <kiln/kiln.h> is the umbrella header.
install(FILES ${PROJECT_SOURCE_DIR}/kiln/kiln.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)

install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
