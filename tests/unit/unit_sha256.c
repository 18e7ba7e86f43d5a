/* unit_sha256.c - unit: SHA-256 against the FIPS 180-2 examples (empty,
 * "abc", the 448- and 896-bit messages, a million 'a' fed in uneven
 * pieces) and HMAC-SHA-256 against RFC 4231 test cases 1-4, 6 and 7 (the
 * message split into parts too); the constant-time compare. */
#include "tt.h"
#include "util/sha256.h"

static void hex(const uint8_t *d, char *out)
{
    for (unsigned i = 0; i < TLM_SHA256_LEN; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void check_sha(const char *what, const void *msg, size_t len,
                      const char *want)
{
    uint8_t d[TLM_SHA256_LEN];
    char got[2 * TLM_SHA256_LEN + 1];
    tlm_util_sha256(msg, len, d);
    hex(d, got);
    TT_ASSERT(strcmp(got, want) == 0, "sha256(%s) = %s, want %s", what, got,
              want);
}

static void check_hmac(const char *what, const void *key, size_t klen,
                       const char *msg, const char *want)
{
    uint8_t d[TLM_SHA256_LEN];
    char got[2 * TLM_SHA256_LEN + 1];
    size_t len = strlen(msg);
    const void *part[1] = {msg};
    tlm_util_hmac_sha256(key, klen, part, &len, 1, d);
    hex(d, got);
    TT_ASSERT(strcmp(got, want) == 0, "hmac %s = %s, want %s", what, got,
              want);
    /* the same message in three parts */
    size_t l3[3] = {len / 3, len / 3, len - 2 * (len / 3)};
    const void *p3[3] = {msg, msg + l3[0], msg + l3[0] + l3[1]};
    tlm_util_hmac_sha256(key, klen, p3, l3, 3, d);
    hex(d, got);
    TT_ASSERT(strcmp(got, want) == 0, "hmac %s in parts = %s, want %s", what,
              got, want);
}

int main(void)
{
    check_sha("empty", "", 0,
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha("abc", "abc", 3,
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha("448 bits", m448, strlen(m448),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                       "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check_sha("896 bits", m896, strlen(m896),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    /* a million 'a' in pieces of 1..97 bytes */
    static char a[100];
    memset(a, 'a', sizeof(a));
    tlm_sha256_t s;
    tlm_util_sha256_init(&s);
    size_t left = 1000000, piece = 1;
    while (left) {
        size_t n = piece < left ? piece : left;
        tlm_util_sha256_update(&s, a, n);
        left -= n;
        piece = piece % 97 + 1;
    }
    uint8_t d[TLM_SHA256_LEN];
    char got[2 * TLM_SHA256_LEN + 1];
    tlm_util_sha256_final(&s, d);
    hex(d, got);
    TT_ASSERT(strcmp(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e"
                          "046d39ccc7112cd0") == 0, "sha256(a x 1e6) = %s",
              got);

    uint8_t k[131];
    memset(k, 0x0b, 20);
    check_hmac("rfc4231 case 1", k, 20, "Hi There",
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    check_hmac("rfc4231 case 2", "Jefe", 4, "what do ya want for nothing?",
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    char data[51];
    memset(k, 0xaa, 20);
    memset(data, 0xdd, 50);
    data[50] = '\0';
    check_hmac("rfc4231 case 3", k, 20, data,
               "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
        k[i] = (uint8_t)(i + 1);
    memset(data, 0xcd, 50);
    check_hmac("rfc4231 case 4", k, 25, data,
               "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    memset(k, 0xaa, 131);
    check_hmac("rfc4231 case 6", k, 131,
               "Test Using Larger Than Block-Size Key - Hash Key First",
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    check_hmac("rfc4231 case 7", k, 131,
               "This is a test using a larger than block-size key and a "
               "larger than block-size data. The key needs to be hashed "
               "before being used by the HMAC algorithm.",
               "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");

    TT_ASSERT(tlm_util_equal_ct("abcd", "abcd", 4), "equal_ct: equal");
    TT_ASSERT(!tlm_util_equal_ct("abcd", "abce", 4), "equal_ct: last byte");
    TT_ASSERT(!tlm_util_equal_ct("xbcd", "abcd", 4), "equal_ct: first byte");
    TT_ASSERT(tlm_util_equal_ct("", "", 0), "equal_ct: empty");
    tt_log("PASS");
    return 0;
}
