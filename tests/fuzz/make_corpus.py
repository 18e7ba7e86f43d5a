#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpus of the fuzz targets into
tests/fuzz/corpus/{am,parse,pack}/ (small files, checked in; rerun after a
wire-format change).  Addresses in the am seeds are offsets into the
harness's registered region (fuzz_am.c adds its base)."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\xa5TLM"


def hdr(t, flags=0, aux=0, ident=0):
    return struct.pack("<BBHI", t, flags, aux, ident)


def frag(t, addr, total, off, flags=0, aux=0, ident=0):
    return hdr(t, flags, aux, ident) + struct.pack("<QQQ", addr, total, off)


def desc(levels, counts, strides):
    return struct.pack("<Q", levels) + b"".join(
        struct.pack("<Q", c) for c in counts) + b"".join(
        struct.pack("<Q", s) for s in strides)


def data(n, salt=0):
    return bytes((i * 7 + salt) & 0xff for i in range(n))


def am_seeds():
    s = {}
    s["put"] = frag(1, 0, 16, 0) + data(16)
    s["put_ack"] = frag(1, 64, 16, 0, flags=1, ident=5) + data(16)
    s["put_oor"] = frag(1, 4090, 16, 0) + data(16)
    s["put_frags"] = (frag(1, 128, 32, 0) + data(16) + SEP +
                      frag(1, 128, 32, 16) + data(16, 3))
    s["get"] = hdr(2, ident=7) + struct.pack("<QQ", 0, 64)
    s["get_big"] = hdr(2, ident=8) + struct.pack("<QQ", 0, 4096)
    s["get_oor"] = hdr(2, ident=9) + struct.pack("<QQ", 4000, 200)
    s["get_rep"] = frag(3, 0, 16, 0, ident=0x1001) + data(16)
    s["ack"] = hdr(4, aux=0, ident=0x1001)
    s["nack"] = hdr(5, aux=0xfffe) + struct.pack("<QQ", 0x1000, 8)
    s["flush"] = hdr(6, ident=1)
    s["flush_ack"] = hdr(7, ident=1)
    args2 = struct.pack("<II", 11, 22)
    s["user"] = frag(8, 0, 8, 0, aux=0 | 2 << 8) + args2 + data(8)
    s["user_reply"] = frag(8, 0, 8, 0, aux=1 | 2 << 8) + args2 + data(8)
    s["user_noargs"] = frag(8, 0, 0, 0, aux=1)
    s["user_unreg"] = frag(8, 0, 4, 0, aux=200) + data(4)
    s["user_long"] = frag(8, 256, 16, 0, flags=4, aux=0 | 1 << 8) + \
        struct.pack("<II", 1, 0) + data(16)
    s["user_frags"] = (frag(8, 0, 16, 0, aux=0, ident=3) + data(8) + SEP +
                       frag(8, 0, 16, 8, aux=0, ident=3) + data(8))
    s["coll"] = frag(9, 0, 8, 0, aux=0, ident=1) + data(8)
    d = desc(1, [4, 3], [16])
    s["puts"] = frag(10, 512, 12, 0) + d + data(12)
    s["puts_ack"] = frag(10, 512, 12, 0, flags=1, ident=4) + d + data(12)
    s["puts_acc"] = frag(10, 512, 12, 0, aux=1) + \
        struct.pack("<i", 1) + bytes(12) + d + data(12)
    d2 = desc(2, [8, 2, 3], [32, 128])
    s["puts_2d"] = frag(10, 1024, 48, 0) + d2 + data(48)
    s["gets"] = hdr(11, ident=12) + struct.pack("<QQ", 512, 12) + d
    s["gets_2d"] = hdr(11, ident=13) + struct.pack("<QQ", 1024, 48) + d2
    recs = struct.pack("<QQQQ", 0, 4, 100, 4)
    s["putv"] = frag(12, 2, 40, 0) + recs + data(8)
    s["putv_acc"] = frag(12, 2, 40, 0, aux=1) + struct.pack("<i", 2) + \
        bytes(12) + recs + data(8)
    s["putv_frags"] = (frag(12, 2, 40, 0) + recs[:16] + SEP +
                       frag(12, 2, 40, 16) + recs[16:] + data(8))
    s["getv"] = frag(13, 2, 32, 0, ident=14) + struct.pack("<Q", 8) + recs
    s["getv_frags"] = (frag(13, 2, 32, 0, ident=15) + struct.pack("<Q", 8) +
                       recs[:16] + SEP +
                       frag(13, 2, 32, 16, ident=15) + struct.pack("<Q", 8) +
                       recs[16:])
    s["rmw_add64"] = hdr(14, aux=0 | 8 << 4, ident=16) + \
        struct.pack("<QQQ", 8, 1, 0)
    s["rmw_cswap32"] = hdr(14, aux=2 | 4 << 4, ident=17) + \
        struct.pack("<QQQ", 16, 5, 0)
    s["rmw_rep"] = hdr(15, ident=16) + struct.pack("<Q", 0)
    s["mutex_lock"] = hdr(16, aux=1, ident=18) + struct.pack("<II", 0, 1)
    s["mutex_lock_unlock"] = (hdr(16, aux=1, ident=18) +
                              struct.pack("<II", 0, 1) + SEP +
                              hdr(16, aux=1, ident=19) +
                              struct.pack("<II", 0, 1) + SEP +
                              hdr(16, aux=3, ident=0) +
                              struct.pack("<II", 0, 1))
    s["mutex_rep"] = hdr(17, flags=1, ident=18)
    s["mixed"] = s["put"] + SEP + s["flush"] + SEP + s["get"]
    # Regressions of docs/hardening.md F1 (announced totals above the
    # per-source reassembly cap: refused, nothing kept) and F2 (AM and
    # collective fragments out of order, overlapping or repeated).
    s["coll_future"] = frag(9, 0, 8, 0, aux=0, ident=1000) + data(8)
    s["f1_coll_5x100m"] = SEP.join(
        frag(9, 0, 100 << 20, 0, ident=1000 + k) + data(8)
        for k in range(5))
    s["f1_user_16g"] = frag(8, 0, 16 << 30, 0, aux=0, ident=40) + data(8)
    s["f1_user_cap_then_ok"] = (frag(8, 0, 1 << 40, 0, aux=0, ident=41) +
                                data(8) + SEP +
                                frag(8, 0, 1 << 40, 8, aux=0, ident=41) +
                                data(8) + SEP + s["user_frags"])
    s["f1_putv_16g"] = frag(12, 1 << 30, 16 << 30, 0) + recs[:16]
    s["f1_getv_16g"] = (frag(13, 1 << 30, 16 << 30, 0, ident=42) +
                        struct.pack("<Q", 8) + recs[:16])
    s["f2_user_dup_first"] = (frag(8, 0, 16, 0, aux=0, ident=43) + data(8) +
                              SEP + frag(8, 0, 16, 0, aux=0, ident=43) +
                              data(8) + SEP +
                              frag(8, 0, 16, 8, aux=0, ident=43) + data(8))
    s["f2_user_overlap"] = (frag(8, 0, 16, 0, aux=0, ident=44) + data(8) +
                            SEP + frag(8, 0, 16, 4, aux=0, ident=44) +
                            data(12))
    s["f2_user_dup_mid"] = (frag(8, 0, 24, 0, aux=0, ident=45) + data(8) +
                            SEP + frag(8, 0, 24, 8, aux=0, ident=45) +
                            data(8) + SEP +
                            frag(8, 0, 24, 8, aux=0, ident=45) + data(8) +
                            SEP + s["user_frags"])
    s["f2_long_dup_last"] = SEP.join(
        frag(8, 256, 16, off, flags=4, aux=0 | 1 << 8, ident=46) +
        struct.pack("<II", 1, 0) + data(8) for off in (0, 8, 8))
    s["f2_long_gap"] = SEP.join(
        frag(8, 256, 24, off, flags=4, aux=0, ident=47) + data(8)
        for off in (0, 16))
    s["f2_coll_overlap"] = (frag(9, 0, 16, 0, ident=1001) + data(8) + SEP +
                            frag(9, 0, 16, 4, ident=1001) + data(12))
    return s


