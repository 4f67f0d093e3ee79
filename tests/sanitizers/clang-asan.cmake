# CMake toolchain file: clang with AddressSanitizer and UndefinedBehaviorSanitizer (no recovery:
# the first report ends the program). Used for ./build-asan (scripts/asan-build.sh, RelWithDebInfo)
# and, through the CMAKE_TOOLCHAIN_FILE environment variable, for the Release builds the consumer
# test makes while scripts/sanitize.sh runs, so that an installed libxgpu and its users agree on
# the runtime.
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_CXX_FLAGS_INIT "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer")
# Optimisation levels as cache entries, so that the compiler's own defaults (-O3 -DNDEBUG for
# Release) do not replace them; NDEBUG stays undefined, assertions stay. -O1 with line tables gives
# exact stacks and builds in about half the time of -O2 -g on CI's two cores. Release is -O0: here
# it is only the consumer test's, which compiles the whole library again to run one small program.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only" CACHE STRING "tests/sanitizers/clang-asan.cmake")
set(CMAKE_CXX_FLAGS_DEBUG "-O1 -gline-tables-only" CACHE STRING "tests/sanitizers/clang-asan.cmake")
set(CMAKE_CXX_FLAGS_RELEASE "-O0 -gline-tables-only" CACHE STRING "tests/sanitizers/clang-asan.cmake")
set(CMAKE_CXX_FLAGS_MINSIZEREL "-O0 -gline-tables-only" CACHE STRING "tests/sanitizers/clang-asan.cmake")
