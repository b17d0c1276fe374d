# kiln/cmake/install_check.cmake — the `install` CTest test, run as `cmake -P`.
#
# Installs the build tree into a fresh prefix, then configures, builds and runs the outside
# projects test/install_consumer and examples/ against that prefix only (CMAKE_PREFIX_PATH), so it sees the
# installed headers <kiln/...> and package files, never the source tree.
# Inputs (-D): KILN_BUILD_DIR, KILN_SOURCE_DIR, WORK_DIR, GENERATOR, MAKE_PROGRAM,
# C_COMPILER, CXX_COMPILER, CXX_FLAGS, LINKER_FLAGS, BUILD_TYPE.
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install check: ${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "install check: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${WORK_DIR})

run_step("cmake --install" ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --prefix ${prefix})
foreach(required include/kiln/kiln.h include/kiln/frontend/tensor.h include/kiln/ir/ops.def)
  if(NOT EXISTS ${prefix}/${required})
    message(FATAL_ERROR "install check: ${required} was not installed")
  endif()
endforeach()

# The installed tool starts from the prefix alone: its RUNPATH finds lib/libkiln.so (no
# LD_LIBRARY_PATH; the variable is cleared for the run).
run_step("run the installed bin/kiln" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/kiln ops)
if(NOT step_output MATCHES "[0-9]+ ops")
  message(FATAL_ERROR "install check: the installed bin/kiln printed no op list:\n${step_output}")
endif()

# Configures and builds the outside project in `source` against the installed prefix only.
function(build_outside_project what source build)
  run_step("configure ${what}" ${CMAKE_COMMAND}
    -S ${source} -B ${build} -G ${GENERATOR}
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON)
  run_step("build ${what}" ${CMAKE_COMMAND} --build ${build})
endfunction()

build_outside_project("the consumer" ${KILN_SOURCE_DIR}/test/install_consumer ${consumer_build})
run_step("run the consumer" ${consumer_build}/consumer)
message(STATUS "${step_output}")

# The examples (examples/): a user backend, a custom op and a lowering, built and run as an
# outside project against the same prefix.
set(examples_build ${WORK_DIR}/examples)
build_outside_project("the examples" ${KILN_SOURCE_DIR}/examples ${examples_build})
foreach(example custom_backend custom_op)
  run_step("run examples/${example}" ${examples_build}/${example})
  message(STATUS "${step_output}")
endforeach()
# Deployment: one program exports a package, another serves it from the installed prefix.
run_step("run examples/deploy_export" ${examples_build}/deploy_export ${examples_build})
message(STATUS "${step_output}")
run_step("run examples/deploy_serve" ${examples_build}/deploy_serve ${examples_build})
message(STATUS "${step_output}")
