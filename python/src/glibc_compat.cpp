// The binary wheel links libstdc++ into the extension (XGPU_PYTHON_STATIC_RUNTIME), so that it
// loads whatever libstdc++ a machine has. Built against glibc 2.36 or later, libstdc++'s
// std::random_device draws from arc4random, which older glibc lacks (2.36 added it): this
// definition, hidden inside the extension, is the one that copy of libstdc++ binds to, and the
// wheel then needs glibc 2.34 only. The numbers come from the kernel, as glibc's own arc4random's.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <sys/random.h>

extern "C" std::uint32_t arc4random(void) {
    std::uint32_t value = 0;
    for (;;) {
        const ssize_t n = getrandom(&value, sizeof value, 0);
        if (n == ssize_t(sizeof value)) return value;
        if (n < 0 && errno != EINTR) std::abort(); // as glibc's arc4random: it cannot fail
    }
}
