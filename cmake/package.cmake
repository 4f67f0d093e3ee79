# The C++ library as a package: `cpack -G DEB` (or `-G TGZ`) in a build folder makes xgpu-dev, the
# install component `dev` (headers, static libraries, the CMake package config) under /usr, for
# find_package(xgpu) as `cmake --install` gives it. The Python module has its wheel instead
# (scripts/wheel.sh), the programs stay in the build folder.
set(CPACK_PACKAGE_NAME xgpu-dev)
set(CPACK_PACKAGE_VENDOR xgpu)
set(CPACK_PACKAGE_CONTACT "xgpu maintainers <xgpu@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU kernels from source text, device arrays, sparse matrices and Krylov solvers on CUDA and OpenCL (C++ library)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};xgpu;dev;/")
set(CPACK_GENERATOR DEB TGZ)
set(CPACK_PACKAGE_FILE_NAME "xgpu-dev-${PROJECT_VERSION}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_STRIP_FILES OFF) # static libraries: their symbols are what a program links
# What a program built on the library needs: a C++20 compiler, and for the OpenCL backend the ICD
# loader and headers (find_package(OpenCL) in xgpuConfig.cmake); a driver (ICD) to run on.
# fmt and nlohmann-json are compiled in; CUDA is loaded at run time.
set(xgpu_deb_depends "g++ (>= 4:12) | clang (>= 1:14), cmake (>= 3.20)")
if("opencl" IN_LIST xgpu_backends)
  string(APPEND xgpu_deb_depends ", ocl-icd-opencl-dev")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
endif()
if(xgpu_metis MATCHES "\\.so")
  string(APPEND xgpu_deb_depends ", libmetis-dev") # XGPU_WITH_METIS=ON took the shared library
endif()
if(xgpu_distributed)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libopenmpi-dev")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${xgpu_deb_depends}")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
