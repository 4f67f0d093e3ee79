// The cache's SHA-256 against the published FIPS 180-2 test vectors.
#include <string>

#include <catch2/catch.hpp>

#include "sha256.hpp"

using xgpu::detail::Sha256;

TEST_CASE("SHA-256 known answers") {
    CHECK(Sha256().update("").hex_digest() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(Sha256().update("abc").hex_digest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(Sha256().update("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").hex_digest() ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 million;
    const std::string chunk(1000, 'a');
    for (int i = 0; i < 1000; ++i)
        million.update(chunk);
    CHECK(million.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // Fields are length-prefixed: a different split is a different key.
    CHECK(Sha256().field("ab").field("c").hex_digest() != Sha256().field("a").field("bc").hex_digest());
}
