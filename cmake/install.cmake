# `cmake --install`: the static library, the CLI, the public headers under
# include/mhalearn/ and a CMake package, so that another project can write
#   find_package(mhalearn REQUIRED)
#   target_link_libraries(app PRIVATE mhalearn::mhalearn)
# (examples/consumer/, checked by scripts/test-package.sh).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MHALEARN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mhalearn)

# The public headers: the umbrella src/mhalearn.hpp and what it includes,
# listed rather than globbed so that what is installed is a decision
# (scripts/test-package.sh compiles the umbrella against the installed tree,
# so a missing header fails there).
set(MHALEARN_PUBLIC_HEADERS
  data/instance_io.hpp data/npy.hpp data/oracle.hpp data/provenance.hpp
  geometry/convex_body.hpp geometry/min_norm_active_set.hpp
  learn/evaluate.hpp learn/learner.hpp learn/noise.hpp learn/reference_samples.hpp learn/report.hpp learn/report_rows.hpp
  model/conditions.hpp model/forward_check.hpp model/forward_fast.hpp model/forward_reference.hpp
  model/import_attention.hpp model/inputs.hpp model/instance_gen.hpp model/layer.hpp
  numeric/comparison.hpp numeric/rng.hpp numeric/scalar.hpp numeric/tolerance.hpp
  stages/fast_paths.hpp stages/stage_record.hpp
  stages/stage1/check.hpp stages/stage1/reference.hpp stages/stage1/wsum.hpp
  stages/stage2/body_check.hpp stages/stage2/certify.hpp stages/stage2/certify_reference.hpp stages/stage2/check.hpp
  stages/stage2/sculpt.hpp
  stages/stage3/check.hpp stages/stage3/margin.hpp
  stages/stage4/resculpt.hpp
  stages/stage5/check.hpp stages/stage5/span.hpp stages/stage5/span_membership.hpp
  stages/stage6/check.hpp stages/stage6/net.hpp stages/stage6/w_least_squares.hpp
  stages/polish/check.hpp stages/polish/polish.hpp
  util/processes.hpp
  verify/verify.hpp)
foreach(header IN LISTS MHALEARN_PUBLIC_HEADERS)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${CMAKE_SOURCE_DIR}/src/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mhalearn/${dir})
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/src/mhalearn.hpp ${CMAKE_BINARY_DIR}/generated/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mhalearn)

# A consumer compiles the headers (Eigen above all) with the library's ISA
# level: Eigen's alignment of heap blocks and its vector width depend on it, so
# objects built with other flags must not exchange matrices with the library.
# The same flags also give the consumer the library's pinned arithmetic.
foreach(flag IN LISTS MHALEARN_FP_FLAGS)
  target_compile_options(mhalearn_core INTERFACE $<INSTALL_INTERFACE:${flag}>)
endforeach()
target_compile_features(mhalearn_core INTERFACE cxx_std_20)
set_target_properties(mhalearn_core PROPERTIES EXPORT_NAME mhalearn)
add_library(mhalearn::mhalearn ALIAS mhalearn_core)

# The include directories (include and include/mhalearn) come from the
# target's INSTALL_INTERFACE (CMakeLists.txt).
install(TARGETS mhalearn_core EXPORT mhalearnTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS mhalearn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT mhalearnTargets NAMESPACE mhalearn:: DESTINATION ${MHALEARN_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/mhalearnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/mhalearnConfig.cmake INSTALL_DESTINATION ${MHALEARN_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/mhalearnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/mhalearnConfig.cmake ${CMAKE_BINARY_DIR}/mhalearnConfigVersion.cmake
        DESTINATION ${MHALEARN_INSTALL_CMAKEDIR})
