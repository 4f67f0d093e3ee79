# Documentation that cannot rot: every fenced ```cpp block of the given Markdown pages becomes a
# test. Included from tests/CMakeLists.txt; runs at configure time, and again whenever a page
# changes (the pages are CMAKE_CONFIGURE_DEPENDS).
#
# Each block must be a complete program: its #include lines, then code with an `int main()` that
# returns nonzero (or throws) on a wrong answer. All blocks of one page are compiled into one
# executable, doc_<page>, so the headers are parsed once per page: the #include lines of every
# block are hoisted to the top, each block's code is wrapped in `namespace doc_<page>_<n>`, and a
# generated ::main runs the block named by its argument. ctest runs one test per block,
# doc_<page>_<n> (n counts the page's cpp blocks from 1), e.g. `ctest -R doc_readme_1`.
#
# Rules for a block: `int main()` with every path returning (a block's main is an ordinary
# function in its namespace, so falling off its end is an error, which -Werror=return-type turns
# into a compile error); no macros that must precede an #include; nothing it writes outside the
# working directory (the test's own build folder). A page whose blocks include
# <xgpu/distributed.hpp> is linked with xgpu::distributed and runs in one process (MPI's singleton
# start, no mpiexec); where the distributed layer is not built, its blocks are not tested.

# The page's name as used in target and test names: README.md -> readme, docs/sparse-io.md -> sparse_io.
function(_xgpu_doc_page_name path out)
  get_filename_component(stem "${path}" NAME_WE)
  string(TOLOWER "${stem}" stem)
  string(MAKE_C_IDENTIFIER "${stem}" stem)
  set(${out} "${stem}" PARENT_SCOPE)
endfunction()

# Splits `page_text` into its ```cpp blocks: sets <prefix>_COUNT and <prefix>_<n> (1-based) in the
# caller. Works on the text with string(FIND)/string(SUBSTRING) only, so semicolons and brackets
# in the code are never taken for CMake list separators.
function(_xgpu_doc_blocks page_text prefix)
  set(rest "${page_text}")
  set(count 0)
  set(open "```cpp\n")
  string(LENGTH "${open}" open_length)
  while(TRUE)
    string(FIND "${rest}" "${open}" at)
    if(at EQUAL -1)
      break()
    endif()
    # Only a fence at the start of a line opens a block.
    if(at GREATER 0)
      math(EXPR before "${at} - 1")
      string(SUBSTRING "${rest}" ${before} 1 previous)
      if(NOT previous STREQUAL "\n")
        math(EXPR skip "${at} + ${open_length}")
        string(SUBSTRING "${rest}" ${skip} -1 rest)
        continue()
      endif()
    endif()
    math(EXPR start "${at} + ${open_length}")
    string(SUBSTRING "${rest}" ${start} -1 rest)
    string(FIND "${rest}" "\n```" end)
    if(end EQUAL -1)
      message(FATAL_ERROR "xgpu doc examples: an unclosed ```cpp block in ${prefix}")
    endif()
    math(EXPR count "${count} + 1")
    math(EXPR end_with_newline "${end} + 1")
    string(SUBSTRING "${rest}" 0 ${end_with_newline} block)
    set(${prefix}_${count} "${block}" PARENT_SCOPE)
    math(EXPR skip "${end} + 4")
    string(SUBSTRING "${rest}" ${skip} -1 rest)
  endwhile()
  set(${prefix}_COUNT ${count} PARENT_SCOPE)
endfunction()

# Separates a block's #include lines from the rest: sets `includes_out` and `code_out`.
function(_xgpu_doc_split block includes_out code_out)
  set(includes "")
  set(code "")
  set(rest "${block}")
  while(NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" eol)
    if(eol EQUAL -1)
      set(line "${rest}")
      set(rest "")
    else()
      string(SUBSTRING "${rest}" 0 ${eol} line)
      math(EXPR next "${eol} + 1")
      string(SUBSTRING "${rest}" ${next} -1 rest)
    endif()
    string(REGEX MATCH "^[ \t]*#[ \t]*include[ \t]*[<\"]" is_include "${line}")
    if(is_include)
      string(APPEND includes "${line}\n")
    else()
      string(APPEND code "${line}\n")
    endif()
  endwhile()
  set(${includes_out} "${includes}" PARENT_SCOPE)
  set(${code_out} "${code}" PARENT_SCOPE)
endfunction()

# xgpu_add_doc_examples(<page.md>...): an executable doc_<page> and tests doc_<page>_<n> for
# every page that has ```cpp blocks.
function(xgpu_add_doc_examples)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/doc_examples")
  file(MAKE_DIRECTORY "${out_dir}")
  foreach(page IN LISTS ARGN)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${page}")
    file(READ "${page}" text)
    _xgpu_doc_page_name("${page}" name)
    _xgpu_doc_blocks("${text}" block)
    if(block_COUNT EQUAL 0)
      continue()
    endif()
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${page}")
    set(includes "")
    set(bodies "")
    set(dispatch "")
    foreach(n RANGE 1 ${block_COUNT})
      _xgpu_doc_split("${block_${n}}" block_includes block_code)
      string(APPEND includes "${block_includes}")
      string(APPEND bodies "// ${shown}, cpp block ${n}\nnamespace doc_${name}_${n} {\n${block_code}} // namespace doc_${name}_${n}\n\n")
      string(APPEND dispatch "        if (which == \"${n}\") return doc_${name}_${n}::main();\n")
    endforeach()
    string(FIND "${includes}" "xgpu/distributed.hpp" uses_mpi)
    if(NOT uses_mpi EQUAL -1 AND NOT TARGET xgpu_distributed)
      message(STATUS "xgpu: ${shown}'s examples need the distributed layer (MPI): not tested")
      continue()
    endif()
    set(source "// Generated by cmake/doc_examples.cmake from ${shown}: edit the page, not this file.\n")
    string(APPEND source "${includes}#include <exception>\n#include <iostream>\n#include <string>\n\n${bodies}")
    string(APPEND source "int main(int argc, char** argv) {\n    const std::string which = argc > 1 ? argv[1] : \"\";\n")
    string(APPEND source "    try {\n${dispatch}    } catch (const std::exception& e) {\n")
    string(APPEND source "        std::cerr << \"${shown} cpp block \" << which << \": \" << e.what() << \"\\n\";\n        return 1;\n    }\n")
    string(APPEND source "    std::cerr << \"${shown} has no cpp block '\" << which << \"'\\n\";\n    return 2;\n}\n")
    # Written through a temporary and copied only when it changed, so that re-running the
    # configure step does not rebuild unchanged pages.
    file(WRITE "${out_dir}/doc_${name}.cpp.new" "${source}")
    configure_file("${out_dir}/doc_${name}.cpp.new" "${out_dir}/doc_${name}.cpp" COPYONLY)
    add_executable(doc_${name} "${out_dir}/doc_${name}.cpp")
    target_link_libraries(doc_${name} PRIVATE xgpu::xgpu)
    if(NOT uses_mpi EQUAL -1)
      target_link_libraries(doc_${name} PRIVATE xgpu::distributed)
    endif()
    target_compile_options(doc_${name} PRIVATE -Werror=return-type)
    foreach(n RANGE 1 ${block_COUNT})
      add_test(NAME doc_${name}_${n} COMMAND doc_${name} ${n} WORKING_DIRECTORY "${out_dir}")
    endforeach()
  endforeach()
endfunction()
