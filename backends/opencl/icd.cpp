// Which OpenCL drivers (ICDs) the ICD loader is given, decided once before its first call: the
// ICDs registered on the system, else a fallback ICD (XGPU_OPENCL_FALLBACK_ICD: the Python module
// names PoCL's wheel there, as pip install xgpu[pocl] brings it). The rules are ocl-icd's, the
// loader xgpu links (Debian's libOpenCL.so.1, and the copy the binary wheel carries): it reads
// OCL_ICD_VENDORS (a folder of .icd files, one .icd file or one library) or else
// /etc/OpenCL/vendors, and adds the libraries of OCL_ICD_FILENAMES. It reads them once, at its
// first call, so the fallback is given to it through OCL_ICD_VENDORS before that.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {
namespace {

namespace fs = std::filesystem;

std::string getenv_string(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The ICDs the loader would read by itself, one line each (an .icd file and the library it names).
std::vector<std::string> registered(std::string& where) {
    std::vector<std::string> out;
    where = getenv_string("OCL_ICD_VENDORS");
    if (where.empty()) where = "/etc/OpenCL/vendors";
    std::error_code ec;
    if (fs::is_directory(where, ec)) {
        std::vector<fs::path> files;
        for (const auto& entry : fs::directory_iterator(where, ec))
            if (entry.path().extension() == ".icd") files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            std::ifstream in(f);
            std::string library;
            std::getline(in, library);
            out.push_back(fmt::format("{} ({})", f.string(), library));
        }
    } else if (fs::exists(where, ec)) {
        out.push_back(where + " (OCL_ICD_VENDORS)");
    }
    const std::string names = getenv_string("OCL_ICD_FILENAMES");
    for (std::size_t begin = 0; begin < names.size();) {
        const std::size_t end = std::min(names.find(':', begin), names.size());
        if (end > begin) out.push_back(names.substr(begin, end - begin) + " (OCL_ICD_FILENAMES)");
        begin = end + 1;
    }
    return out;
}

struct Choice {
    std::once_flag once;
    std::vector<std::string> lines; // what the loader was given, for libraries()
};

Choice& choice() {
    static Choice c;
    return c;
}

void decide(std::vector<std::string>& lines) {
    const std::string mode = lower(getenv_string("XGPU_OPENCL_ICD"));
    if (!mode.empty() && mode != "auto" && mode != "system" && mode != "fallback")
        throw InvalidArgument(fmt::format("xgpu: XGPU_OPENCL_ICD='{}' is not one of auto, system, fallback",
                                          getenv_string("XGPU_OPENCL_ICD")));
    const std::string fallback = getenv_string("XGPU_OPENCL_FALLBACK_ICD");
    if (mode == "fallback" && fallback.empty())
        throw InvalidArgument("xgpu: XGPU_OPENCL_ICD=fallback, but no fallback ICD is named "
                              "(XGPU_OPENCL_FALLBACK_ICD; from Python: pip install xgpu[pocl])");
    std::string where;
    const auto system = registered(where);
    std::error_code ec;
    if (!fallback.empty() && (mode == "fallback" || (mode != "system" && system.empty()))) {
        if (!fs::exists(fallback, ec)) {
            lines.push_back(fmt::format("fallback ICD {} (XGPU_OPENCL_FALLBACK_ICD) not found", fallback));
        } else {
            // The fallback alone: what OCL_ICD_VENDORS names replaces the system's folder.
            setenv("OCL_ICD_VENDORS", fallback.c_str(), 1);
            unsetenv("OCL_ICD_FILENAMES");
            lines.push_back(
                fmt::format("ICD: {} (XGPU_OPENCL_FALLBACK_ICD; {})", fallback,
                            mode == "fallback" ? "XGPU_OPENCL_ICD=fallback" : "no ICD registered in " + where));
            return;
        }
    }
    for (const auto& s : system)
        lines.push_back("ICD: " + s);
    if (system.empty()) lines.push_back("ICD: none registered in " + where);
}

} // namespace

void choose_icds() {
    auto& c = choice();
    std::call_once(c.once, [&] {
        std::vector<std::string> lines;
        decide(lines); // an invalid XGPU_OPENCL_ICD throws here, and is read again next time
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&clGetPlatformIDs), &info) && info.dli_fname) {
            std::error_code ec;
            const auto path = fs::weakly_canonical(info.dli_fname, ec);
            lines.insert(lines.begin(), fmt::format("ICD loader: {}", ec ? info.dli_fname : path.string()));
        }
        c.lines = std::move(lines);
    });
}

std::vector<std::string> icd_libraries() {
    try {
        choose_icds();
    } catch (const Error& e) {
        return {e.what()};
    }
    return choice().lines;
}

} // namespace xgpu::opencl