def parse_seeds():
    vals = [(0, "16k"), (0, "4M"), (0, "2g"), (0, "1tib"), (0, "8KB"),
            (0, "0"), (0, "18446744073709551615"), (1, "123"), (1, "-5"),
            (1, "9223372036854775807"), (2, "yes"), (2, "off"), (2, "TRUE"),
            (3, "1.5"), (3, "200ms"), (3, "2m"), (3, "1h"), (3, ".5us"), (3, "1e307h"),
            (4, "warn"), (4, "TRACE"), (5, "16k")]
    return {"%d_%s" % (k, v.replace(".", "_")): bytes([k]) + v.encode()
            for k, v in vals}


def pack_seeds():
    rng = struct.pack("<QQ", 3, 20)
    s = {}
    s["wire_1d"] = b"\x00" + desc(1, [4, 3], [16]) + rng
    s["wire_2d"] = b"\x00" + desc(2, [8, 2, 3], [32, 128]) + rng
    s["wire_contig"] = b"\x00" + desc(0, [100], []) + rng
    s["wire_empty"] = b"\x00" + desc(0, [0], [])
    s["wire_overlap"] = b"\x00" + desc(1, [8, 4], [4]) + rng
    s["wire_merge"] = b"\x00" + desc(2, [4, 4, 2], [4, 64]) + rng
    s["wire_8"] = b"\x00" + desc(8, [2] * 9, [4 << k for k in range(8)])
    s["norm_2d"] = bytes([1, 2, 5, 3, 2, 20, 100, 12, 80]) + rng
    s["norm_merge"] = bytes([1, 3, 4, 2, 2, 2, 4, 8, 16, 4, 8, 16])
    s["norm_8"] = bytes([1, 8, 3] + [2] * 8 + list(range(3, 19)))
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    for name, seeds in (("am", am_seeds()), ("parse", parse_seeds()),
                        ("pack", pack_seeds())):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for k, v in seeds.items():
            with open(os.path.join(d, "seed_" + k), "wb") as f:
                f.write(v)
        print("%s: %d seeds" % (d, len(seeds)))


if __name__ == "__main__":
    main()
